"""Graph rewrite: `disable_mixed_precision_graph_rewrite()` is removed (enabling it is wrapped, see optimizer)."""

from __future__ import annotations

import libcst as cst

from .. import _warnings as w
from .._scan import SiteScan
from .._values import Unsafe


class GraphRewriteRule(SiteScan):
    """Finds the statement a `disable_mixed_precision_graph_rewrite()` call can be removed with."""

    def _disable_statement(self, call: cst.Call | None) -> cst.Expr:
        """Returns the expression statement that is exactly `call`, or raises Unsafe."""
        if call is None:
            raise Unsafe(w.DISABLE_VALUE_USED)
        statement = self._parent(call)
        line = self._parent(statement) if statement is not None else None
        if not (
            isinstance(statement, cst.Expr)
            and statement.value is call
            and isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        ):
            raise Unsafe(w.DISABLE_VALUE_USED)
        if call.args:
            raise Unsafe(w.BAD_ARGUMENTS)
        return statement
