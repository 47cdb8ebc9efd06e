"""Graph rewrite: `disable_mixed_precision_graph_rewrite()` is removed; enabling it is wrapped (see optimizer), or,
for an optimizer of unknown kind, left to lossscale_compat's run-time fallback, which chooses by kind when called."""

from __future__ import annotations

import libcst as cst

from .. import _warnings as w
from .._state import RuleBase
from .._values import Unsafe, has_comment


class GraphRewriteRule(RuleBase):
    """Finds the statement a `disable_mixed_precision_graph_rewrite()` call can be removed with, and says when an
    `enable_mixed_precision_graph_rewrite` call can go to the run-time fallback."""

    @staticmethod
    def _decided_when_called(bound: dict[str, cst.Arg]) -> bool:
        """Whether lossscale_compat's `enable_mixed_precision_graph_rewrite` takes this call's loss scale for either
        kind of optimizer: none, or a literal (`'dynamic'`, a number). A LossScale object is not one: TF1's rewrite
        wants TensorFlow's class, a Keras optimizer lossscale_compat's, and the kind is not known."""
        if "loss_scale" not in bound:
            return True
        value = bound["loss_scale"].value
        return isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)) and not has_comment(bound["loss_scale"])

    def _disable_statement(self, call: cst.Call | None) -> cst.Expr:
        """Returns the expression statement that is exactly `call`, or raises Unsafe."""
        if call is None:
            raise Unsafe(w.DISABLE_VALUE_USED)
        statement = self.facts.parent(call)
        line = self.facts.parent(statement) if statement is not None else None
        if not (
            isinstance(statement, cst.Expr)
            and statement.value is call
            and isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        ):
            raise Unsafe(w.DISABLE_VALUE_USED)
        if call.args:
            raise Unsafe(w.BAD_ARGUMENTS)
        return statement
