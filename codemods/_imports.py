"""Adds the imports a migration needs to a module: at its top, as libcst's AddImportsVisitor would, in place; or,
when the module imports TensorFlow only inside a guard or a function, beside that import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

import libcst as cst
from libcst.helpers import get_absolute_module_from_package_for_import

from ._values import full_name

# (module, object or None, local alias or None): `import module` or `from module import object [as alias]`.
Needed = tuple[str, Optional[str], Optional[str]]
_Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


def _skips_first(module: cst.Module) -> bool:
    """Whether the module opens with a docstring or a `__strict__` flag, which imports never go above."""
    if not module.body or not isinstance(module.body[0], cst.SimpleStatementLine):
        return False
    body = module.body[0].body
    if len(body) != 1:
        return False
    small = body[0]
    if isinstance(small, cst.Expr):
        return isinstance(small.value, cst.SimpleString)
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "__strict__"
    )


def one_import_line(statement: cst.CSTNode) -> bool:
    """Whether `statement` is a line holding one import and nothing else."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
    )


def _top_imports(module: cst.Module, first: int) -> list[cst.Import | cst.ImportFrom]:
    """The one-import lines that open the module (after `first` statements), as the import statements."""
    out: list[cst.Import | cst.ImportFrom] = []
    for statement in module.body[first:]:
        if not one_import_line(statement):
            break
        small = cst.ensure_type(statement, cst.SimpleStatementLine).body[0]
        assert isinstance(small, (cst.Import, cst.ImportFrom))  # as `one_import_line` found
        out.append(small)
    return out


def _with_empty_line(statements: list[_Statement]) -> list[_Statement]:
    """Puts an empty line before the first statement after the imports, unless one is there."""
    if not statements:
        return statements
    first = statements[0]
    if first.leading_lines and first.leading_lines[0].comment is None:
        return statements
    return [first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines)), *statements[1:]]


def add_imports(module: cst.Module, needed: Sequence[Needed], package: str | None) -> cst.Module:
    """Returns `module` with each needed import it lacks where it imports TensorFlow.

    That is the module's top, unless every TensorFlow (or Keras) import of the module sits in a block (a `try`
    that falls back without TensorFlow, a function that imports it when called): then the new imports go right
    after the first of those, in its block, so the module still imports without TensorFlow. A function's block
    is taken only if the names the new imports bind are used nowhere outside it.
    """
    beside = _guarded_framework_import(module, needed)
    if beside is not None and not any(mod == "__future__" for mod, _, _ in needed):
        return module.visit(_InsertAfter(*beside, needed, module.config_for_parsing))
    return _add_at_top(module, needed, package)


_FRAMEWORKS = frozenset({"tensorflow", "keras", "tf_keras"})


def _imports_framework(statement: cst.CSTNode) -> bool:
    """Whether `statement` is a line importing TensorFlow, Keras or tf_keras (or a module of theirs)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import):
            if any(alias.evaluated_name.split(".")[0] in _FRAMEWORKS for alias in small.names):
                return True
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            if (full_name(small.module) or "").split(".")[0] in _FRAMEWORKS:
                return True
    return False


class _FirstFrameworkImport(cst.CSTVisitor):
    """Finds the first line importing TensorFlow, with its indented block and innermost function or class."""

    def __init__(self) -> None:
        super().__init__()
        self.found: tuple[cst.SimpleStatementLine, cst.IndentedBlock | None, cst.CSTNode | None] | None = None
        self._blocks: list[cst.IndentedBlock] = []
        self._scopes: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None or isinstance(node, cst.BaseExpression):
            return False
        if isinstance(node, cst.SimpleStatementLine) and _imports_framework(node):
            block = self._blocks[-1] if self._blocks else None
            self.found = (node, block, self._scopes[-1] if self._scopes else None)
            return False
        if isinstance(node, cst.IndentedBlock):
            self._blocks.append(node)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self._scopes.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self._blocks and original_node is self._blocks[-1]:
            self._blocks.pop()
        elif self._scopes and original_node is self._scopes[-1]:
            self._scopes.pop()


def _bound_names(needed: Sequence[Needed]) -> set[str]:
    """The names the needed imports bind."""
    return {alias or (obj if obj is not None else mod.split(".")[0]) for mod, obj, alias in needed}


def _used_outside(module: cst.Module, scope: cst.CSTNode, names: set[str]) -> bool:
    """Whether a name in `names` appears in `module` outside `scope`."""
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in names:
            return True
        stack.extend(child for child in node.children if child is not scope)
    return False


def _guarded_framework_import(
    module: cst.Module, needed: Sequence[Needed]
) -> tuple[cst.IndentedBlock, cst.SimpleStatementLine] | None:
    """The block and line of the module's first TensorFlow import, when no TensorFlow import is at its top level
    and the new imports may go beside it; else None."""
    if any(_imports_framework(statement) for statement in module.body):
        return None
    finder = _FirstFrameworkImport()
    module.visit(finder)
    if finder.found is None:
        return None
    line, block, scope = finder.found
    if block is None:
        return None
    if isinstance(scope, cst.ClassDef):
        return None  # a class body's names are not seen by its methods
    if scope is not None and _used_outside(module, scope, _bound_names(needed)):
        return None
    return block, line


class _InsertAfter(cst.CSTTransformer):
    """Puts the needed imports right after `line` in `block`."""

    def __init__(
        self,
        block: cst.IndentedBlock,
        line: cst.SimpleStatementLine,
        needed: Sequence[Needed],
        config: cst.PartialParserConfig,
    ) -> None:
        super().__init__()
        self.block, self.line, self.needed, self.config = block, line, needed, config

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if original_node is not self.block:
            return updated_node
        # a name the block binds already is a clash, which the plan refuses: no import here is present
        modules, objects, aliased = _wanted(self.needed)
        plain, from_lines = _statements(modules, objects, aliased, self.config)
        after = next(index for index, statement in enumerate(original_node.body) if statement is self.line) + 1
        body = [*updated_node.body[:after], *plain, *from_lines.values(), *updated_node.body[after:]]
        return updated_node.with_changes(body=body)


def _statements(
    modules: set[str],
    objects: dict[str, set[str]],
    aliased: dict[str, list[tuple[str, str]]],
    config: cst.PartialParserConfig,
) -> tuple[list[cst.BaseStatement], dict[str, cst.BaseStatement]]:
    """The wanted imports as statements of the module's style: the plain imports (sorted), and one from-import
    per module, by module (each line's names sorted)."""
    merged: dict[str, list[tuple[str, str | None]]] = {}
    for mod, pairs in aliased.items():
        merged.setdefault(mod, []).extend(pairs)
    for mod, objs in objects.items():
        merged.setdefault(mod, []).extend((obj, None) for obj in objs)
    from_lines: dict[str, cst.BaseStatement] = {
        mod: cst.parse_statement(
            f"from {mod} import "
            + ", ".join(obj if alias is None else f"{obj} as {alias}" for obj, alias in sorted(pairs)),
            config=config,
        )
        for mod, pairs in merged.items()
    }
    return [cst.parse_statement(f"import {mod}", config=config) for mod in sorted(modules)], from_lines


def _add_at_top(module: cst.Module, needed: Sequence[Needed], package: str | None) -> cst.Module:
    """Returns `module` with each needed import that its opening imports lack.

    A `from m import x` joins the first opening `from m import ...` line when there is one; the
    rest go, one line each, after the opening imports (sorted: plain imports, then from-imports).
    """
    modules, objects, aliased = _wanted(needed)
    first = 1 if _skips_first(module) else 0
    top = _top_imports(module, first)
    _drop_present(top, package, modules, objects, aliased)
    body = _join_opening_lines(list(module.body), first, len(top), package, objects, aliased)
    if not modules and not objects and not aliased:
        return module.with_changes(body=body)

    end = first + len(top)
    plain, from_lines = _statements(modules, objects, aliased, module.config_for_parsing)
    return module.with_changes(
        body=(
            *body[:first],
            *[line for mod, line in from_lines.items() if mod == "__future__"],
            *body[first:end],
            *plain,
            *[line for mod, line in from_lines.items() if mod != "__future__"],
            *_with_empty_line(body[end:]),
        )
    )


_Wanted = tuple[set[str], dict[str, set[str]], dict[str, list[tuple[str, str]]]]


def _wanted(needed: Sequence[Needed]) -> _Wanted:
    """The needed imports: plain modules, `from m import x` names by module, `from m import x as y` pairs."""
    modules: set[str] = {mod for mod, obj, alias in needed if obj is None and alias is None}
    objects: dict[str, set[str]] = {}
    for wanted in sorted({mod for mod, obj, alias in needed if obj is not None and alias is None}):
        objects[wanted] = {obj for m, obj, alias in needed if m == wanted and obj is not None and alias is None}
    aliased: dict[str, list[tuple[str, str]]] = {}
    for wanted in sorted({mod for mod, obj, alias in needed if obj is not None and alias is not None}):
        aliased[wanted] = [
            (obj, alias) for m, obj, alias in needed if m == wanted and obj is not None and alias is not None
        ]
    return modules, objects, aliased


def _drop_present(
    top: Sequence[cst.Import | cst.ImportFrom],
    package: str | None,
    modules: set[str],
    objects: dict[str, set[str]],
    aliased: dict[str, list[tuple[str, str]]],
) -> None:
    """Removes from the wanted imports those the opening imports `top` already make."""
    have_objects: dict[str, set[str]] = {}
    for statement in top:
        if isinstance(statement, cst.Import):
            for name in statement.names:
                if name.asname is None:
                    modules.discard(name.evaluated_name)
            continue
        mod = get_absolute_module_from_package_for_import(package, statement)
        if mod is None:
            continue
        if isinstance(statement.names, cst.ImportStar):
            have_objects[mod] = {"*"}
            continue
        for name in statement.names:
            if name.asname is not None and mod in aliased:
                pair = (name.evaluated_name, name.evaluated_alias)
                if pair in aliased[mod]:
                    aliased[mod].remove(pair)
                    if not aliased[mod]:
                        del aliased[mod]
        plain = {name.evaluated_name for name in statement.names if name.asname is None}
        if plain:
            if "*" in have_objects.setdefault(mod, set()):
                continue
            have_objects[mod].update(plain)
    _drop_present_objects(objects, have_objects)


def _drop_present_objects(objects: dict[str, set[str]], have_objects: dict[str, set[str]]) -> None:
    """Removes from `objects` the names the opening from-imports already import (all of them, for a `*`)."""
    for mod, have in have_objects.items():
        if mod not in objects:
            continue
        if "*" in have:
            del objects[mod]
        else:
            objects[mod] = objects[mod] - have
            if not objects[mod]:
                del objects[mod]


def _join_opening_lines(
    body: list[_Statement],
    first: int,
    count: int,
    package: str | None,
    objects: dict[str, set[str]],
    aliased: dict[str, list[tuple[str, str]]],
) -> list[_Statement]:
    """Joins the wanted names of a module to an opening `from m import ...` of the same module (taking them out
    of `objects` and `aliased`); returns the new body."""
    for index, line in enumerate(body[first : first + count], start=first):
        assert isinstance(line, cst.SimpleStatementLine)  # as `_top_imports` found it
        small = line.body[0]
        if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
            continue
        mod = get_absolute_module_from_package_for_import(package, small)
        if mod is None or (mod not in objects and mod not in aliased):
            continue
        joined = sorted(objects.pop(mod, ()))
        pairs = sorted(aliased.pop(mod, ()))
        names = [
            *(cst.ImportAlias(name=cst.Name(obj)) for obj in joined),
            *(cst.ImportAlias(name=cst.Name(obj), asname=cst.AsName(name=cst.Name(alias))) for obj, alias in pairs),
            *small.names,
        ]
        body[index] = line.with_changes(body=[small.with_changes(names=names)])
    return body
