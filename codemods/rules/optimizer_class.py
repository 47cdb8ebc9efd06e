"""Which class an optimizer construction becomes: the one owner of that verdict.

Every rule that sends a decided `LossScaleOptimizer(opt, loss_scale)` (or a graph rewrite's wrap) to our class,
or that names our class, asks this module: `on_shim` (a decided construction moved to our class, with why),
`named_shim` (a use of the class spelled as ours), `refused` (a refused construction kept running on our class),
and `SHIM_INSTEAD` (the refusals that go to our class rather than leave the call alone).
"""

from __future__ import annotations

from .. import _warnings as w
from .._edits import FixedFactor, NewName, ShimWrap, SiteEdit, Wrap
from .site import Site

# TF 2.4's non-experimental class, ours: the modern keyword arguments with TF 2.4's custom-loop contract.
LOOP_SHIM = "lossscale_compat.KerasLossScaleOptimizer"

# Why an experimental LossScaleOptimizer call goes to lossscale_compat's class instead of being left alone.
SHIM_INSTEAD = frozenset(
    {
        w.LOSS_SCALE_NOT_VISIBLE,
        w.MULTIPLIER_NOT_TWO,
        w.FIXED_SCALE_NOT_INLINE,
        w.FIXED_SCALE_NOT_EQUIVALENT,
        w.STAR_ARGS,
    }
)


def on_shim(edit: Wrap | FixedFactor, note: str) -> ShimWrap:
    """A decided construction built with our class instead (TF 2.4's custom-loop contract), `note` saying why."""
    return ShimWrap(Wrap(edit.call, edit.opt, edit.scale, LOOP_SHIM, edit.row, edit.folded), note)


def named_shim(note: str) -> NewName:
    """A use of TF 2.4's class spelled as our class, `note` saying why."""
    return NewName(LOOP_SHIM, note)


def refused(site: Site, code: str) -> SiteEdit | None:
    """A call refused for one of `SHIM_INSTEAD`: lossscale_compat's class, the same arguments; else None (kept)."""
    return NewName(site.row.shim, w.OPTIMIZER_SHIM_NOTE) if code in SHIM_INSTEAD else None
