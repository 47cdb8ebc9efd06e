"""The read-only pass: one walk for parents and the nodes the rules look at, the sites, and the module's `Facts`."""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange

from lossscale_compat import _mapping

from . import _positions, _scopes
from . import _warnings as w
from ._facts import Facts, ImportBinding, LocalAlias, Positions, Reading, SelfAlias
from ._fields import named_children
from ._scopes import FunctionScope, GlobalScope, Scope
from ._values import Expr, dotted_prefixes, full_name, optimizer_like

SUPPRESS_RE = re.compile(r"#\s*lossscale-compat:\s*ignore\b")


_SCANNED = (cst.Call, cst.Attribute, cst.Name, cst.Import, cst.ImportFrom)


class _LocalAliasCollector(cst.CSTVisitor):
    """The one full walk: finds `name = <dotted module>` statements inside functions, in source order, maps
    each node to its parent, and lists the nodes `SiteCollector` looks at, in the order a visit meets them."""

    def __init__(self, builder: _FactsBuilder) -> None:
        super().__init__()
        self.builder = builder
        self.parents = builder._parents
        self.stack: list[cst.CSTNode] = []
        self.scanned: list[cst.CSTNode] = []
        self.ends: list[int] = []
        """For each scanned node, the index in `scanned` just after its subtree."""
        self._open: list[int] = []
        self.self_attributes: list[cst.Attribute] = []
        """Every `self.x`, for the modules a class holds as `self.x` (`_FactsBuilder._collect_self_aliases`)."""
        self.self_assigns: list[cst.Assign] = []
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
            if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
                self.self_attributes.append(node)
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
            self.builder._add_local_alias(node)
        elif (
            len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Attribute)
            and isinstance(node.targets[0].target.value, cst.Name)
            and node.targets[0].target.value.value == "self"
            and isinstance(node.value, cst.Attribute)
        ):
            self.self_assigns.append(node)

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

    def __init__(self, builder: _FactsBuilder, sites: list[tuple[Expr, str]], loops: list[cst.Call]) -> None:
        self.builder = builder
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
        if any(
            (name := full_name(alias.name) or "").startswith(_mapping.PRIVATE_KERAS_PACKAGE)
            and name not in _mapping.LEGACY_MODULES  # its uses are sites
            and name not in _mapping.PRIVATE_MODULES  # moved or warned by `rules.private_modules`
            and name not in _mapping.DEVICE_CHECK_MODULES  # removed or warned by `rules.private_modules`
            for alias in node.names
        ):
            self._warn_private_import(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = full_name(node.module) if node.module is not None and not node.relative else None
        if (
            module is not None
            and not isinstance(node.names, cst.ImportStar)
            and all(f"{module}.{alias.evaluated_name}" in _mapping.PRIVATE_NAMES for alias in node.names)
        ):
            if not self.builder.is_suppressed(node):
                self.builder.private_imports.append((module, node))  # moved to lossscale_compat's names
            return False
        if (
            module is not None
            and (module + ".").startswith(_mapping.PRIVATE_KERAS_PACKAGE + ".")
            and (
                isinstance(node.names, cst.ImportStar)
                or any(
                    f"{module}.{alias.evaluated_name}" not in _mapping.BY_OLD_NAME
                    and f"{module}.{alias.evaluated_name}" not in _mapping.LEGACY_MODULES
                    and f"{module}.{alias.evaluated_name}" not in _mapping.PRIVATE_MODULES
                    and f"{module}.{alias.evaluated_name}" not in _mapping.DEVICE_CHECK_MODULES
                    for alias in node.names
                )
            )
        ):
            self._warn_private_import(node)
        return False

    def _warn_private_import(self, node: cst.CSTNode) -> None:
        """TF 2.4's private Keras mixed-precision package is gone; the codemod has no rule for what it held."""
        if not self.builder.is_suppressed(node):
            self.builder._warn(node, w.UNSUPPORTED_USE)

    def _own_method(self, func: cst.Attribute) -> bool:
        """Whether `func` is `self.<method>` in a method of a class that defines `<method>` itself (a wrapper class's
        own `get_scaled_loss`, not TF 2.4's)."""
        if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            return False
        node: cst.CSTNode | None = func
        while node is not None and not isinstance(node, cst.FunctionDef):
            node = self.builder.parent(node)
        block = self.builder.parent(node) if node is not None else None
        cls = self.builder.parent(block) if block is not None else None
        return isinstance(cls, cst.ClassDef) and any(
            isinstance(statement, cst.FunctionDef) and statement.name.value == func.attr.value
            for statement in cls.body.body
        )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("get_scaled_loss", "get_unscaled_gradients")
            and not self.builder.is_suppressed(node)
            and not self._own_method(func)
        ):
            self.loops.append(node)
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value in _mapping.APPLY_METHODS
            and not self.builder.is_suppressed(node)
        ):
            self.builder.applies.append(node)
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value == _mapping.CONFIG_METHOD
            and not node.args
            and not self.builder.is_suppressed(node)
        ):
            self.builder.config_reads.append(node)  # a regression test's config comparison, if compared

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value == "loss_scale" and isinstance(node.value, cst.Call):
            names = self.builder.qualified(node.value.func)
            if any(name.endswith(".global_policy") and name in _mapping.BY_OLD_NAME for name in names):
                self.builder.policy_scale_reads.append(node)  # warned unless the policies set here keep one
        elif node.attr.value == "loss_scale" and isinstance(node.value, cst.Name) and not optimizer_like(node.value):
            self.builder.policy_scale_reads.append(node)  # a Policy's, if the name is bound to a Policy call
        if (
            node.attr.value == "loss_scale"
            and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "optimizer"
            and not self.builder.is_suppressed(node)
        ):
            self.builder.optimizer_scale_reads.append(node)
        elif (
            node.attr.value == "loss_scale"
            and isinstance(node.value, (cst.Name, cst.Attribute))
            and optimizer_like(node.value)
            and not self.builder.is_suppressed(node)
        ):
            self.builder.other_scale_reads.append(node)
        return self._site(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._site(node)

    def _site(self, node: Expr) -> bool:
        builder = self.builder
        if node in builder.alias_values:
            return False
        parent = builder.parent(node)
        if isinstance(parent, cst.Attribute) and (parent.attr is node or parent.value is node):
            return True
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return True
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)) and parent.name is node:
            return True
        if builder.roots is not None:
            dotted = full_name(node)
            if dotted is None or dotted.partition(".")[0] not in builder.roots:
                return True  # no prefix of it can name anything of TF 2.4's
        for depth, prefix in enumerate(dotted_prefixes(node)):
            names = builder.qualified(prefix)
            legacy = {n for n in names if n in _mapping.BY_OLD_NAME or n in _mapping.LEGACY_MODULES}
            expected = builder.would_be(prefix)
            expected_legacy = expected in _mapping.BY_OLD_NAME or expected in _mapping.LEGACY_MODULES
            if not legacy and not expected_legacy:
                continue
            if builder.is_suppressed(node):
                return True
            if len(names) != 1 or not legacy or (expected_legacy and names != {expected}):
                builder._warn(node, w.AMBIGUOUS_NAME)
                return True
            (name,) = legacy
            if name in _mapping.LEGACY_MODULES:
                if depth == 0:
                    builder._warn(node, w.UNSUPPORTED_USE)
                return True
            if depth > 0:
                row = _mapping.BY_OLD_NAME[name]
                if depth == 1 and row.shim and isinstance(node, cst.Attribute) and node.attr.value == "from_config":
                    self.sites.append((prefix, name))  # `Class.from_config(...)`: our class reads TF 2.4 configs
                else:
                    builder._warn(node, w.UNSUPPORTED_USE)
                return True
            self.sites.append((node, name))
            return True
        return True


class _FactsBuilder(Reading):
    """The facts while the scan collects them; `freeze` makes the `Facts` value."""

    def __init__(self, module: cst.Module, source: bytes | None, positions: Positions) -> None:
        self.module = module
        self.positions = positions
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.suppressed: frozenset[int] = frozenset()
        if source is None or b"lossscale-compat" in source:  # else the print cannot hold it either
            self.suppressed = frozenset(
                number
                for number, line in enumerate(_positions.LINE_BREAK.split(module.code), start=1)
                if "lossscale-compat" in line and SUPPRESS_RE.search(line)
            )
        self.scopes = _scopes.scopes(module, source)
        self.global_scope = cast(GlobalScope, self.scopes[module])
        self.bindings: dict[str, ImportBinding] = {}
        self.alias_values: set[cst.CSTNode] = set()
        self.local_aliases: dict[str, list[LocalAlias]] = {}
        self.self_aliases: dict[Scope, dict[str, SelfAlias]] = {}
        self.scanned: list[cst.CSTNode] = []
        self.ends: list[int] = []
        self.tensorflow_class = False
        self.roots: set[str] | None = None
        self.sites: list[tuple[Expr, str]] = []
        self.loops: list[cst.Call] = []
        self.optimizer_scale_reads: list[cst.Attribute] = []
        self.other_scale_reads: list[cst.Attribute] = []
        self.policy_scale_reads: list[cst.Attribute] = []
        self.config_reads: list[cst.Call] = []
        self.applies: list[cst.Call] = []
        self.private_imports: list[tuple[str, cst.ImportFrom]] = []
        self.warnings: list[tuple[cst.CSTNode, str]] = []

    @property
    def _parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        """The parents being collected, for `_LocalAliasCollector`."""
        return self.parents

    def _warn(self, node: cst.CSTNode, code: str) -> None:
        self.warnings.append((node, code))

    def collect(self) -> None:
        """Collects the bindings and the first pass's walk, the possible roots, then the sites."""
        self._collect_bindings(self.module)
        self.roots = self._possible_roots()
        SiteCollector(self, self.sites, self.loops).run(self.scanned, self.ends)

    def freeze(self) -> Facts:
        """The collected facts, in immutable containers."""
        return Facts(
            module=self.module,
            parents=types.MappingProxyType(self.parents),
            scopes=types.MappingProxyType(dict(self.scopes)),  # its own: `_scopes` empties the scan's at the end
            global_scope=self.global_scope,
            positions=self.positions,
            suppressed=self.suppressed,
            scanned=tuple(self.scanned),
            ends=tuple(self.ends),
            bindings=types.MappingProxyType(self.bindings),
            alias_values=frozenset(self.alias_values),
            local_aliases=types.MappingProxyType({name: tuple(a) for name, a in self.local_aliases.items()}),
            self_aliases=types.MappingProxyType(
                {cls: types.MappingProxyType(aliases) for cls, aliases in self.self_aliases.items()}
            ),
            roots=None if self.roots is None else frozenset(self.roots),
            sites=tuple(self.sites),
            loops=tuple(self.loops),
            optimizer_scale_reads=tuple(self.optimizer_scale_reads),
            other_scale_reads=tuple(self.other_scale_reads),
            policy_scale_reads=tuple(self.policy_scale_reads),
            config_reads=tuple(self.config_reads),
            applies=tuple(self.applies),
            private_imports=tuple(self.private_imports),
            warnings=tuple(self.warnings),
        )

    def _collect_bindings(self, module: cst.Module) -> None:
        """Maps each name bound once at module level by an absolute import to what it imports."""
        out: dict[str, ImportBinding] = {}
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
        global_scope = self.global_scope
        bindings = {name: value for name, value in out.items() if name in global_scope and len(global_scope[name]) == 1}
        self.bindings = bindings
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
            if qualified in _mapping.MODULE_PREFIXES and name not in bindings and len(global_scope[name]) == 1:
                bindings[name] = (qualified, small, None)
                self.alias_values.update((small.value, small.targets[0].target))
        first_pass = _LocalAliasCollector(self)
        first_pass.walk(module)
        self.scanned, self.ends = first_pass.scanned, first_pass.ends
        if first_pass.self_assigns:
            self._collect_self_aliases(first_pass.self_assigns, first_pass.self_attributes)
        self.tensorflow_class = first_pass.tensorflow_class

    def _collect_self_aliases(self, assigns: list[cst.Assign], attributes: list[cst.Attribute]) -> None:
        """Records `self.x = <TF 2.4 module>` in a method, where it is the class's only store to `self.x` and no
        nested function stores to a `self.x` of that name, with the class's `self.x` reads."""
        stores: dict[tuple[Scope, str], int] = {}
        reads: dict[tuple[Scope, str], list[cst.Attribute]] = {}
        elsewhere: set[str] = set()  # stored through a `self` that is not a method's own
        for node in attributes:
            parent = self.parents.get(node)
            store = isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)) and (
                parent.target is node
            )
            cls = self.method_class(node)
            if cls is None:
                if store:
                    elsewhere.add(node.attr.value)
                continue
            key = (cls, node.attr.value)
            if store:
                stores[key] = stores.get(key, 0) + 1
            else:
                reads.setdefault(key, []).append(node)
        for small in assigns:
            target = cst.ensure_type(small.targets[0].target, cst.Attribute)
            owner = self.method_class(small)
            if owner is None or stores.get((owner, target.attr.value)) != 1 or target.attr.value in elsewhere:
                continue
            key = (owner, target.attr.value)
            qualified = self.qualified_one(small.value)
            if qualified in _mapping.MODULE_PREFIXES:
                self.self_aliases.setdefault(key[0], {})[key[1]] = (qualified, small, tuple(reads.get(key, ())))
                self.alias_values.update((small.value, target))

    def _possible_roots(self) -> set[str] | None:
        """The first names of the dotted names that can resolve to a TF 2.4 name here, or None for any.

        A qualified name starts with `tensorflow` only through an import, a module alias, or a
        module-level name or class itself called `tensorflow`; `SiteCollector` skips other roots.
        """
        if self.tensorflow_class:
            return None
        roots = {"tensorflow", *self.bindings}
        if self.self_aliases:
            roots.add("self")
        roots.update(
            cst.ensure_type(statement.targets[0].target, cst.Name).value
            for aliases in self.local_aliases.values()
            for _, statement, _ in aliases
        )
        for node in self.scanned:
            if type(node) is cst.Import:
                roots.update((alias.evaluated_alias or alias.evaluated_name).split(".")[0] for alias in node.names)
            elif type(node) is cst.ImportFrom and not isinstance(node.names, cst.ImportStar):
                roots.update(alias.evaluated_alias or alias.evaluated_name for alias in node.names)
        return roots

    def _add_local_alias(self, small: cst.Assign) -> None:
        """Records `mp = tf.keras.mixed_precision.experimental` inside a function, bound once in its scope."""
        target = cst.ensure_type(small.targets[0].target, cst.Name)
        scope = self.scopes.get(small)
        if not isinstance(scope, FunctionScope) or len(scope[target.value]) != 1:
            return
        qualified = self.qualified_one(small.value)
        names = {q.name for q in self.qualified_names(target)}
        if qualified in _mapping.MODULE_PREFIXES and len(names) == 1:
            # Two functions of one name (a redefinition, methods of two classes) share a qualified name.
            self.local_aliases.setdefault(next(iter(names)), []).append((qualified, small, scope))
            self.alias_values.update((small.value, target))


def collect_facts(
    module: cst.Module, source: bytes | None, resolve_positions: Callable[[], Mapping[cst.CSTNode, CodeRange]]
) -> Facts:
    """The one read-only pass over `module` (parsed from `source`, when known): its `Facts`."""
    builder = _FactsBuilder(module, source, Positions(resolve_positions))
    builder.collect()
    return builder.freeze()
