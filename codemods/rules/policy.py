"""Policy: `Policy(name, loss_scale=...)`, whose loss scale is dropped only where that changes nothing."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping

from .. import _warnings as w
from .._edits import NewName, NewPolicy, SiteEdit
from .._scan import SiteScan
from .._values import Expr, Unsafe, has_comment, string_value

_FLOAT16_POLICY = "mixed_float16"


class PolicyRule(SiteScan):
    """Decides a `Policy(name, loss_scale=...)` call."""

    def _decide_policy(self, call: cst.Call, bound: dict[str, cst.Arg], row: _mapping.Rename) -> SiteEdit:
        new_name = _mapping.replacement(row, self.target)
        if "loss_scale" not in bound:
            return NewName(new_name)
        name = string_value(bound["name"].value)
        scale = bound["loss_scale"].value
        scale_text = string_value(scale)
        droppable = scale_text == "auto" or (
            name is not None
            and (
                (scale_text == "dynamic" and name == _FLOAT16_POLICY)
                or (isinstance(scale, cst.Name) and scale.value == "None" and name != _FLOAT16_POLICY)
            )
        )
        if has_comment(bound["loss_scale"]) or not (droppable or self._no_scale_policy(name, scale)):
            raise Unsafe(w.POLICY_LOSS_SCALE)
        return NewPolicy(call, bound["name"], new_name, None if droppable else w.POLICY_NO_LOSS_SCALE)

    @staticmethod
    def _no_scale_policy(name: str | None, scale: Expr) -> bool:
        """`Policy(<name known only at run time>, loss_scale=None)`: no loss scaling, whatever the policy.

        The modern policy has the same dtypes, so the call is rewritten (it would raise AttributeError where
        it stands); `LSC131` says how to keep loss scaling off where the name is `mixed_float16`.
        """
        return name is None and isinstance(scale, cst.Name) and scale.value == "None"
