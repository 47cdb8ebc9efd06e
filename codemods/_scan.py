"""The site scan: one walk for parents and the nodes the rules look at, and name resolution through `_scopes`."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider, QualifiedName, QualifiedNameSource

from lossscale_compat import _mapping

from . import _warnings as w
from ._fields import named_children
from ._scopes import Binding, FunctionScope
from ._state import CommandState
from ._values import Expr, dotted_prefixes, full_name, optimizer_like

SUPPRESS_RE = re.compile(r"#\s*lossscale-compat:\s*ignore\b")


_SCANNED = (cst.Call, cst.Attribute, cst.Name, cst.Import, cst.ImportFrom)


class _LocalAliasCollector(cst.CSTVisitor):
    """The one full walk: finds `name = <dotted module>` statements inside functions, in source order, maps
    each node to its parent, and lists the nodes `SiteCollector` looks at, in the order a visit meets them."""

    def __init__(self, command: SiteScan) -> None:
        super().__init__()
        self.command = command
        self.parents = command._parents
        self.stack: list[cst.CSTNode] = []
        self.scanned: list[cst.CSTNode] = []
        self.ends: list[int] = []
        """For each scanned node, the index in `scanned` just after its subtree."""
        self._open: list[int] = []
        self.tensorflow_class = False
        """Whether a class is called `tensorflow`: names in its body qualify as `tensorflow.<name>`."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        if type(node) is cst.ClassDef and node.name.value == "tensorflow":
            self.tensorflow_class = True
        elif type(node) in _SCANNED:
            self._open.append(len(self.scanned))
            self.scanned.append(node)
            self.ends.append(0)
        elif type(node) is cst.Assign:
            self.visit_Assign(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if type(original_node) in _SCANNED:
            self.ends[self._open.pop()] = len(self.scanned)

    def visit_Assign(self, node: cst.Assign) -> None:
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
            and isinstance(node.value, (cst.Name, cst.Attribute))
        ):
            self.command._add_local_alias(node)

    def walk(self, module: cst.Module) -> None:
        """Calls `on_visit`/`on_leave` as `module.visit(self)` would, in the same order, except for the nodes
        that hold no name (whitespace, punctuation, operators, numbers: see `_fields.holds_no_name`).

        libcst's visit rebuilds every node it passes, which costs about as much as parsing; this
        only reads the fields, in the order libcst visits them (see `_fields`).
        """
        self._visit(module)

    def _visit(self, node: cst.CSTNode) -> None:
        # A method, not a closure: a recursive closure is a reference cycle that would hold the whole tree
        # until the cyclic collector runs.
        self.on_visit(node)
        for child in named_children(node):
            self._visit(child)
        self.on_leave(node)


class SiteCollector:
    """Finds every use of a TF 2.4 name and every `get_*scaled*` call, in source order.

    It walks the list of names, attributes, calls and imports the first pass made, as a visitor
    would: a `visit_*` that returns False skips the node's subtree.
    """

    def __init__(self, command: SiteScan, sites: list[tuple[Expr, str]], loops: list[cst.Call]) -> None:
        self.command = command
        self.sites = sites
        self.loops = loops

    def run(self, scanned: Sequence[cst.CSTNode], ends: Sequence[int]) -> None:
        """Calls the `visit_*` method of each node in `scanned`, skipping the subtrees it declines."""
        index = 0
        while index < len(scanned):
            node = scanned[index]
            descend = getattr(self, f"visit_{type(node).__name__}")(node)
            index = ends[index] if descend is False else index + 1

    def visit_Import(self, node: cst.Import) -> bool:
        if any((full_name(alias.name) or "").startswith(_mapping.PRIVATE_KERAS_PACKAGE) for alias in node.names):
            self._warn_private_import(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = full_name(node.module) if node.module is not None and not node.relative else None
        if (
            module is not None
            and not isinstance(node.names, cst.ImportStar)
            and all(f"{module}.{alias.evaluated_name}" in _mapping.PRIVATE_NAMES for alias in node.names)
        ):
            if not self.command.is_suppressed(node):
                self.command._private_imports.append((module, node))  # moved to lossscale_compat's names
            return False
        if (
            module is not None
            and (module + ".").startswith(_mapping.PRIVATE_KERAS_PACKAGE + ".")
            and (
                isinstance(node.names, cst.ImportStar)
                or any(
                    f"{module}.{alias.evaluated_name}" not in _mapping.BY_OLD_NAME
                    and f"{module}.{alias.evaluated_name}" not in _mapping.LEGACY_MODULES
                    for alias in node.names
                )
            )
        ):
            self._warn_private_import(node)
        return False

    def _warn_private_import(self, node: cst.CSTNode) -> None:
        """TF 2.4's private Keras mixed-precision package is gone; the codemod has no rule for what it held."""
        if not self.command.is_suppressed(node):
            self.command._warn(node, w.UNSUPPORTED_USE)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("get_scaled_loss", "get_unscaled_gradients")
            and not self.command.is_suppressed(node)
        ):
            self.loops.append(node)
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value == _mapping.CONFIG_METHOD
            and not node.args
            and not self.command.is_suppressed(node)
        ):
            self.command._config_reads.append(node)  # a regression test's config comparison, if compared

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value == "loss_scale" and isinstance(node.value, cst.Call):
            names = self.command.qualified(node.value.func)
            if any(name.endswith(".global_policy") and name in _mapping.BY_OLD_NAME for name in names):
                self.command._policy_scale_reads.append(node)  # warned unless the policies set here keep one
        elif node.attr.value == "loss_scale" and isinstance(node.value, cst.Name) and not optimizer_like(node.value):
            self.command._policy_scale_reads.append(node)  # a Policy's, if the name is bound to a Policy call
        if (
            node.attr.value == "loss_scale"
            and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "optimizer"
            and not self.command.is_suppressed(node)
        ):
            self.command._optimizer_scale_reads.append(node)
        elif (
            node.attr.value == "loss_scale"
            and isinstance(node.value, (cst.Name, cst.Attribute))
            and optimizer_like(node.value)
            and not self.command.is_suppressed(node)
        ):
            self.command._other_scale_reads.append(node)
        return self._site(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._site(node)

    def _site(self, node: Expr) -> bool:
        command = self.command
        if node in command._alias_values:
            return False
        parent = command._parent(node)
        if isinstance(parent, cst.Attribute) and (parent.attr is node or parent.value is node):
            return True
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return True
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)) and parent.name is node:
            return True
        if command._roots is not None:
            dotted = full_name(node)
            if dotted is None or dotted.partition(".")[0] not in command._roots:
                return True  # no prefix of it can name anything of TF 2.4's
        for depth, prefix in enumerate(dotted_prefixes(node)):
            names = command.qualified(prefix)
            legacy = {n for n in names if n in _mapping.BY_OLD_NAME or n in _mapping.LEGACY_MODULES}
            expected = command.would_be(prefix)
            expected_legacy = expected in _mapping.BY_OLD_NAME or expected in _mapping.LEGACY_MODULES
            if not legacy and not expected_legacy:
                continue
            if command.is_suppressed(node):
                return True
            if len(names) != 1 or not legacy or (expected_legacy and names != {expected}):
                command._warn(node, w.AMBIGUOUS_NAME)
                return True
            (name,) = legacy
            if name in _mapping.LEGACY_MODULES:
                if depth == 0:
                    command._warn(node, w.UNSUPPORTED_USE)
                return True
            if depth > 0:
                row = _mapping.BY_OLD_NAME[name]
                if depth == 1 and row.shim and isinstance(node, cst.Attribute) and node.attr.value == "from_config":
                    self.sites.append((prefix, name))  # `Class.from_config(...)`: our class reads TF 2.4 configs
                else:
                    command._warn(node, w.UNSUPPORTED_USE)
                return True
            self.sites.append((node, name))
            return True
        return True


class SiteScan(CommandState):
    """What a dotted name stands for, where a node is, and which nodes are TF 2.4 sites."""

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def _collect_bindings(self, module: cst.Module) -> dict[str, tuple[str, cst.CSTNode, cst.ImportAlias | None]]:
        """Maps each name bound once at module level by an absolute import to what it imports."""
        out: dict[str, tuple[str, cst.CSTNode, cst.ImportAlias | None]] = {}
        small: cst.BaseSmallStatement | None
        for statement in module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        full = full_name(alias.name) or ""
                        if alias.asname is not None:
                            local = full_name(alias.asname.name) or ""
                            out[local] = (full, small, alias)
                        else:
                            top = full.split(".")[0]
                            out[top] = (top, small, alias)
                elif isinstance(small, cst.ImportFrom) and not small.relative:
                    if isinstance(small.names, cst.ImportStar) or small.module is None:
                        continue
                    module_name = full_name(small.module) or ""
                    for alias in small.names:
                        name = full_name(alias.name) or ""
                        local = name
                        if alias.asname is not None:
                            local = full_name(alias.asname.name) or ""
                        out[local] = (f"{module_name}.{name}", small, alias)
        bindings = {name: value for name, value in out.items() if name in self._global and len(self._global[name]) == 1}
        self._bindings = bindings
        for statement in module.body:  # `mp = tf.keras.mixed_precision.experimental`, in source order
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, (cst.Name, cst.Attribute))
            ):
                continue
            name = small.targets[0].target.value
            qualified = self.qualified_one(small.value)
            if qualified in _mapping.MODULE_PREFIXES and name not in bindings and len(self._global[name]) == 1:
                bindings[name] = (qualified, small, None)
                self._alias_values.update((small.value, small.targets[0].target))
        first_pass = _LocalAliasCollector(self)
        first_pass.walk(module)
        self._scanned = (first_pass.scanned, first_pass.ends)
        self._tensorflow_class = first_pass.tensorflow_class
        return bindings

    def _possible_roots(self) -> set[str] | None:
        """The first names of the dotted names that can resolve to a TF 2.4 name here, or None for any.

        A qualified name starts with `tensorflow` only through an import, a module alias, or a
        module-level name or class itself called `tensorflow`; `SiteCollector` skips other roots.
        """
        if self._tensorflow_class:
            return None
        roots = {"tensorflow", *self._bindings}
        roots.update(
            cst.ensure_type(statement.targets[0].target, cst.Name).value
            for aliases in self._local_aliases.values()
            for _, statement, _ in aliases
        )
        for node in self._scanned[0]:
            if type(node) is cst.Import:
                roots.update((alias.evaluated_alias or alias.evaluated_name).split(".")[0] for alias in node.names)
            elif type(node) is cst.ImportFrom and not isinstance(node.names, cst.ImportStar):
                roots.update(alias.evaluated_alias or alias.evaluated_name for alias in node.names)
        return roots

    def _add_local_alias(self, small: cst.Assign) -> None:
        """Records `mp = tf.keras.mixed_precision.experimental` inside a function, bound once in its scope."""
        target = cst.ensure_type(small.targets[0].target, cst.Name)
        scope = self._scopes.get(small)
        if not isinstance(scope, FunctionScope) or len(scope[target.value]) != 1:
            return
        qualified = self.qualified_one(small.value)
        names = {q.name for q in self._qualified_names(target)}
        if qualified in _mapping.MODULE_PREFIXES and len(names) == 1:
            # Two functions of one name (a redefinition, methods of two classes) share a qualified name.
            self._local_aliases.setdefault(next(iter(names)), []).append((qualified, small, scope))
            self._alias_values.update((small.value, target))

    def _position(self, node: cst.CSTNode) -> CodeRange:
        """The node's range; the few rules that compare lines before the end resolve them all once."""
        if self._positions is None:
            self._positions = self.context.wrapper.resolve(PositionProvider)  # type: ignore[union-attr]  # set by _handle_metadata_reference
        return self._positions[node]

    def _warn(self, node: cst.CSTNode, code: str) -> None:
        self._pending.append((node, code))  # placed after the transform, see `_place_findings`

    def is_suppressed(self, node: cst.CSTNode) -> bool:
        """Returns whether `node` or its simple statement carries the suppression comment."""
        if not self._suppressed:
            return False
        spans = [self._position(node)]
        parent: cst.CSTNode | None = node
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            parent = self._parent(parent)
            if isinstance(parent, cst.BaseCompoundStatement):
                break
        if isinstance(parent, cst.SimpleStatementLine):
            spans.append(self._position(parent))
        return any(line in self._suppressed for span in spans for line in range(span.start.line, span.end.line + 1))

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """Returns the qualified names of `node`, through module aliases made by assignment."""
        names = set()
        for q in self._qualified_names(node):
            root, _, rest = q.name.partition(".")
            alias = self._bindings.get(root)
            if q.source is QualifiedNameSource.LOCAL and alias is not None and alias[2] is None:
                names.add(f"{alias[0]}.{rest}" if rest else alias[0])
            elif q.source is QualifiedNameSource.LOCAL and self._local_aliases:
                names.add(self._through_local_alias(q.name, node))
            else:
                names.add(q.name)
        return names

    def qualified_one(self, node: cst.CSTNode) -> str | None:
        """The one qualified name of `node` (see `qualified`), or None when it has none or several."""
        names = self.qualified(node)
        return next(iter(names)) if len(names) == 1 else None

    def called_name(self, node: cst.CSTNode) -> str | None:
        """The one qualified name of the function `node` calls, or None when `node` is not a call or it has not one."""
        return self.qualified_one(node.func) if isinstance(node, cst.Call) else None

    def _qualified_names(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        """What libcst's QualifiedNameProvider gives for `node`, computed only for the nodes asked about."""
        scope = self._scopes.get(node)
        return scope.get_qualified_names_for(node) if scope else set()

    def _through_local_alias(self, name: str, node: cst.CSTNode) -> str:
        """`name` (a local qualified name of `node`) through the function-local alias that `node` sees, if any."""
        parts = name.split(".")
        scope = self._scopes.get(node)
        for end in range(len(parts), 0, -1):
            for module, _, alias_scope in self._local_aliases.get(".".join(parts[:end]), ()):
                seen = scope[parts[end - 1]] if scope is not None else ()
                if len(seen) == 1 and next(iter(seen)).scope is alias_scope:
                    return ".".join([module, *parts[end:]])
        return name

    def would_be(self, node: Expr) -> str | None:
        """Returns the name `node` would have if its root were the module-level import."""
        dotted = full_name(node)
        if not dotted:
            return None
        root, _, rest = dotted.partition(".")
        binding = self._bindings.get(root)
        if binding is None:
            return None
        return f"{binding[0]}.{rest}" if rest else binding[0]

    def _single_assignment(self, target: cst.Name) -> Binding | None:
        """Returns the only binding of `target`'s name in its scope, if `target` is that binding."""
        scope = self._scopes.get(target)
        if scope is None:
            return None
        assignments = list(scope.assignments[target.value])
        if len(assignments) != 1 or getattr(assignments[0], "node", None) is not target:
            return None
        return assignments[0]

    def _assigned_value(self, name: cst.Name) -> Expr | None:
        """Returns the value `name` was bound to by its only assignment, a plain `name = value`, else None."""
        scope = self._scopes.get(name)
        if scope is None:
            return None
        assignments = list(scope.assignments[name.value])
        target = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
        assign_target = self._parent(target) if target is not None else None
        assign = self._parent(assign_target) if assign_target is not None else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is target:
            return assign.value
        return None
