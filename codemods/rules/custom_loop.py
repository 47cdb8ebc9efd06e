"""Custom-loop methods: `get_scaled_loss`/`get_unscaled_gradients` and `optimizer.loss_scale` reads on Keras 3."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from .. import _tf1
from .. import _warnings as w
from .._scan import SiteScan
from .._state import Decision
from .._values import _called_name, _calls_in, _Expr, _has_comment, _Unsafe
from ..rules.optimizer import _LOOP_SHIM

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


def _flow_of_calls(calls: Sequence[cst.Call]) -> str | None:
    names = {_called_name(call) for call in calls}
    for flow_names, code in _GRADIENT_FLOWS:
        if names & flow_names:
            return code
    return None


class CustomLoopRule(SiteScan):
    """Plans the Keras 3 custom-loop rewrites, or keeps the loop on TF 2.4's contract."""

    def _shim_escaping(self, decisions: dict[_Expr, Decision], loops: list[cst.Call]) -> None:
        """Builds an experimental LossScaleOptimizer whose object leaves the module with our class (Keras 3).

        Callers the codemod cannot see may call TF 2.4's methods on it; a loop here rewritten for Keras 3's
        class on the same object keeps it on Keras 3's class.
        """
        for site, (kind, payload) in list(decisions.items()):
            if kind != "wrap" or payload[4].rule != "loss_scale_optimizer" or not _tf1.escapes(self, payload[0]):
                continue
            self._lso_calls = {payload[0]}
            traced = any(
                isinstance(call.func, cst.Attribute) and self._is_migrated_optimizer(call.func.value) for call in loops
            )
            self._lso_calls = set()
            if not traced:
                decisions[site] = ("escape_shim", (*payload[:3], _LOOP_SHIM, payload[4]))

    def _keep_loops_on_shim(self, decisions: dict[_Expr, Decision], loops: list[cst.Call]) -> bool:
        """Builds this file's TF 2.4 optimizers with our class when its custom loop cannot be rewritten.

        Keras 3's class has no `get_scaled_loss`/`get_unscaled_gradients`, so rewriting the construction
        while leaving such a call would leave a file that fails at run time. Returns whether it did.
        """
        built = {payload[0] for kind, payload in decisions.values() if kind in ("wrap", "fixed_factor")}
        if not loops or not built:
            return False
        self._lso_calls = built
        provable = all(
            isinstance(call.func, cst.Attribute) and self._is_migrated_optimizer(call.func.value) for call in loops
        )
        problems = [(call, self._loop_problem(call)) for call in loops] if provable else []
        self._lso_calls = set()
        if provable and not any(code for _, code in problems):
            return False
        for call, code in problems:
            if code is not None:
                self._warn(call, code)
        for site, (kind, payload) in list(decisions.items()):
            if kind not in ("wrap", "fixed_factor"):
                continue
            call, opt, scale = payload[:3]
            row = payload[4] if kind == "wrap" else payload[3]  # (call, opt, scale, name, row) / (..., row, compiles)
            if row.rule == "loss_scale_optimizer":
                decisions[site] = ("loop_shim", (call, opt, scale, _LOOP_SHIM, row))
        return True

    def _is_migrated_optimizer(self, receiver: _Expr) -> bool:
        """Returns whether `receiver` is a name bound once, here, to a migrated LossScaleOptimizer call."""
        if not isinstance(receiver, cst.Name):
            return False
        scope = self._scopes.get(receiver)
        if scope is None:
            return False
        accesses = [a for a in scope.accesses[receiver] if a.node is receiver]
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return False
        (binding,) = accesses[0].referents
        target = getattr(binding, "node", None)
        if not isinstance(target, cst.Name) or self._single_assignment(target) is not binding:
            return False
        assign_target = self._parent(target)
        assign = self._parent(assign_target) if assign_target is not None else None
        return (
            isinstance(assign_target, cst.AssignTarget)
            and isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and assign.value in self._lso_calls
        )

    def _loop_problem(self, call: cst.Call) -> str | None:
        """Why a loop call on a provably migrated optimizer cannot be rewritten for Keras 3, or None."""
        if len(call.args) != 1 or call.args[0].star or call.args[0].keyword is not None:
            return w.BAD_ARGUMENTS
        if cst.ensure_type(call.func, cst.Attribute).attr.value == "get_scaled_loss":
            return None
        try:
            self._unscaled_rewrite(call)
        except _Unsafe as unsafe:
            return unsafe.code
        return None

    def _plan_loop(self, call: cst.Call) -> None:
        """Plans the Keras 3 custom-loop rewrites for one `x.get_*scaled*` call."""
        assert isinstance(call.func, cst.Attribute)
        method = call.func.attr.value
        if not self._is_migrated_optimizer(call.func.value):
            self._warn(call, self._untraced_flow(call) or w.RECEIVER_NOT_PROVEN)
            return
        if len(call.args) != 1 or call.args[0].star or call.args[0].keyword is not None:
            self._warn(call, w.BAD_ARGUMENTS)
            return
        if method == "get_scaled_loss":
            self._replace[call.func] = ("attr", "scale_loss")
            return
        try:
            self._plan_unscaled(call)
        except _Unsafe as unsafe:
            self._warn(call, unsafe.code)

    def _untraced_flow(self, call: cst.Call) -> str | None:
        """Where unscaled gradients from an untraced optimizer go (clipping, a norm, accumulation, logging), if
        anywhere Keras 3's contract would change: that code's advice, not LSC113's, fits the call."""
        assign = self._parent(call)
        if not (
            cst.ensure_type(call.func, cst.Attribute).attr.value == "get_unscaled_gradients"
            and isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
        ):
            return None
        target = assign.targets[0].target
        receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
        for access in self._scopes[call].accesses[target.value]:
            if access.node is not target and not self._inside_apply_gradients(access.node, receiver):
                code = self._gradient_flow(access.node)
                if code in _FLOW_CODES:
                    return code
        return None

    def _plan_other_scale_read(self, read: cst.Attribute) -> None:
        """`opt.loss_scale` on Keras 3: renamed where `opt` is provably Keras 3's class, else warned."""
        parent = self._parent(read)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)):
            return
        value = self._assigned_value(read.value) if isinstance(read.value, cst.Name) else None
        if value is not None and value in self._lso_calls:
            if value not in self._shim_calls:
                self._plan_scale_read(read)
            return
        self._warn(read, w.SCALE_READ_NOT_PROVEN)

    def _plan_scale_read(self, read: cst.Attribute) -> None:
        """`<model>.optimizer.loss_scale` -> `.dynamic_scale`: the name of the current scale on Keras 3."""
        parent = self._parent(read)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) or (
            isinstance(parent, cst.Call) and parent.func is read
        ):
            self._warn(read, w.UNSUPPORTED_USE)
            return
        self._replace[read] = ("attr", "dynamic_scale")
        self._warn(read, w.SCALE_READ_NOTE)

    def _plan_unscaled(self, call: cst.Call) -> None:
        uses, source, line = self._unscaled_rewrite(call)
        if source is not None:
            for node in uses:
                self._replace[node] = cst.Name(source)
        self._drop_statements.add(line)

    def _unscaled_rewrite(self, call: cst.Call) -> tuple[list[cst.CSTNode], str | None, cst.SimpleStatementLine]:
        """(uses to rename, the scaled-gradients name they take or None, the line to drop); raises _Unsafe."""
        assign = self._parent(call)
        line = self._parent(assign) if assign is not None else None
        block = self._parent(line) if line is not None else None
        source = call.args[0].value
        if not (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(source, cst.Name)
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(block, (cst.IndentedBlock, cst.Module))
            and len(block.body) > 1
            and not _has_comment(line.body[0])
        ):
            raise _Unsafe(w.UNSCALED_GRADIENTS_USED)
        target = assign.targets[0].target.value
        receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
        scope = self._scopes[call]
        end = self._position(line).end.line
        start = self._position(line).start.line
        uses: list[cst.CSTNode] = []
        for access in scope.accesses[target]:
            position = self._position(access.node).start.line
            if start <= position <= end:
                continue
            if position < start:
                if target != source.value:
                    raise _Unsafe(w.UNSCALED_GRADIENTS_USED)
                continue
            if not self._inside_apply_gradients(access.node, receiver):
                raise _Unsafe(self._gradient_flow(access.node))
            uses.append(access.node)
        if not uses:
            raise _Unsafe(w.UNSCALED_GRADIENTS_USED)
        if target != source.value:
            later = [
                a
                for a in scope.assignments[source.value]
                if a.node is not None and self._position(a.node).start.line >= start
            ]
            if len(scope.assignments[target]) != 1 or later:
                raise _Unsafe(w.UNSCALED_GRADIENTS_USED)
            return uses, source.value, line
        return uses, None, line

    def _gradient_flow(self, node: cst.CSTNode) -> str:
        """The warning code for where a use of unscaled gradients goes: clipping, a norm, accumulation, logging."""
        child, parent = node, self._parent(node)
        calls: list[cst.Call] = []
        while parent is not None and not isinstance(parent, cst.BaseStatement):
            if isinstance(parent, cst.Call) and child is not parent.func:
                calls.append(parent)
            elif isinstance(parent, _COMPREHENSIONS) and child is not getattr(parent, "elt", None):
                inside = _calls_in(parent.elt if hasattr(parent, "elt") else parent.value)  # `[f(g) for g in gs]`
                if inside.adds:
                    return w.GRADIENTS_ACCUMULATED
                calls.extend(inside.found)
            elif (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)) or (
                isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign)
            ):
                return w.GRADIENTS_ACCUMULATED
            child, parent = parent, self._parent(parent)
        if isinstance(parent, cst.For) and child is parent.iter:  # `for g in grads: ...`
            inside = _calls_in(parent.body)
            if inside.adds:
                return w.GRADIENTS_ACCUMULATED
            calls.extend(inside.found)
        return _flow_of_calls(calls) or w.UNSCALED_GRADIENTS_USED

    def _inside_apply_gradients(self, node: cst.CSTNode, receiver: str) -> bool:
        child, parent = node, self._parent(node)
        while parent is not None and not isinstance(parent, (cst.BaseStatement, cst.Lambda)):
            if (
                isinstance(parent, cst.Call)
                and child is not parent.func
                and isinstance(parent.func, cst.Attribute)
                and parent.func.attr.value == "apply_gradients"
                and cst.Module(body=[]).code_for_node(parent.func.value) == receiver
            ):
                return True
            child, parent = parent, self._parent(parent)
        return False
