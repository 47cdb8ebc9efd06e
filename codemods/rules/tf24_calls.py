"""Calls on a loss-scale optimizer whose meaning the target's class changes, on both targets.

TF 2.4's `apply_gradients(grads_and_vars, name=None, experimental_aggregate_gradients=True)` handed both arguments
on to the inner optimizer, `name` positionally. Keras 3's class takes nothing after `grads_and_vars`; Keras 2's
(`--target tf_keras`) takes `skip_gradients_aggregation` second and hands nothing on. Neither has `get_gradients`
(the keras3 target's own rules, LSC141 and LSC143, cover it there). A wrap such a call is traced to is built with
lossscale_compat's class, which takes TF 2.4's arguments (LSC148); an untraced receiver is warned (LSC149).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from .. import _tf1
from .. import _warnings as w
from .._edits import FixedFactor, ShimWrap, SiteEdit, Wrap
from .._facts import Facts
from .._values import Expr
from . import custom_loop, keras3_notes
from .custom_loop import Edits, Warnings
from .optimizer_class import named_shim, on_shim

_AFTER_GRADS = frozenset({"name", "experimental_aggregate_gradients"})
# TF 2.4's non-experimental class: both targets keep its spelling, for a class that takes these calls differently.
_FINAL_CLASS = "tensorflow.keras.mixed_precision.LossScaleOptimizer"


def changes_meaning(call: cst.Call, target: str) -> bool:
    """Whether the target's LossScaleOptimizer would take `call` (on TF 2.4's wrapper) differently from TF 2.4's."""
    method = cst.ensure_type(call.func, cst.Attribute).attr.value
    if method == "get_gradients":
        return target != "keras3"
    return method == "apply_gradients" and any(
        arg.star or arg.keyword is None or arg.keyword.value in _AFTER_GRADS
        for arg in call.args[1:]
        if arg.keyword is None or arg.keyword.value != "grads_and_vars"
    )


def _fails_on_every_target_class(call: cst.Call, target: str) -> bool:
    """Whether `call` fails on every loss-scale optimizer class the target builds over today's optimizers:
    `get_gradients` on tf_keras (Keras 2's `LossScaleOptimizerV3` has none)."""
    return target == "tf_keras" and cst.ensure_type(call.func, cst.Attribute).attr.value == "get_gradients"


def _shim(edit: SiteEdit) -> ShimWrap:
    assert isinstance(edit, (Wrap, FixedFactor))
    return on_shim(edit, w.TF24_CALL_SHIM_NOTE)


def calls_on_shim(
    facts: Facts, decisions: Mapping[Expr, SiteEdit], loops: Sequence[cst.Call], target: str
) -> tuple[Edits, Warnings]:
    """New edits moving the wraps such calls are traced to onto our class, and warnings at the untraced calls.

    An untraced receiver is warned when this file builds a loss-scale optimizer, or its loop shows the receiver is
    one (it calls `get_scaled_loss`/`get_unscaled_gradients`), unless the file names lossscale_compat's class, which
    takes TF 2.4's arguments (the codemod's own output: a second pass warns of nothing the first did not). A call no
    class of the target has (`get_gradients` on tf_keras) moves every wrap the file builds to our class instead.
    """
    built: dict[cst.CSTNode, Expr] = {
        (edit.wrap.call if isinstance(edit, ShimWrap) else edit.call): site
        for site, edit in decisions.items()
        if isinstance(edit, (Wrap, FixedFactor, ShimWrap))
    }
    built.update(_kept_class_calls(facts, decisions))
    loop_keys = {
        custom_loop.receiver_key(facts, call, cst.ensure_type(call.func, cst.Attribute).value) for call in loops
    }
    moved: Edits = {}
    warnings: Warnings = []
    ours: bool | None = None  # whether the file names our class, asked once and only where it decides
    for call in facts.applies:
        if not changes_meaning(call, target):
            continue
        receiver = cst.ensure_type(call.func, cst.Attribute).value
        traced = [
            wrap
            for wrap in built
            if custom_loop.is_migrated_optimizer(facts, receiver, {wrap})
            or (
                isinstance(receiver, cst.Attribute)
                and isinstance(wrap, cst.Call)
                and keras3_notes.holds(facts, receiver, set(), keras3_notes.holders(facts, {wrap})[1])
            )
        ]
        if not traced and (built or custom_loop.receiver_key(facts, call, receiver) in loop_keys):
            if ours is None:
                ours = _tf1.builds_shim_optimizer(facts)
            if ours:
                continue
            if not (_fails_on_every_target_class(call, target) and built):
                warnings.append((call, w.TF24_CALL_NOT_PROVEN))
                continue
            # The untraced receiver, if it is a loss-scale optimizer, is one of this file's wraps: each goes to ours.
            traced = list(built)
        for wrap in traced:
            site = built[wrap]
            if site not in decisions:  # TF 2.4's non-experimental class, kept by the target
                moved[site] = named_shim(w.TF24_CALL_SHIM_NOTE)
            elif not isinstance(decisions[site], ShimWrap):  # not already on our class
                moved[site] = _shim(decisions[site])
    return moved, warnings


def _kept_class_calls(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> dict[cst.CSTNode, Expr]:
    """Calls of TF 2.4's non-experimental class that no decision rewrites, by call: the class's name in each."""
    calls: dict[cst.CSTNode, Expr] = {}
    for node in facts.scanned:
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, (cst.Name, cst.Attribute))
            and node.func not in decisions
            and facts.qualified_one(node.func) == _FINAL_CLASS
        ):
            calls[node] = node.func
    return calls
