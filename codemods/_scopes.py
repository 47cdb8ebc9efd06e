"""Scopes, bindings and name uses: the answers libcst's ScopeProvider gives, for what the codemod asks.

One walk over the module records, per scope, each binding (assignment, import, def, class, parameter) with its
position among the scope's bindings, and each use of a name, unresolved. Which bindings a use sees, and which uses a
binding has, are worked out for one first name at a time, only when asked (`_Tracker.infer`, `Binding.references`):
most names of a module are never asked about. Neither is stored pair by pair: a use sees a prefix of one scope's
bindings of its name, and a binding's uses are slices of its name's uses grouped by scope, so a name bound in each of
n notebook cells costs n steps, not n * n. It follows libcst 1.x's scope rules (`tests/migrate/test_scopes.py`; why
ours: codemod.md):

- A use sees the bindings of its name in the nearest enclosing scope that has any, skipping class scopes from inside
  nested functions; `global`/`nonlocal` redirect a name to the module or the enclosing scope. In its own scope it
  sees only the bindings made before it, and if there are none, those of the parent scope.
- Bindings are ordered by a per-scope counter that moves on after each binding statement and after a `for` target,
  as libcst's scope visitor counts them; the walk visits a function's parameters and body before its decorators and
  return annotation, a class's decorators and bases before its body, and a comprehension's first iterable outside
  its scope, in that visitor's order.
- A dotted use (`a.b.c`) is a use of the longest dotted prefix that an import binds (`import a.b`),
  else of its first name. String annotations are parsed, and their names are uses of the string.
"""

from __future__ import annotations

import builtins
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator
from typing import Any, Generic, TypeVar

import libcst as cst
from libcst.metadata import QualifiedName, QualifiedNameSource

from ._fields import holds_no_name, named_children
from ._scope_lookup import Access, Group, Seen, qualified_under
from ._values import full_name, named_prefixes

_T = TypeVar("_T")
_LOCAL, _IMPORT, _BUILTIN = QualifiedNameSource.LOCAL, QualifiedNameSource.IMPORT, QualifiedNameSource.BUILTIN


class Binding:
    """A name bound in a scope by `node` (a Name, Param, FunctionDef, ClassDef, Import or ImportFrom)."""

    __slots__ = ("_index", "_own_names", "_references", "name", "node", "scope")

    def __init__(self, name: str, scope: Scope, node: cst.CSTNode | None, index: int) -> None:
        self.name = name
        self.scope = scope
        self.node = node
        self._index = index
        self._references: dict[Access, None] | None = None
        self._own_names: frozenset[QualifiedName] | None = None

    def own_qualified_names(self) -> frozenset[QualifiedName]:
        """`qualified_names(self.name)`, worked out once: a use may see many bindings of its name."""
        if self._own_names is None:
            self._own_names = frozenset(self.qualified_names(self.name))
        return self._own_names

    @property
    def references(self) -> Collection[Access]:
        """The uses that may see this binding, worked out on the first question.

        As libcst records them: a use in the binding's scope after it, a use elsewhere that resolves to the binding's
        scope, and a use made before every binding of its own scope that falls back to this (an outer) binding.
        """
        tracker = self.scope.tracker
        tracker.infer(self.name.partition(".")[0])
        if self._references is None:
            groups = tracker.groups.get(self.name, ())
            self._references = {use: None for group in groups for use in group.uses_of(self)}
        return self._references.keys()

    def qualified_names(self, dotted: str) -> set[QualifiedName]:
        prefix = self.scope.name_prefix
        return {QualifiedName(f"{prefix}.{dotted}" if prefix else dotted, _LOCAL)}


class BuiltinBinding(Binding):
    """A builtin (`float`, `print`): what a name means when nothing in the module binds it."""

    __slots__ = ()

    def qualified_names(self, dotted: str) -> set[QualifiedName]:
        return {QualifiedName(f"builtins.{self.name}", _BUILTIN)}


class ImportBinding(Binding):
    """A name bound by an import: its qualified name is the imported one."""

    __slots__ = ()

    def qualified_names(self, dotted: str) -> set[QualifiedName]:
        node = self.node
        assert isinstance(node, (cst.Import, cst.ImportFrom))
        module = ""
        if isinstance(node, cst.ImportFrom):
            module = "." * len(node.relative) + (full_name(node.module) or "" if node.module else "")
        out: set[QualifiedName] = set()
        if isinstance(node.names, cst.ImportStar):
            return out
        for alias in node.names:
            imported = full_name(alias.name)
            if not imported:
                continue
            parts = imported.split(".")
            for end in range(len(parts), 0, -1):  # `import a.b.c` binds `a.b.c`, `a.b` and `a`
                real = ".".join(parts[:end])
                local = alias.evaluated_alias if alias.asname is not None else real
                if module:
                    real = f"{module}{real}" if module.endswith(".") else f"{module}.{real}"
                if local is None or not dotted.startswith(local):
                    continue
                rest = dotted[len(local) :]
                if rest and not rest.startswith("."):
                    continue
                rest = rest.lstrip(".")
                out.add(QualifiedName(f"{real}.{rest}" if rest else real, _IMPORT))
                break
        return out


class _Lookup(Generic[_T]):
    """Indexed by a name, or by a Name or Attribute node standing for its dotted name."""

    __slots__ = ("_find",)

    def __init__(self, find: Callable[[str], list[_T]]) -> None:
        self._find = find

    def __getitem__(self, key: str | cst.CSTNode) -> list[_T]:
        name = key if isinstance(key, str) else full_name(key)
        return self._find(name) if name is not None else []


class Scope:
    """The module, a function (or lambda), a class or a comprehension: the names bound in it, and their uses."""

    def __init__(self, parent: Scope | None, tracker: _Tracker, name: str | None = None) -> None:
        self.parent: Scope = parent if parent is not None else self
        self.tracker = tracker
        tracker.scopes.append(self)
        self.name = name
        self._bindings: dict[str, dict[Binding, None]] = {}
        self._count = 0
        self._redirects: dict[str, Scope] = {}
        self._uses_by_name: dict[str, list[Access]] = {}
        self._uses_by_node: dict[cst.CSTNode, list[Access]] = {}
        self._lookups: dict[tuple[Any, ...], Any] = {}  # _scope_lookup's, for the bindings made here
        self.name_prefix = self._prefix()

    def _prefix(self) -> str:
        return ""

    @property
    def bound_names(self) -> list[str]:
        """The names bound in this scope itself."""
        return list(self._bindings)

    # --- recording (the walk)
    def _target(self, name: str) -> Scope:
        redirect = self._redirects.get(name)
        return self if redirect is None else self._next_visible(self, redirect)._target(name)

    def bind(self, name: str, node: cst.CSTNode, kind: type[Binding] = Binding) -> None:
        target = self._target(name)
        target._bindings.setdefault(name, {})[kind(name, target, node, target._count)] = None

    # --- lookup
    def _visible_from(self, scope: Scope) -> bool:
        return True

    def _next_visible(self, start: Scope, first: Scope | None = None) -> Scope:
        parent = first if first is not None else self.parent
        while not parent._visible_from(start):
            parent = parent.parent
        return parent

    def _resolve(self, name: str, start: Scope) -> Collection[Binding]:
        redirect = self._redirects.get(name)
        if redirect is not None:
            return self._next_visible(start, redirect)._resolve(name, start)
        bound = self._bindings.get(name)
        if bound is not None:
            return bound
        return self._next_visible(start)._resolve(name, start)

    def __contains__(self, name: str) -> bool:
        redirect = self._redirects.get(name)
        if redirect is not None:
            return name in redirect
        if self._bindings.get(name):
            return True
        return name in self._next_visible(self)

    def __getitem__(self, name: str) -> Collection[Binding]:
        """Every binding `name` may stand for here."""
        return self._resolve(name, self)

    @property
    def assignments(self) -> _Lookup[Binding]:
        """`scope.assignments[name]`: the bindings of a name (or of a Name node's) made in this scope itself."""
        return _Lookup(self._bindings_of)

    @property
    def accesses(self) -> _Lookup[Access]:
        """`scope.accesses[name]`: the uses of a name (dotted for an import's dotted binding) in this scope itself."""
        return _Lookup(self._uses_of)

    def _bindings_of(self, name: str) -> list[Binding]:
        return list(self._bindings.get(name, ()))

    def _uses_of(self, name: str) -> list[Access]:
        self.tracker.infer(name.partition(".")[0])
        return self._uses_by_name.get(name, [])

    def get_qualified_names_for(self, node: cst.CSTNode) -> set[QualifiedName]:
        """The qualified names `node` (a Name, Attribute or Call) may stand for: imported, local or builtin."""
        if isinstance(node, (cst.Name, cst.Attribute)):
            full = full_name(node)
            if full is not None:
                self.tracker.infer(full.partition(".")[0])
            uses = self._uses_by_node.get(node)
            if uses:
                return set().union(*(use.qualified_names() for use in uses))
        return self._qualified_by_prefix(node)

    def _qualified_by_prefix(self, node: cst.CSTNode) -> set[QualifiedName]:
        full = full_name(node)
        if full is None:
            return set()
        bindings: Collection[Binding] = ()
        prefix: str | None = full
        while prefix:
            if prefix in self:
                bindings = self[prefix]
                break
            dot = prefix.rfind(".")
            prefix = prefix[:dot] if dot >= 0 else None
        if not bindings:
            return set()
        return qualified_under(next(iter(bindings)).scope._lookups, bindings, node, full)


class _BuiltinScope(Scope):
    def _resolve(self, name: str, start: Scope) -> Collection[Binding]:
        bound = self._bindings.get(name)
        if bound is not None:
            return bound
        if hasattr(builtins, name):
            bound = self._bindings[name] = {BuiltinBinding(name, self, None, -1): None}
            return bound
        return ()

    def __contains__(self, name: str) -> bool:
        return hasattr(builtins, name)


class GlobalScope(Scope):
    def __init__(self, tracker: _Tracker) -> None:
        super().__init__(_BuiltinScope(None, tracker), tracker)

    def every_binding(self) -> Iterator[Binding]:
        """Each binding made in the module scope itself."""
        for bound in self._bindings.values():
            yield from bound


class FunctionScope(Scope):
    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, self.name, "<locals>"]))


class ClassScope(Scope):
    def _visible_from(self, scope: Scope) -> bool:
        # A class body's names are not seen from the functions in it, only from its own type parameters.
        return scope.parent is self and isinstance(scope, AnnotationScope)

    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, self.name]))


class ComprehensionScope(Scope):
    def _prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, "<comprehension>"]))


class AnnotationScope(Scope):
    """The scope of PEP 695 type parameters and type aliases."""

    def _prefix(self) -> str:
        return self.parent.name_prefix


_LOAD, _STORE, _DEL, _NONE = 0, 1, 2, 3

# Nodes after which a scope's binding counter moves on, as libcst's scope visitor counts them.
_COUNTED = frozenset(
    {
        cst.AnnAssign,
        cst.AsName,
        cst.Assign,
        cst.AugAssign,
        cst.ClassDef,
        cst.CompFor,
        cst.FunctionDef,
        cst.Global,
        cst.Import,
        cst.ImportFrom,
        cst.NamedExpr,
        cst.Nonlocal,
        cst.Parameters,
        cst.WithItem,
        cst.TypeVar,
        cst.TypeAlias,
        cst.TypeVarTuple,
        cst.ParamSpec,
    }
)
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})


class _Tracker:
    """Holds the uses recorded by the walk, unresolved, and resolves them one first name at a time."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []
        self.globals = GlobalScope(self)
        self.scope_of: dict[cst.CSTNode, Scope] = {}
        # first name -> [(scope, name node, index, enclosing dotted attribute, enclosing string annotation)]
        self.unresolved: dict[str, list[tuple[Scope, cst.Name, int, Any, Any]]] = {}
        self.resolved: set[str] = set()
        """The first names taken out of `unresolved` so far."""
        self.groups: dict[str, list[Group]] = {}
        """A (dotted) name's groups of uses, one per scope, in the order of their first use."""
        self.seen: dict[tuple[int, int], Seen] = {}
        """Each collection of bindings some use sees (a dict of `Scope._bindings`), by id and size."""

    def release(self) -> None:
        """Empties every scope, binding and use, so that the module's tree is freed as soon as it is dropped.

        Scopes, bindings and uses point at each other; left as they are, they would keep every node
        alive until Python's cyclic collector runs, which costs a second at 20,000 legacy sites.
        """
        for scope in self.scopes:
            for bound in scope._bindings.values():
                for binding in bound:
                    binding._references = None
            scope._bindings.clear()
            scope._uses_by_name.clear()
            scope._uses_by_node.clear()
            scope._lookups.clear()
            scope._redirects.clear()
        self.scopes.clear()
        self.scope_of.clear()
        self.unresolved.clear()
        self.groups.clear()
        self.seen.clear()

    def used_roots(self) -> set[str]:
        """The first name of every use the walk recorded, resolved yet or not."""
        return set(self.unresolved) | self.resolved

    def infer(self, root: str) -> None:
        """Works out, for every use whose first name is `root`, what it sees; the uses of each binding are worked out
        from the same groups when asked (`Binding.references`)."""
        raw = self.unresolved.pop(root, None)
        if not raw:
            return
        self.resolved.add(root)
        groups: dict[tuple[Scope, str], Group] = {}
        for scope, name_node, index, dotted, string in raw:
            node: cst.CSTNode = name_node
            name = name_node.value
            if dotted is not None:
                for prefix, prefix_node in named_prefixes(dotted):
                    if prefix in scope:
                        node, name = prefix_node, prefix
                        break
            if string is not None:
                node = string
            group = groups.get((scope, name))
            if group is None:
                group = groups[scope, name] = Group(scope, name, scope._resolve(name, scope))
                self.groups.setdefault(name, []).append(group)
            seen = self._seen(group.seen)
            end = len(seen.bindings)
            if end and seen.bindings[0].scope is scope:
                end = bisect_left(seen.indices, index)  # in its own scope, a use sees the bindings before it
                if not end and scope.parent is not scope:
                    seen = self._seen(scope.parent._resolve(name, scope))
                    end = len(seen.bindings)
            access = Access(node, scope, index, seen, end)
            group.accesses.append(access)
            group.indices.append(index)
            scope._uses_by_name.setdefault(name, []).append(access)
            scope._uses_by_node.setdefault(node, []).append(access)

    def _seen(self, bound: Collection[Binding]) -> Seen:
        key = (id(bound), len(bound))
        seen = self.seen.get(key)
        if seen is None:
            seen = self.seen[key] = Seen(bound)
        return seen


class _Walk:
    """The one walk that records scopes, bindings and uses, in the order libcst's scope visitor meets them."""

    def __init__(self, tracker: _Tracker, typing_names: bool) -> None:
        self.tracker = tracker
        self.scope: Scope = tracker.globals
        self.typing_names = typing_names
        """Whether the module can name anything of `typing` (which changes where strings are annotations)."""
        self.dotted: list[Any] = [None]  # the outermost attribute being walked, per call level
        self.in_annotation = [False]
        self.in_type_hint = [False]
        self.literal_subscripts: set[cst.Subscript] = set()
        self.string: cst.BaseString | None = None
        self.all_uses = False  # inside a string annotation every name is a use

    def leave(self, node: cst.CSTNode) -> None:
        self.tracker.scope_of[node] = self.scope
        if type(node) in _COUNTED:
            self.scope._count += 1

    def use(self, node: cst.Name) -> None:
        self.tracker.unresolved.setdefault(node.value, []).append(
            (self.scope, node, self.scope._count, self.dotted[-1], self.string)
        )

    def children(self, node: cst.CSTNode, context: int) -> None:
        for child in named_children(node):
            self.visit(child, context)

    def visit(self, node: Any, context: int) -> None:
        kind = type(node)
        if holds_no_name(node):
            return
        if kind is cst.Name:
            if context == _STORE and not self.all_uses:
                self.scope.bind(node.value, node)
            else:
                self.use(node)
        elif kind is cst.Attribute:
            if self.dotted[-1] is None:
                self.dotted[-1] = node
            self.visit(node.value, _LOAD)
            if self.dotted[-1] is node:
                self.dotted[-1] = None
        elif kind is cst.Call:
            self.visit_call(node, context)
            return
        elif kind is cst.Subscript:
            self.visit_subscript(node)
            return
        else:
            visit = _VISIT.get(kind)
            if visit is None:
                self.children(node, context)
            else:
                visit(self, node, context)
        self.leave(node)

    # The node types with a rule of their own (`_VISIT`); `visit` calls `leave` after each.
    def visit_arg(self, node: cst.Arg, context: int) -> None:
        self.visit(node.value, context)

    def visit_assign(self, node: cst.Assign, context: int) -> None:
        for target in node.targets:
            self.visit(target, _STORE)
        self.visit(node.value, context)

    def visit_ann_assign(self, node: cst.AnnAssign, context: int) -> None:
        self.visit(node.target, _STORE)
        self.visit(node.annotation, context)
        if node.value is not None:
            self.visit(node.value, context)

    def visit_target_then_value(self, node: cst.AugAssign | cst.NamedExpr, context: int) -> None:
        self.visit(node.target, _STORE)
        self.visit(node.value, context)

    def visit_as_name(self, node: cst.AsName, context: int) -> None:
        self.visit(node.name, _STORE)

    def visit_del(self, node: cst.Del, context: int) -> None:
        self.visit(node.target, _DEL)

    def visit_import_node(self, node: cst.Import | cst.ImportFrom, context: int) -> None:
        self.visit_import(node)

    def visit_lambda(self, node: cst.Lambda, context: int) -> None:
        outer = self.scope
        self.scope = FunctionScope(outer, self.tracker)
        self.visit(node.params, context)
        self.visit(node.body, context)
        self.scope = outer

    def visit_param(self, node: cst.Param, context: int) -> None:
        self.scope.bind(node.name.value, node)
        self.tracker.scope_of[node.name] = self.scope
        inner, self.scope = self.scope, self.scope.parent
        for field in (node.default, node.annotation):
            if field is not None:
                self.visit(field, context)
        self.scope = inner

    def visit_global(self, node: cst.Global | cst.Nonlocal, context: int) -> None:
        kind = type(node)
        for item in node.names:
            name = item.name.value
            if kind is cst.Global and not isinstance(self.scope, GlobalScope):
                self.scope._redirects[name] = self.tracker.globals
            elif kind is cst.Nonlocal:
                self.scope._redirects[name] = self.scope.parent

    def visit_for(self, node: cst.For, context: int) -> None:
        self.visit(node.target, _STORE)
        self.scope._count += 1
        self.visit(node.iter, context)
        self.visit(node.body, context)
        if node.orelse is not None:
            self.visit(node.orelse, context)

    def visit_comp_for(self, node: cst.CompFor, context: int) -> None:
        self.visit(node.target, _STORE)
        self.visit(node.iter, context)
        for condition in node.ifs:
            self.visit(condition, context)
        if node.inner_for_in is not None:
            self.visit(node.inner_for_in, context)

    def visit_type_alias(self, node: cst.TypeAlias, context: int) -> None:
        self.scope.bind(node.name.value, node)
        outer = self.scope
        self.scope = AnnotationScope(outer, self.tracker)
        if node.type_parameters is not None:
            self.visit(node.type_parameters, context)
        self.visit(node.value, context)
        self.scope = outer

    def visit_type_var(self, node: cst.TypeVar, context: int) -> None:
        self.scope.bind(node.name.value, node)
        if node.bound is not None:
            self.visit(node.bound, _NONE)

    def visit_bound_name(self, node: cst.TypeVarTuple | cst.ParamSpec, context: int) -> None:
        self.scope.bind(node.name.value, node)

    def visit_annotation(self, node: cst.Annotation, context: int) -> None:
        self.in_annotation.append(True)
        self.children(node, context)
        self.in_annotation.pop()

    def visit_simple_string(self, node: cst.SimpleString, context: int) -> None:
        self.string_annotation(node)

    def visit_concatenated_string(self, node: cst.ConcatenatedString, context: int) -> None:
        if not self.string_annotation(node):
            self.children(node, context)

    def visit_call(self, node: cst.Call, context: int) -> None:
        self.dotted.append(None)
        self.in_type_hint.append(False)
        names = {q.name for q in self.scope._qualified_by_prefix(node)} if self.typing_names else set()
        if names & {"typing.NewType", "typing.TypeVar"}:
            self.visit(node.func, context)
            self.in_type_hint[-1] = True
            for arg in node.args[1:]:
                self.visit(arg, context)
        elif "typing.cast" in names:
            self.visit(node.func, context)
            if node.args:
                self.in_type_hint.append(True)
                self.visit(node.args[0], context)
                self.in_type_hint.pop()
                for arg in node.args[1:]:
                    self.visit(arg, context)
        else:
            self.children(node, context)
        self.dotted.pop()
        self.in_type_hint.pop()
        self.leave(node)

    def visit_subscript(self, node: cst.Subscript) -> None:
        hint = False
        if self.typing_names and isinstance(node.value, cst.Name):
            names = {q.name for q in self.scope._qualified_by_prefix(node.value)}
            hint = any(name.startswith(("typing.", "typing_extensions.")) for name in names)
            if names & {"typing.Literal", "typing_extensions.Literal"}:
                self.literal_subscripts.add(node)
        self.in_type_hint.append(hint)
        self.visit(node.value, _LOAD)
        for element in node.slice:
            self.visit(element, _LOAD)
        self.in_type_hint.pop()
        self.literal_subscripts.discard(node)
        self.leave(node)

    def string_annotation(self, node: cst.SimpleString | cst.ConcatenatedString) -> bool:
        """Walks the code in a string annotation; returns whether `node` was one."""
        if not (self.in_type_hint[-1] or self.in_annotation[-1]) or self.literal_subscripts:
            return False
        value = node.evaluated_value
        if not value:
            return False
        outer, outer_all = self.string, self.all_uses
        if outer is None:
            self.string = node
        self.all_uses = True
        try:
            self.visit(cst.parse_module(value), _NONE)
        except cst.ParserSyntaxError:
            pass
        self.string, self.all_uses = outer, outer_all
        return True

    def visit_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            self.tracker.scope_of[alias] = self.scope
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, (cst.Name, cst.Attribute)):
                for name, _ in named_prefixes(bound):
                    self.scope.bind(name, node, ImportBinding)

    def visit_function(self, node: cst.FunctionDef, context: int) -> None:
        self.scope.bind(node.name.value, node)
        self.tracker.scope_of[node.name] = self.scope
        outer = self.scope
        if node.type_parameters is not None:
            self.scope = AnnotationScope(outer, self.tracker)
            self.visit(node.type_parameters, context)
        around = self.scope
        self.scope = FunctionScope(around, self.tracker, node.name.value)
        self.visit(node.params, context)
        self.visit(node.body, context)
        self.scope = around
        for decorator in node.decorators:
            self.visit(decorator, context)
        if node.returns is not None:
            self.visit(node.returns, context)
        self.scope = outer

    def visit_class(self, node: cst.ClassDef, context: int) -> None:
        self.scope.bind(node.name.value, node)
        self.tracker.scope_of[node.name] = self.scope
        for decorator in node.decorators:
            self.visit(decorator, context)
        outer = self.scope
        if node.type_parameters is not None:
            self.scope = AnnotationScope(outer, self.tracker)
            self.visit(node.type_parameters, context)
        for base in node.bases:
            self.visit(base, context)
        for keyword in node.keywords:
            self.visit(keyword, context)
        self.scope = ClassScope(self.scope, self.tracker, node.name.value)
        for statement in node.body.body:
            self.visit(statement, context)
        self.scope = outer

    def visit_comprehension(self, node: Any, context: int) -> None:
        first = node.for_in
        self.visit(first.iter, context)
        self.tracker.scope_of[first] = self.scope
        outer = self.scope
        self.scope = ComprehensionScope(outer, self.tracker)
        self.visit(first.target, _STORE)
        self.scope._count += 1
        for condition in first.ifs:
            self.visit(condition, context)
        if first.inner_for_in is not None:
            self.visit(first.inner_for_in, context)
        if isinstance(node, cst.DictComp):
            self.visit(node.key, context)
            self.visit(node.value, context)
        else:
            self.visit(node.elt, context)
        self.scope = outer


_VISIT: dict[type, Callable[[_Walk, Any, int], None]] = {
    cst.Arg: _Walk.visit_arg,
    cst.Assign: _Walk.visit_assign,
    cst.AnnAssign: _Walk.visit_ann_assign,
    cst.AugAssign: _Walk.visit_target_then_value,
    cst.NamedExpr: _Walk.visit_target_then_value,
    cst.AsName: _Walk.visit_as_name,
    cst.Del: _Walk.visit_del,
    cst.Import: _Walk.visit_import_node,
    cst.ImportFrom: _Walk.visit_import_node,
    cst.FunctionDef: _Walk.visit_function,
    cst.Lambda: _Walk.visit_lambda,
    cst.Param: _Walk.visit_param,
    cst.ClassDef: _Walk.visit_class,
    cst.Global: _Walk.visit_global,
    cst.Nonlocal: _Walk.visit_global,
    **dict.fromkeys(_COMPREHENSIONS, _Walk.visit_comprehension),
    cst.For: _Walk.visit_for,
    cst.CompFor: _Walk.visit_comp_for,
    cst.TypeAlias: _Walk.visit_type_alias,
    cst.TypeVar: _Walk.visit_type_var,
    cst.TypeVarTuple: _Walk.visit_bound_name,
    cst.ParamSpec: _Walk.visit_bound_name,
    cst.Annotation: _Walk.visit_annotation,
    cst.SimpleString: _Walk.visit_simple_string,
    cst.ConcatenatedString: _Walk.visit_concatenated_string,
}
"""The node types `_Walk.visit` has a rule for, besides names, attributes, calls and subscripts; others: their
children."""


def scopes(module: cst.Module, source: bytes | None = None) -> dict[cst.CSTNode, Scope]:
    """Maps each node that can name something to its scope; the module maps to the `GlobalScope`."""
    tracker = _Tracker()
    typing_names = source is None or b"typing" in source
    _Walk(tracker, typing_names).visit(module, _LOAD)
    return tracker.scope_of
