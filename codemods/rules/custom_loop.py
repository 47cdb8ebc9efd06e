"""Custom-loop methods: `get_scaled_loss`/`get_unscaled_gradients` and `optimizer.loss_scale` reads on Keras 3."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import libcst as cst

from .. import _tf1
from .. import _warnings as w
from .._edits import FirstArgument, FixedFactor, NewAttr, ShimWrap, SiteEdit, Wrap
from .._state import RuleBase
from .._values import Expr, Unsafe, called_name_of, calls_in, has_comment, root_of
from ..rules.optimizer import LOOP_SHIM

# Where unscaled gradients go besides `apply_gradients`, by the name of the function or method they are
# passed to: each is a place where Keras 3's contract (scaled gradients in) would change the results.
_GRADIENT_FLOWS = (
    (frozenset({"clip_by_global_norm", "clip_by_norm", "clip_by_value", "clip_by_average_norm"}), w.GRADIENTS_CLIPPED),
    (frozenset({"global_norm", "norm", "reduce_norm", "l2_loss", "l2_normalize"}), w.GRADIENTS_NORM_TAKEN),
    (frozenset({"assign_add", "assign", "add_n", "accumulate_n"}), w.GRADIENTS_ACCUMULATED),
    (frozenset({"print", "scalar", "histogram", "info", "debug", "warning", "log", "write"}), w.GRADIENTS_LOGGED),
)
_FLOW_CODES = frozenset(code for _, code in _GRADIENT_FLOWS)

_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
# All-reduces the unscaled gradients may pass through on their way to `apply_gradients`: they sum or average,
# so they commute with the division by the loss scale (Horovod's `compression=` is excluded: fp16 could overflow).
_ALL_REDUCES = frozenset({"allreduce", "grouped_allreduce", "all_reduce"})
_LINEAR_REDUCE_KEYWORDS = frozenset({"average", "name", "prescale_factor", "postscale_factor", "device_dense"})
_LINEAR_REDUCE_OPS = frozenset({"Average", "Sum", "SUM", "MEAN"})
# Where Keras 2's and tf_keras's LossScaleOptimizer live: code that checks `isinstance(opt, <one of them>)` is
# written for a class without `scale_loss`, whose `apply_gradients` does not unscale.
_KERAS2_LSO_MODULES = ("keras.src.mixed_precision.", "keras.mixed_precision.loss_scale_optimizer.", "tf_keras.")


def _flow_of_calls(calls: Sequence[cst.Call]) -> str | None:
    names = {called_name_of(call) for call in calls}
    for flow_names, code in _GRADIENT_FLOWS:
        if names & flow_names:
            return code
    return None


class CustomLoopRule(RuleBase):
    """Plans the Keras 3 custom-loop rewrites, or keeps the loop on TF 2.4's contract."""

    def _shim_escaping(self, decisions: dict[Expr, SiteEdit], loops: Sequence[cst.Call]) -> None:
        """Builds an experimental LossScaleOptimizer whose object leaves the module with our class (Keras 3).

        Callers the codemod cannot see may call TF 2.4's methods on it; a loop here rewritten for Keras 3's
        class on the same object keeps it on Keras 3's class.
        """
        for site, edit in list(decisions.items()):
            if (
                not isinstance(edit, Wrap)
                or edit.row.rule != "loss_scale_optimizer"
                or not _tf1.escapes(self.facts, edit.call)
            ):
                continue
            self.plan.lso_calls = {edit.call}
            traced = any(
                isinstance(call.func, cst.Attribute) and self._is_migrated_optimizer(call.func.value) for call in loops
            )
            self.plan.lso_calls = set()
            if not traced:
                decisions[site] = ShimWrap(dataclasses.replace(edit, new_name=LOOP_SHIM), w.ESCAPING_SHIM_NOTE)

    def _keep_loops_on_shim(self, decisions: dict[Expr, SiteEdit], loops: Sequence[cst.Call]) -> bool:
        """Builds this file's TF 2.4 optimizers with our class when its custom loop cannot be rewritten.

        Keras 3's class has no `get_scaled_loss`/`get_unscaled_gradients`, so rewriting the construction
        while leaving such a call would leave a file that fails at run time. Returns whether it did.
        """
        built: set[cst.CSTNode] = {edit.call for edit in decisions.values() if isinstance(edit, (Wrap, FixedFactor))}
        if not loops or not built:
            return False
        self.plan.lso_calls = built
        provable = all(
            isinstance(call.func, cst.Attribute) and self._is_migrated_optimizer(call.func.value) for call in loops
        )
        problems = [(call, self._loop_problem(call)) for call in loops] if provable else []
        self.plan.lso_calls = set()
        if provable and not any(code for _, code in problems):
            return False
        for call, code in problems:
            if code is not None:
                self.plan.warn(call, code)
        for site, edit in list(decisions.items()):
            if isinstance(edit, (Wrap, FixedFactor)):  # a LossScaleOptimizer call, or a graph rewrite's wrap
                wrap = Wrap(edit.call, edit.opt, edit.scale, LOOP_SHIM, edit.row)
                decisions[site] = ShimWrap(wrap, w.LOOP_SHIM_NOTE)
        return True

    def _keep_applies_on_shim(self, decisions: dict[Expr, SiteEdit], loops: Sequence[cst.Call]) -> bool:
        """Builds this file's TF 2.4 optimizers with our class when it applies gradients it never scaled.

        With no `get_scaled_loss` in the file, an `apply_gradients` passes gradients TF 2.4 applied as they
        were and Keras 3's class would divide; `get_gradients` is gone from Keras 3's class. Returns whether it did.
        """
        if not self.facts.applies or not any(isinstance(edit, (Wrap, FixedFactor)) for edit in decisions.values()):
            return False
        methods = {cst.ensure_type(call.func, cst.Attribute).attr.value for call in self.facts.applies}
        if loops and "get_gradients" not in methods:
            return False
        for site, edit in list(decisions.items()):
            if isinstance(edit, (Wrap, FixedFactor)):
                wrap = Wrap(edit.call, edit.opt, edit.scale, LOOP_SHIM, edit.row)
                decisions[site] = ShimWrap(wrap, w.UNSCALED_APPLY_SHIM_NOTE)
        return True

    def _is_migrated_optimizer(self, receiver: Expr) -> bool:
        """Returns whether `receiver` is a name bound once, here, to a migrated LossScaleOptimizer call."""
        if not isinstance(receiver, cst.Name):
            return False
        scope = self.facts.scopes.get(receiver)
        if scope is None:
            return False
        accesses = [a for a in scope.accesses[receiver] if a.node is receiver]
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return False
        (binding,) = accesses[0].referents
        target = getattr(binding, "node", None)
        if not isinstance(target, cst.Name) or self.facts.single_assignment(target) is not binding:
            return False
        assign_target = self.facts.parent(target)
        assign = self.facts.parent(assign_target) if assign_target is not None else None
        return (
            isinstance(assign_target, cst.AssignTarget)
            and isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and assign.value in self.plan.lso_calls
        )

    def _loop_problem(self, call: cst.Call) -> str | None:
        """Why a loop call on a provably migrated optimizer cannot be rewritten for Keras 3, or None."""
        if len(call.args) != 1 or call.args[0].star or call.args[0].keyword is not None:
            return w.BAD_ARGUMENTS
        if cst.ensure_type(call.func, cst.Attribute).attr.value == "get_scaled_loss":
            return None
        try:
            self._unscaled_rewrite(call)
        except Unsafe as unsafe:
            return unsafe.code
        return None

    def _plan_loops(self, loops: Sequence[cst.Call]) -> None:
        """Plans the Keras 3 custom-loop rewrites: per call on a traced optimizer, per receiver on an untraced one."""
        groups: dict[tuple[str, cst.CSTNode], list[cst.Call]] = {}
        for call in loops:
            receiver = cst.ensure_type(call.func, cst.Attribute).value
            if self._is_migrated_optimizer(receiver):
                self._plan_loop(call)
            else:
                groups.setdefault(self._receiver_key(call, receiver), []).append(call)
        for calls in groups.values():
            self._plan_untraced(calls)

    def _plan_loop(self, call: cst.Call) -> None:
        """Plans the Keras 3 custom-loop rewrites for one `x.get_*scaled*` call on a migrated optimizer."""
        assert isinstance(call.func, cst.Attribute)
        method = call.func.attr.value
        if len(call.args) != 1 or call.args[0].star or call.args[0].keyword is not None:
            self.plan.warn(call, w.BAD_ARGUMENTS)
            return
        if method == "get_scaled_loss":
            self.plan.replace[call.func] = NewAttr("scale_loss")
            return
        try:
            self._plan_unscaled(call)
        except Unsafe as unsafe:
            self.plan.warn(call, unsafe.code)

    def _receiver_key(self, call: cst.Call, receiver: Expr) -> tuple[str, cst.CSTNode]:
        """The receiver's text and owner: its class for `self.x`, else the function (or module) it is read in.

        Calls with the same key are taken to be on the same object. A receiver that is not a dotted name
        (`make().get_scaled_loss`) gets a key of its own.
        """
        text = cst.Module(body=[]).code_for_node(receiver)
        root = receiver
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return text, call
        node = self.facts.parent(call)
        function: cst.CSTNode | None = None
        while node is not None:
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                function = function or node
                positional = [*node.params.posonly_params, *node.params.params]
                named = [*positional, *node.params.kwonly_params]
                if any(param.name.value == root.value for param in named):
                    block = self.facts.parent(node)
                    owner = self.facts.parent(block) if block is not None else None
                    if (
                        isinstance(node, cst.FunctionDef)
                        and positional
                        and positional[0].name.value == root.value
                        and isinstance(owner, cst.ClassDef)
                    ):
                        return text, owner
                    return text, node
            node = self.facts.parent(node)
        return text, function or self.facts.module

    def _plan_untraced(self, calls: list[cst.Call]) -> None:
        """Rewrites one untraced receiver's loop calls for Keras 3 all together, or warns at each of them.

        Only loss-scale optimizers have these methods, and Keras 3's class and ours both unscale in
        `apply_gradients` when `get_unscaled_gradients` was not called; half a group rewritten would call
        `scale_loss` and `get_unscaled_gradients` on one object, which Keras 3's class cannot run.
        """
        methods = [cst.ensure_type(call.func, cst.Attribute).attr.value for call in calls]
        plans = None
        if (
            "get_scaled_loss" in methods
            and "get_unscaled_gradients" in methods
            and all(len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None for call in calls)
            and not any(self._checked_for_keras2s_class(call) for call in calls)
        ):
            try:
                plans = [
                    self._unscaled_rewrite(call, untraced=True)
                    for call, method in zip(calls, methods)
                    if method == "get_unscaled_gradients"
                ]
            except Unsafe:
                plans = None
        if plans is None:
            for call in calls:
                self.plan.warn(call, self._untraced_flow(call) or w.RECEIVER_NOT_PROVEN)
            return
        for call, method in zip(calls, methods):
            if method == "get_scaled_loss":
                self.plan.replace[call.func] = NewAttr("scale_loss")
            self.plan.warn(call, w.UNTRACED_LOOP_NOTE)
        for plan in plans:
            self._apply_unscaled(*plan)

    def _checked_for_keras2s_class(self, call: cst.Call) -> bool:
        """Whether `call` runs under `if isinstance(<its receiver>, <Keras 2's or tf_keras's LossScaleOptimizer>):`."""
        receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
        node = self.facts.parent(call)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            test = node.test if isinstance(node, cst.If) else None
            if (
                isinstance(test, cst.Call)
                and called_name_of(test) == "isinstance"
                and len(test.args) == 2
                and cst.Module(body=[]).code_for_node(test.args[0].value) == receiver
                and any(name.startswith(_KERAS2_LSO_MODULES) for name in self.facts.qualified(test.args[1].value))
            ):
                return True
            node = self.facts.parent(node)
        return False

    def _untraced_flow(self, call: cst.Call) -> str | None:
        """Where unscaled gradients from an untraced optimizer go, if anywhere but its `apply_gradients`:
        clipping, a norm, accumulation or logging (that code's advice, not LSC113's, fits the call), else
        LSC107 for any other use after the call."""
        assign = self.facts.parent(call)
        line = self.facts.parent(assign) if assign is not None else None
        if not (
            cst.ensure_type(call.func, cst.Attribute).attr.value == "get_unscaled_gradients"
            and isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and line is not None
        ):
            return None
        target = assign.targets[0].target
        receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
        end = self.facts.position(line).end.line
        codes = [
            code
            for access in self.facts.scopes[call].accesses[target.value]
            if self.facts.position(access.node).start.line > end
            and (code := self._use_problem(access.node, receiver)) is not None
        ]
        return next((code for code in codes if code in _FLOW_CODES), codes[0] if codes else None)

    def _plan_other_scale_read(self, read: cst.Attribute) -> None:
        """`opt.loss_scale` on Keras 3: renamed where `opt` is provably Keras 3's class, else warned."""
        parent = self.facts.parent(read)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)):
            return
        value = self.facts.assigned_value(read.value) if isinstance(read.value, cst.Name) else None
        if value is not None and value in self.plan.lso_calls:
            if value not in self.plan.shim_calls:
                self._plan_scale_read(read)
            return
        self.plan.warn(read, w.SCALE_READ_NOT_PROVEN)

    def _plan_scale_read(self, read: cst.Attribute) -> None:
        """`<model>.optimizer.loss_scale` -> `.dynamic_scale`: the name of the current scale on Keras 3."""
        parent = self.facts.parent(read)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) or (
            isinstance(parent, cst.Call) and parent.func is read
        ):
            self.plan.warn(read, w.UNSUPPORTED_USE)
            return
        self.plan.replace[read] = NewAttr("dynamic_scale")
        self.plan.warn(read, w.SCALE_READ_NOTE)

    def _plan_unscaled(self, call: cst.Call) -> None:
        self._apply_unscaled(*self._unscaled_rewrite(call))

    def _apply_unscaled(self, uses: list[cst.CSTNode], source: cst.Name | None, drop: cst.CSTNode) -> None:
        """Renames `uses` to `source` and drops the statement `drop`; a call `drop` becomes its argument."""
        if isinstance(drop, cst.Call):
            self.plan.replace[drop] = FirstArgument()
            return
        if source is not None:
            for node in uses:
                self.plan.replace[node] = cst.Name(source.value)
        self.plan.drop_statements.add(drop)

    def _unscaled_rewrite(
        self, call: cst.Call, untraced: bool = False
    ) -> tuple[list[cst.CSTNode], cst.Name | None, cst.CSTNode]:
        """(uses to rename, the scaled-gradients name they take or None, what to drop); raises Unsafe.

        What to drop is the statement `g = opt.get_unscaled_gradients(g)`. For an `untraced` receiver, whose
        object the rewrite leaves as it is, it may also be an `if flag:` holding only that statement, or,
        where the statement has to stay (`g` bound elsewhere too, the argument not a name, the call inside
        `apply_gradients`), the call itself, which becomes its argument; and the gradients may pass through
        an all-reduce. A traced optimizer becomes Keras 3's class, so its loop keeps the narrow rule: what
        it leaves out stays on our class (LSC120), which also keeps TF 2.4's `iterations` and strategies.
        """
        receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
        assign = self.facts.parent(call)
        line = self.facts.parent(assign) if assign is not None else None
        block = self.facts.parent(line) if line is not None else None
        source = call.args[0].value
        if not (isinstance(assign, cst.Assign) and assign.value is call):
            if untraced and self._inside_apply_gradients(call, receiver) and not has_comment(call):
                return [], None, call  # `opt.apply_gradients(zip(opt.get_unscaled_gradients(g), vs))`
            raise Unsafe(w.UNSCALED_GRADIENTS_USED)
        if not (
            len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(block, (cst.IndentedBlock, cst.Module))
            and not has_comment(line.body[0])
        ):
            raise Unsafe(w.UNSCALED_GRADIENTS_USED)
        target = assign.targets[0].target.value
        source_name = source.value if isinstance(source, cst.Name) else None
        scope = self.facts.scopes[call]
        end = self.facts.position(line).end.line
        start = self.facts.position(line).start.line
        uses: list[cst.CSTNode] = []
        for access in scope.accesses[target]:
            position = self.facts.position(access.node).start.line
            if start <= position <= end:
                continue
            if position < start:
                if target != source_name:
                    raise Unsafe(w.UNSCALED_GRADIENTS_USED)
                continue
            problem = self._use_problem(access.node, receiver, untraced)
            if problem is not None:
                raise Unsafe(problem)
            uses.append(access.node)
        if not uses:
            raise Unsafe(w.UNSCALED_GRADIENTS_USED)
        guard = line if len(block.body) > 1 else self._lone_guard(block) if untraced else None
        if guard is None and untraced and target == source_name:
            guard = line  # its block keeps `pass`
        if guard is not None and target == source_name:
            return uses, None, guard
        later = [
            a
            for a in scope.assignments[source_name or ""]
            if a.node is not None and self.facts.position(a.node).start.line >= start
        ]
        if guard is not None and isinstance(source, cst.Name) and not later and len(scope.assignments[target]) == 1:
            return uses, source, guard
        if not untraced:
            raise Unsafe(w.UNSCALED_GRADIENTS_USED)
        return [], None, call  # `g = scaled_g` in this branch, whatever the other branches bind

    def _lone_guard(self, block: cst.IndentedBlock | cst.Module) -> cst.If | None:
        """The `if flag:` whose whole body is `block`, to drop with it, if there is one.

        Only a test of a dotted name (`amp`, `params.use_amp`) or `isinstance` of two, no `else`, no comments
        and a statement beside it: dropping it then only skips reading a flag.
        """
        guard = self.facts.parent(block)
        outer = self.facts.parent(guard) if guard is not None else None
        test = guard.test if isinstance(guard, cst.If) else None
        tested: list[cst.CSTNode] = [test] if test is not None else []
        if isinstance(test, cst.Call) and called_name_of(test) == "isinstance" and len(test.args) == 2:
            tested = [arg.value if arg.keyword is None and not arg.star else arg for arg in test.args]
        if (
            isinstance(guard, cst.If)
            and guard.orelse is None
            and tested
            and all(
                isinstance(root_of(name), cst.Name) and isinstance(name, (cst.Name, cst.Attribute)) for name in tested
            )
            and isinstance(outer, (cst.IndentedBlock, cst.Module))
            and len(outer.body) > 1
            and not has_comment(guard)
        ):
            return guard
        return None

    def _use_problem(self, node: cst.CSTNode, receiver: str, reduces: bool = True) -> str | None:
        """None if this use of unscaled gradients only reaches `receiver.apply_gradients` (if `reduces`, maybe
        through an all-reduce bound to a name); else the warning code for where it goes."""
        if self._inside_apply_gradients(node, receiver):
            return None
        reduced = self._all_reduced_into(node) if reduces else None
        if reduced is not None:
            end = self.facts.position(reduced).end.line
            later = [
                access.node
                for access in self.facts.scopes[reduced].accesses[reduced.value]
                if self.facts.position(access.node).start.line > end
            ]
            if later and all(self._inside_apply_gradients(use, receiver) for use in later):
                return None
        return self._gradient_flow(node)

    def _all_reduced_into(self, node: cst.CSTNode) -> cst.Name | None:
        """The name bound to `hvd.allreduce(g)`, `[hvd.allreduce(x) for x in g]` or `ctx.all_reduce(op, g)`
        when `node` is that `g`, else None."""
        parent = self.facts.parent(node)
        value: cst.CSTNode | None = None
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.facts.parent(parent)
            if isinstance(call, cst.Call) and self._linear_reduce(call, parent):
                value = call
        elif isinstance(parent, cst.CompFor) and parent.iter is node and isinstance(parent.target, cst.Name):
            comp = self.facts.parent(parent)
            element = getattr(comp, "elt", None)
            if (
                isinstance(comp, (cst.ListComp, cst.GeneratorExp))
                and parent.inner_for_in is None
                and not parent.ifs
                and isinstance(element, cst.Call)
                and any(
                    isinstance(arg.value, cst.Name)
                    and arg.value.value == parent.target.value
                    and self._linear_reduce(element, arg)
                    for arg in element.args
                )
            ):
                value = comp
        assign = self.facts.parent(value) if value is not None else None
        if (
            isinstance(assign, cst.Assign)
            and assign.value is value
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
        ):
            return assign.targets[0].target
        return None

    @staticmethod
    def _linear_reduce(call: cst.Call, arg: cst.Arg) -> bool:
        """Whether `call` sums or averages `arg` across workers (a Horovod or tf.distribute all-reduce)."""
        name = called_name_of(call)
        if name not in _ALL_REDUCES or arg.star or arg.keyword is not None:
            return False
        others = [other for other in call.args if other is not arg]
        if name == "all_reduce" and others and others[0] is call.args[0] and others[0].keyword is None:
            others = others[1:]  # tf.distribute's `all_reduce(reduce_op, value)`: a ReduceOp is SUM or MEAN
        for other in others:
            if other.star or other.keyword is None:
                return False
            if other.keyword.value == "op":
                if not (isinstance(other.value, cst.Attribute) and other.value.attr.value in _LINEAR_REDUCE_OPS):
                    return False
            elif other.keyword.value not in _LINEAR_REDUCE_KEYWORDS:
                return False
        return True

    def _gradient_flow(self, node: cst.CSTNode) -> str:
        """The warning code for where a use of unscaled gradients goes: clipping, a norm, accumulation, logging."""
        child, parent = node, self.facts.parent(node)
        calls: list[cst.Call] = []
        while parent is not None and not isinstance(parent, cst.BaseStatement):
            if isinstance(parent, cst.Call) and child is not parent.func:
                calls.append(parent)
            elif isinstance(parent, _COMPREHENSIONS) and child is not getattr(parent, "elt", None):
                inside = calls_in(parent.elt if hasattr(parent, "elt") else parent.value)  # `[f(g) for g in gs]`
                if inside.adds:
                    return w.GRADIENTS_ACCUMULATED
                calls.extend(inside.found)
            elif (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)) or (
                isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign)
            ):
                return w.GRADIENTS_ACCUMULATED
            child, parent = parent, self.facts.parent(parent)
        if isinstance(parent, cst.For) and child is parent.iter:  # `for g in grads: ...`
            inside = calls_in(parent.body)
            if inside.adds:
                return w.GRADIENTS_ACCUMULATED
            calls.extend(inside.found)
        return _flow_of_calls(calls) or w.UNSCALED_GRADIENTS_USED

    def _inside_apply_gradients(self, node: cst.CSTNode, receiver: str) -> bool:
        """Whether `node` is an argument of `receiver.apply_gradients`, as it is or through `zip`/`list`/`tuple`."""
        child, parent = node, self.facts.parent(node)
        while isinstance(parent, (cst.Arg, cst.Call)):
            if isinstance(parent, cst.Call):
                if child is parent.func:
                    return False
                if (
                    isinstance(parent.func, cst.Attribute)
                    and parent.func.attr.value == "apply_gradients"
                    and cst.Module(body=[]).code_for_node(parent.func.value) == receiver
                ):
                    return True
                if called_name_of(parent) not in ("zip", "list", "tuple"):
                    return False
            elif parent.star == "**" or child is not parent.value:
                return False
            child, parent = parent, self.facts.parent(parent)
        return False
