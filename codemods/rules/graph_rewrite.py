"""Graph rewrite: `disable_mixed_precision_graph_rewrite()` is removed; enabling it is wrapped (see optimizer), kept
on TF1's name for a TF1 optimizer, or, for an optimizer of unknown kind, left to lossscale_compat's run-time
fallback, which chooses by kind when called."""

from __future__ import annotations

import libcst as cst

from .. import _tf1
from .. import _warnings as w
from .._edits import DropCall, NewName, SiteEdit
from .._values import Unsafe, has_comment
from . import optimizer, tf1
from .site import Site


def decide(site: Site) -> SiteEdit:
    if site.call is None:
        raise Unsafe(w.UNSUPPORTED_USE)
    bound = site.bound()
    kind = _tf1.optimizer_kind(site.facts, bound["opt"].value, site.call)
    if kind is None and _decided_when_called(bound):
        return NewName(site.row.fallback, w.GRAPH_REWRITE_FALLBACK_NOTE)  # TF 2.4's choice by kind, made when called
    if kind is None:
        raise Unsafe(w.GRAPH_REWRITE_KIND_UNKNOWN)
    if kind != _tf1.KERAS:
        return tf1.kept_name(site)
    return optimizer.wrap(site, bound)


def kept_for_tf1(site: Site) -> bool:
    """Whether the rewrite stays on TF1 (a TF1 optimizer), or is left alone (an optimizer of unknown kind)."""
    if site.call is None:
        return False
    try:
        bound = site.bound()
    except Unsafe:
        return False
    kind = _tf1.optimizer_kind(site.facts, bound["opt"].value, site.call)
    return kind != _tf1.KERAS and not (kind is None and _decided_when_called(bound))


def decide_disable(site: Site) -> SiteEdit:
    """`disable_mixed_precision_graph_rewrite()` as a statement of its own is removed; raises Unsafe otherwise."""
    call = site.call
    if call is None:
        raise Unsafe(w.DISABLE_VALUE_USED)
    statement = site.facts.parent(call)
    line = site.facts.parent(statement) if statement is not None else None
    if not (
        isinstance(statement, cst.Expr)
        and statement.value is call
        and isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
    ):
        raise Unsafe(w.DISABLE_VALUE_USED)
    if call.args:
        raise Unsafe(w.BAD_ARGUMENTS)
    return DropCall(statement)


def _decided_when_called(bound: dict[str, cst.Arg]) -> bool:
    """Whether lossscale_compat's `enable_mixed_precision_graph_rewrite` takes this call's loss scale for either
    kind of optimizer: none, or a literal (`'dynamic'`, a number). A LossScale object is not one: TF1's rewrite
    wants TensorFlow's class, a Keras optimizer lossscale_compat's, and the kind is not known."""
    if "loss_scale" not in bound:
        return True
    value = bound["loss_scale"].value
    return isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)) and not has_comment(bound["loss_scale"])
