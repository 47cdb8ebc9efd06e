"""The read of one module that the rules decide from: a frozen value, built once per module by `_scan.collect_facts`.

Its containers are immutable (tuples, frozensets, `types.MappingProxyType`), so a rule that tries to write one
fails. Two parts are computed on demand and cached, because most files never need them: the positions (see
`Positions`) and, inside `_scopes`, each scope's uses of a name; neither has a method a rule could write with.
When the command is done with a module it empties the scopes' contents (`_scopes`' tracker `release`), so that
the tree is freed without the cyclic collector; the facts' own containers stay as built.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange, QualifiedName, QualifiedNameSource

from lossscale_compat._mapping import normal_name

from ._scopes import Binding, BuiltinBinding, ClassScope, FunctionScope, GlobalScope, Scope
from ._values import Expr, full_name

ImportBinding = tuple[str, cst.CSTNode, "cst.ImportAlias | None"]
"""A module-level name's (qualified name, statement, import alias or None for an assigned module alias)."""
LocalAlias = tuple[str, cst.Assign, Scope]
"""A function-local module alias: (module, statement, the function's scope)."""
SelfAlias = tuple[str, cst.Assign, tuple[cst.Attribute, ...]]
"""A module held by a class as `self.x` (assigned once in the class, in a method or its body): (module, statement,
the class's other `self.x` reads)."""


class Positions:
    """Each node's range, resolved on the first question (the few rules that compare lines need them)."""

    def __init__(self, resolve: Callable[[], Mapping[cst.CSTNode, CodeRange]]) -> None:
        self._resolve = resolve
        self._ranges: Mapping[cst.CSTNode, CodeRange] | None = None

    @property
    def resolved(self) -> Mapping[cst.CSTNode, CodeRange] | None:
        """The ranges if some question resolved them, else None."""
        return self._ranges

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        if self._ranges is None:
            self._ranges = self._resolve()
        return self._ranges[node]


CLASS_CHECKS = frozenset({"isinstance", "issubclass"})
"""The built-ins that check a class."""


class Reading:
    """Questions about the module, answered from its parents, scopes, bindings and aliases.

    Shared by `Facts` and the scan that builds it, which asks them of the part already collected.
    """

    parents: Mapping[cst.CSTNode, cst.CSTNode]
    scopes: Mapping[cst.CSTNode, Scope]
    bindings: Mapping[str, ImportBinding]
    local_aliases: Mapping[str, Collection[LocalAlias]]
    self_aliases: Mapping[Scope, Mapping[str, SelfAlias]]
    suppressed: Collection[int]
    positions: Positions

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def is_suppressed(self, node: cst.CSTNode) -> bool:
        """Returns whether `node` or its simple statement carries the suppression comment."""
        if not self.suppressed:
            return False
        spans = [self.position(node)]
        parent: cst.CSTNode | None = node
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            parent = self.parent(parent)
            if isinstance(parent, cst.BaseCompoundStatement):
                break
        if isinstance(parent, cst.SimpleStatementLine):
            spans.append(self.position(parent))
        return any(line in self.suppressed for span in spans for line in range(span.start.line, span.end.line + 1))

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """Returns the qualified names of `node`, through module aliases made by assignment."""
        if self.self_aliases:
            through = self._through_self_alias(node)
            if through is not None:
                return {through}
        names = set()
        for q in self.qualified_names(node):
            root, _, rest = q.name.partition(".")
            alias = self.bindings.get(root)
            if q.source is QualifiedNameSource.LOCAL and alias is not None and alias[2] is None:
                names.add(f"{alias[0]}.{rest}" if rest else alias[0])
            elif q.source is QualifiedNameSource.LOCAL and self.local_aliases:
                names.add(self._through_local_alias(q.name, node))
            else:
                names.add(q.name)
        return {normal_name(name) for name in names}

    def qualified_one(self, node: cst.CSTNode) -> str | None:
        """The one qualified name of `node` (see `qualified`), or None when it has none or several."""
        names = self.qualified(node)
        return next(iter(names)) if len(names) == 1 else None

    def called_name(self, node: cst.CSTNode) -> str | None:
        """The one qualified name of the function `node` calls, or None when `node` is not a call or it has not one."""
        return self.qualified_one(node.func) if isinstance(node, cst.Call) else None

    def qualified_names(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        """What libcst's QualifiedNameProvider gives for `node`, computed only for the nodes asked about."""
        scope = self.scopes.get(node)
        return scope.get_qualified_names_for(node) if scope else set()

    def method_class(self, node: cst.CSTNode) -> Scope | None:
        """The class scope of the method `node` is in (or a function nested in it that binds no `self`), when that
        method's `self` is its own parameter."""
        scope = self.scopes.get(node)
        while (
            isinstance(scope, FunctionScope)
            and isinstance(scope.parent, FunctionScope)
            and not scope.assignments["self"]
        ):
            scope = scope.parent
        if not isinstance(scope, FunctionScope) or not isinstance(scope.parent, ClassScope):
            return None
        return scope.parent if len(scope.assignments["self"]) == 1 else None

    def _through_self_alias(self, node: cst.CSTNode) -> str | None:
        """`self.x.rest` (`node`) as `<module>.rest`, where the class holds a module as `self.x` (`self_aliases`)."""
        dotted = full_name(node) if isinstance(node, (cst.Attribute, cst.Name)) else None
        if dotted is None or not dotted.startswith("self."):
            return None
        cls = self.method_class(node)
        parts = dotted.split(".")
        alias = self.self_aliases.get(cls, {}).get(parts[1]) if cls is not None else None
        return normal_name(".".join([alias[0], *parts[2:]])) if alias is not None else None

    def _through_local_alias(self, name: str, node: cst.CSTNode) -> str:
        """`name` (a local qualified name of `node`) through the function-local alias that `node` sees, if any."""
        parts = name.split(".")
        scope = self.scopes.get(node)
        for end in range(len(parts), 0, -1):
            for module, _, alias_scope in self.local_aliases.get(".".join(parts[:end]), ()):
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
        binding = self.bindings.get(root)
        if binding is None:
            return None
        return normal_name(f"{binding[0]}.{rest}" if rest else binding[0])

    def single_assignment(self, target: cst.Name) -> Binding | None:
        """Returns the only binding of `target`'s name in its scope, if `target` is that binding."""
        scope = self.scopes.get(target)
        if scope is None:
            return None
        assignments = list(scope.assignments[target.value])
        if len(assignments) != 1 or getattr(assignments[0], "node", None) is not target:
            return None
        return assignments[0]

    def assigned_value(self, name: cst.Name) -> Expr | None:
        """Returns the value `name` was bound to by its only assignment, a plain `name = value`, else None."""
        scope = self.scopes.get(name)
        if scope is None:
            return None
        assignments = list(scope.assignments[name.value])
        target = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
        assign_target = self.parent(target) if target is not None else None
        assign = self.parent(assign_target) if assign_target is not None else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is target:
            return assign.value
        return None

    def seen_value(self, read: cst.Name) -> Expr | None:
        """The value the read `read` holds when it runs, from the `name = value` statements of its scope, or None.

        A name bound once holds that value. A name bound more than once (`opt = LossScaleOptimizer(opt)`) is
        followed when every binding is a plain `name = value` statement of its scope's own body (no branch, loop,
        `global` or other binding form) or a parameter of its function: a read in that body holds the last one above
        it; a read in a function defined there holds the last one, unless that function is named in the body before
        the last binding (it could run there).
        """
        scope = self.scopes.get(read)
        accesses = [a for a in scope.accesses[read] if a.node is read] if scope is not None else []
        if len(accesses) != 1 or not accesses[0].referents:
            return None
        referents = list(accesses[0].referents)
        owner = referents[0].scope
        if any(binding.scope is not owner for binding in referents):
            return None
        if len(referents) == 1 and len(owner.assignments[read.value]) == 1:
            target = getattr(referents[0], "node", None)
            return self.assigned_value(target) if isinstance(target, cst.Name) else None
        found = self._straight_line(owner, read.value)
        if found is None:
            return None
        body, order, assigns = found
        node: cst.CSTNode | None = read
        nested = False  # the read runs when a function defined in the body is called
        while node is not None and self.parent(node) is not body:
            child, node = node, self.parent(node)
            nested = nested or (isinstance(node, (cst.FunctionDef, cst.Lambda)) and child is node.body)
        here = order.index(node) if node in order else -1
        if node is None or here < 0:
            return None
        if not nested:
            above = [assigns[line] for line in order[:here] if line in assigns]
            return above[-1].value if above else None
        last = max(index for index, line in enumerate(order) if line in assigns)
        if here < last and (
            not isinstance(node, (cst.FunctionDef, cst.ClassDef))
            or any(
                self._statement_index(access.node, body, order) in range(here + 1, last + 1)
                for access in owner.accesses[node.name.value]
            )
        ):
            return None
        return assigns[order[last]].value

    def _straight_line(
        self, owner: Scope, name: str
    ) -> tuple[cst.CSTNode, list[cst.CSTNode], dict[cst.CSTNode, cst.Assign]] | None:
        """Where every binding of `name` in `owner` is a parameter or a plain `name = value` statement of one body: the
        body, its statements, and the `Assign` of each binding line; else None."""
        params: list[cst.Param] = []
        assigns: dict[cst.CSTNode, cst.Assign] = {}
        body: cst.CSTNode | None = None
        for binding in owner.assignments[name]:
            target = binding.node
            if isinstance(target, cst.Param) and not target.star:
                params.append(target)  # bound before the body runs
                continue
            if not isinstance(target, cst.Name) or self.scopes.get(target) is not owner:
                return None
            assign, container = self._plain_assignment(target)
            if assign is None or (body is not None and container is not body):
                return None
            body = container
            assigns[cst.ensure_type(self.parent(assign), cst.SimpleStatementLine)] = assign
        if not isinstance(body, (cst.Module, cst.IndentedBlock)) or any(
            self.parent(self.parent(param) or param) is not self.parent(body) for param in params
        ):
            return None
        return body, list(body.body), assigns

    def _statement_index(self, node: cst.CSTNode | None, body: cst.CSTNode, order: list[cst.CSTNode]) -> int:
        """The index in `order` of the statement of `body` that holds `node`, or -1."""
        while node is not None and self.parent(node) is not body:
            node = self.parent(node)
        return order.index(node) if node in order else -1

    def _plain_assignment(self, target: cst.Name) -> tuple[cst.Assign | None, cst.CSTNode | None]:
        """`target`'s `name = value` statement and the body it is directly in (a module's or a function's)."""
        assign_target = self.parent(target)
        assign = self.parent(assign_target) if assign_target is not None else None
        line = self.parent(assign) if assign is not None else None
        body = self.parent(line) if line is not None else None
        if not (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and assign.targets[0].target is target
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and (isinstance(body, cst.Module) or isinstance(self.parent(body) if body else None, cst.FunctionDef))
        ):
            return None, None
        return assign, body


@dataclass(frozen=True, eq=False)
class Facts(Reading):
    """What the read-only pass found in one module: its walk, names, sites and the reads the rules plan from."""

    module: cst.Module
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    scopes: Mapping[cst.CSTNode, Scope]
    global_scope: GlobalScope
    positions: Positions
    suppressed: frozenset[int]
    """The lines that carry the suppression comment."""
    scanned: tuple[cst.CSTNode, ...]
    """The calls, attributes, names and imports, in the order a visit meets them."""
    ends: tuple[int, ...]
    """For each scanned node, the index in `scanned` just after its subtree."""
    bindings: Mapping[str, ImportBinding]
    """Module-level names bound once by an absolute import or as a module alias."""
    alias_values: frozenset[cst.CSTNode]
    """The target and value nodes of the module aliases made by assignment (not sites)."""
    local_aliases: Mapping[str, tuple[LocalAlias, ...]]
    """Function-local module aliases, by the alias's qualified name (`f.<locals>.mp`)."""
    self_aliases: Mapping[Scope, Mapping[str, SelfAlias]]
    """Modules a class holds as `self.x`, by the class's scope and `x`."""
    roots: frozenset[str] | None
    """The first names a TF 2.4 name can start with here, or None for any."""
    sites: tuple[tuple[Expr, str], ...]
    """Each use of a TF 2.4 name, with the name, in source order."""
    loops: tuple[cst.Call, ...]
    """The `get_scaled_loss` and `get_unscaled_gradients` calls."""
    optimizer_scale_reads: tuple[cst.Attribute, ...]
    """`<x>.optimizer.loss_scale`."""
    other_scale_reads: tuple[cst.Attribute, ...]
    """`<optimizer-like name>.loss_scale`."""
    policy_scale_reads: tuple[cst.Attribute, ...]
    """`global_policy().loss_scale`, and `<name>.loss_scale` of a name not named like an optimizer: a Policy's, or a
    wrap's bound to any name (`rules.custom_loop.plan_wrap_scale_reads`)."""
    config_reads: tuple[cst.Call, ...]
    """`<x>.get_config()` calls, compared in a regression test or not."""
    applies: tuple[cst.Call, ...]
    """`apply_gradients`/`get_gradients` calls (`_mapping.APPLY_METHODS`), on any receiver."""
    private_imports: tuple[tuple[str, cst.ImportFrom], ...]
    """From-imports of only `_mapping.PRIVATE_NAMES`, with the module's name."""
    warnings: tuple[tuple[cst.CSTNode, str], ...]
    """What the scan itself warns about (an ambiguous name, an unsupported use), as (node, code)."""

    def class_checked(self, node: cst.CSTNode) -> bool:
        """Whether `node` is the class (alone, or in a tuple) that the built-in `isinstance`/`issubclass` checks."""
        parent = self.parent(node)
        if isinstance(parent, cst.Element) and isinstance(tuple_ := self.parent(parent), cst.Tuple):
            parent = self.parent(tuple_)
        call = self.parent(parent) if isinstance(parent, cst.Arg) else None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in CLASS_CHECKS
            and len(call.args) == 2
            and call.args[1] is parent
            and parent.keyword is None
            and not parent.star
        ):
            return False
        scope = self.scopes.get(call.func) or self.global_scope
        return all(isinstance(binding, BuiltinBinding) for binding in scope[call.func.value])

    def held_value(self, read: Expr, depth: int = 0) -> Expr | None:
        """The value the expression `read` holds when it runs, or None: a name through `seen_value`; `self.x` where the
        module sets `.x` once, as `self.x = value` in a method of the reading method's class; `m.optimizer` of a model
        name compiled once (`m.compile(optimizer=value)`) and otherwise only called or read, its `optimizer` never
        bound; each followed through a call of a function of this module whose one `return` ends its body."""
        if depth > 8:
            return None
        value: Expr | None = None
        if isinstance(read, cst.Name):
            value = self.seen_value(read)
        elif isinstance(read, cst.Attribute) and isinstance(read.value, cst.Name):
            if read.value.value == "self":
                value = self._self_attribute_value(read)
            elif read.attr.value == "optimizer":
                value = self._compiled_optimizer(read.value)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            returned = self._returned_by(value.func)
            return self.held_value(returned, depth + 1) if returned is not None else value
        if isinstance(value, (cst.Name, cst.Attribute)) and value is not read:
            return self.held_value(value, depth + 1)
        return value

    def possible_values(self, read: Expr, depth: int = 0) -> tuple[cst.CSTNode, ...] | None:
        """Every value the read `read` may hold, or None when one is not known: `held_value` where it answers; else a
        name's every binding in its scope, each a one-target `name = value` (in any branch) or a parameter, and
        `self.x`'s every store, each `self.x = value` in a method of the reading method's class. Names and `self`
        attributes among the values are followed the same way, a call of a function of this module through its one
        `return`, and a parameter (kept as the `Param` node where it is not) through the argument each call of its
        function passes, where the module only calls that function (`_arguments`). Other reads are not known."""
        if depth > 8:
            return None
        held = self.held_value(read)
        if held is not None:
            return self._leaves(held, depth)
        stored: list[cst.CSTNode] | None = None
        if isinstance(read, cst.Name):
            stored = self._name_values(read)
        elif isinstance(read, cst.Attribute) and isinstance(read.value, cst.Name) and read.value.value == "self":
            stored = self._stored_values(read)
        if stored is None:
            return None
        found: list[cst.CSTNode] = []
        for value in stored:
            leaves = self._leaves(value, depth + 1)
            if leaves is None:
                return None
            found.extend(leave for leave in leaves if leave not in found)
        return tuple(found)

    def _leaves(self, value: cst.CSTNode, depth: int) -> tuple[cst.CSTNode, ...] | None:
        """`value`'s possible values (`possible_values`): itself unless it is a read, a parameter or a call of a
        function of this module whose one `return` ends its body."""
        if isinstance(value, cst.Param):
            return self._arguments(value, depth + 1) or (value,)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            returned = self._returned_by(value.func)
            return self._leaves(returned, depth + 1) if returned is not None else (value,)
        if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
            return (value,)
        if isinstance(value, (cst.Name, cst.Attribute)):
            return self.possible_values(value, depth + 1)
        return (value,)

    def _name_values(self, read: cst.Name) -> list[cst.CSTNode] | None:
        """The value of each binding of `read`'s name in its scope: a `Param`, or the value of `name = value`."""
        scope = self.scopes.get(read)
        accesses = [a for a in scope.accesses[read] if a.node is read] if scope is not None else []
        if len(accesses) != 1 or not accesses[0].referents:
            return None
        owner = next(iter(accesses[0].referents)).scope
        if any(binding.scope is not owner for binding in accesses[0].referents):
            return None
        values: list[cst.CSTNode] = []
        for binding in owner.assignments[read.value]:
            node = binding.node
            if isinstance(node, cst.Param) and not node.star:
                values.append(node)
                continue
            target = self.parent(node) if isinstance(node, cst.Name) else None
            assign = self.parent(target) if target is not None else None
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0] is target):
                return None
            values.append(assign.value)
        return values

    def _stored_values(self, read: cst.Attribute) -> list[cst.CSTNode] | None:
        """The value of each store of `read`'s attribute, where each is `self.x = value` in a method of its class."""
        cls = self.method_class(read)
        attribute = read.attr.value
        if cls is None or (attribute == "optimizer" and self._external_base(read)):
            return None
        values: list[cst.CSTNode] = []
        for store in self.attribute_stores(attribute):
            target = self.parent(store)
            assign = self.parent(target) if target is not None else None
            if not (
                full_name(store) == f"self.{attribute}"
                and self.method_class(store) is cls
                and isinstance(assign, cst.Assign)
                and len(assign.targets) == 1
                and assign.targets[0] is target
            ):
                return None
            values.append(assign.value)
        return values or None

    def _arguments(self, param: cst.Param, depth: int) -> tuple[cst.CSTNode, ...] | None:
        """The possible values of what each call of `param`'s function passes for it, where that function is not a
        method, is bound once, has no decorator but `tf.function`, and every use of its name is a call of it; else
        None."""
        parameters = self.parent(param)
        function = self.parent(parameters) if parameters is not None else None
        scope = self.scopes.get(function) if isinstance(function, cst.FunctionDef) else None
        if not isinstance(function, cst.FunctionDef) or scope is None or isinstance(scope, ClassScope):
            return None
        if any(not (full_name(d) or "").endswith("function") for d in function.decorators):
            return None
        bindings = list(scope.assignments[function.name.value])
        if len(bindings) != 1 or bindings[0].node is not function or not bindings[0].references:
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        found: list[cst.CSTNode] = []
        for access in bindings[0].references:
            call = self.parent(access.node)
            if not isinstance(call, cst.Call) or call.func is not access.node or any(a.star for a in call.args):
                return None
            given = [a.value for a in call.args if a.keyword is None]
            index = positional.index(param) if param in positional else len(given)
            named = [a.value for a in call.args if a.keyword is not None and a.keyword.value == param.name.value]
            value = given[index] if index < len(given) else named[0] if named else param.default
            leaves = self._leaves(value, depth + 1) if value is not None else None
            if leaves is None:
                return None
            found.extend(leave for leave in leaves if leave not in found)
        return tuple(found)

    def attribute_stores(self, attribute: str) -> list[cst.Attribute]:
        """Every `<x>.attribute` of the module in a place that binds or deletes it (any receiver)."""
        stores = []
        for node in self.scanned:
            if not (isinstance(node, cst.Attribute) and node.attr.value == attribute):
                continue
            child: cst.CSTNode = node
            parent = self.parent(node)
            while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
                child, parent = parent, self.parent(parent)  # `self.a, self.x = ...`
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.AsName, cst.Del)) or (
                isinstance(parent, (cst.For, cst.CompFor)) and parent.target is child
            ):
                stores.append(node)
        return stores

    def _self_attribute_value(self, read: cst.Attribute) -> Expr | None:
        """`self.x`'s value where the module binds `.x` once, `self.x = value` in a method of `read`'s class."""
        cls = self.method_class(read)
        stores = self.attribute_stores(read.attr.value)
        store = stores[0] if len(stores) == 1 else None
        target = self.parent(store) if store is not None else None
        assign = self.parent(target) if target is not None else None
        if (
            cls is None
            or not isinstance(store, cst.Attribute)
            or not isinstance(store.value, cst.Name)
            or store.value.value != "self"
            or self.method_class(store) is not cls
            or not isinstance(assign, cst.Assign)
            or len(assign.targets) != 1
            or (read.attr.value == "optimizer" and self._external_base(read))
        ):
            return None
        return assign.value

    def _external_base(self, method_node: cst.CSTNode) -> bool:
        """Whether the class whose method holds `method_node` has a base other than `object` (a Keras `Model`'s
        `compile` sets `optimizer`)."""
        node: cst.CSTNode | None = method_node
        while node is not None and not isinstance(node, cst.ClassDef):
            node = self.parent(node)
        return node is None or any(full_name(base.value) != "object" for base in node.bases)

    def _compiled_optimizer(self, model: cst.Name) -> Expr | None:
        """The optimizer given to the one `model.compile(...)` of the model `model` reads, where every other use of
        that name is a call of the model or a read of one of its attributes, and no `.optimizer` is bound."""
        scope = self.scopes.get(model)
        accesses = [a for a in scope.accesses[model] if a.node is model] if scope is not None else []
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return None
        stores = self.attribute_stores("optimizer")
        compiles = []
        for access in next(iter(accesses[0].referents)).references:
            parent = self.parent(access.node)
            if isinstance(parent, cst.Call) and parent.func is access.node:
                continue
            if not (isinstance(parent, cst.Attribute) and parent.value is access.node) or parent in stores:
                return None
            call = self.parent(parent)
            if parent.attr.value == "compile" and isinstance(call, cst.Call) and call.func is parent:
                compiles.append(call)
        if len(compiles) != 1:
            return None
        args = compiles[0].args
        given = [a for a in args if a.keyword is not None and a.keyword.value == "optimizer"]
        if not given and args and args[0].keyword is None and not args[0].star:
            given = [args[0]]
        return given[0].value if len(given) == 1 else None

    def _returned_by(self, func: cst.Name) -> Expr | None:
        """What the module-level function `func` names returns: the value of its one `return`, its body's last
        statement, in a function with no decorator, `yield` or other `return`."""
        bindings = list(self.global_scope.assignments[func.value])
        scope = self.scopes.get(func)
        seen = scope[func.value] if scope is not None else ()
        definition = bindings[0].node if len(bindings) == 1 else None
        if not isinstance(definition, cst.FunctionDef) or list(seen) != bindings or definition.decorators:
            return None
        returns = _Returns()
        definition.body.visit(returns)
        last = definition.body.body[-1] if isinstance(definition.body, cst.IndentedBlock) else None
        small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        if returns.other or returns.found != [small] or not isinstance(small, cst.Return):
            return None
        return small.value


class _Returns(cst.CSTVisitor):
    """The `return` statements of a function body (not of functions or classes in it), and whether it yields."""

    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []
        self.other = False

    def visit_Return(self, node: cst.Return) -> None:
        self.found.append(node)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.other = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False
