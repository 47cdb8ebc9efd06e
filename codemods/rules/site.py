"""What a rule decides from: one use of a TF 2.4 name, with the module's facts, the target and its row."""

from __future__ import annotations

import dataclasses

import libcst as cst

from lossscale_compat import _mapping

from .._facts import Facts
from .._values import Expr, bind_args

# TF 2.4's parameters of the calls a rule reads, by the rule: (names, how many are required).
PARAMETERS = {
    "loss_scale_optimizer": (("optimizer", "loss_scale"), 2),
    "graph_rewrite": (("opt", "loss_scale"), 1),
    "policy": (("name", "loss_scale"), 1),
    "get_layer_policy": (("layer",), 1),
    "tf1_optimizer": (("opt", "loss_scale"), 2),
}


@dataclasses.dataclass(frozen=True, eq=False)
class Site:
    """One site to decide; read-only, like everything a rule is given."""

    facts: Facts
    target: str
    node: Expr
    row: _mapping.Rename
    call: cst.Call | None
    """The call of the site (`node(...)`), if it is called."""
    kept_for_tf1: frozenset[cst.Call]
    """The graph rewrites and TF1 optimizers that stay on TF1 (or of an unknown optimizer): every one, for a
    loss-scale site (the only rule that reads it); empty for the calls, which are decided first."""

    def bound(self) -> dict[str, cst.Arg]:
        """The call's arguments by TF 2.4's parameter names for the row's rule, or raises Unsafe."""
        assert self.call is not None  # each rule asks only of a called site
        params, required = PARAMETERS[self.row.rule]
        return bind_args(self.call.args, params, required)
