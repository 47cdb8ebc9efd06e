"""Graph rewrite: `disable_mixed_precision_graph_rewrite()` is removed; enabling it is wrapped (see optimizer), kept
on TF1's name for a TF1 optimizer, or, for an optimizer of unknown kind, a loss scale no modern construction
matches, or the function used as a value, left to lossscale_compat's run-time fallback, which chooses by kind when
called."""

from __future__ import annotations

import libcst as cst

from .. import _tf1
from .. import _warnings as w
from .._edits import DropCall, NewName, SiteEdit
from .._values import Unsafe
from . import optimizer, optimizer_class, tf1
from .site import Site


def decide(site: Site) -> SiteEdit:
    if site.call is None:
        return NewName(site.row.fallback, w.VALUE_FALLBACK_NOTE)  # the function itself, called elsewhere
    bound = site.bound()
    kind = _tf1.optimizer_kind(site.facts, bound["opt"].value, site.call)
    if kind is None:
        return NewName(site.row.fallback, w.GRAPH_REWRITE_FALLBACK_NOTE)  # TF 2.4's choice by kind, made when called
    if kind != _tf1.KERAS:
        return tf1.kept_name(site)
    return optimizer.wrap(site, bound)


def refused(site: Site, code: str) -> SiteEdit | None:
    """A Keras optimizer's rewrite whose loss scale no modern construction matches: the run-time fallback, which
    wraps it in lossscale_compat's class with TF 2.4's loss scale; else None (kept)."""
    if site.call is None or code not in optimizer_class.SHIM_INSTEAD:
        return None
    return NewName(site.row.fallback, w.GRAPH_REWRITE_SHIM_NOTE)


def kept_for_tf1(site: Site) -> bool:
    """Whether the rewrite stays on TF1's name (a TF1 optimizer) or may reach TF1's rewrite when called (an optimizer
    of unknown kind): a loss-scale object built for it then keeps TensorFlow's own class, which both kinds take."""
    if site.call is None:
        return False
    try:
        bound = site.bound()
    except Unsafe:
        return False
    return _tf1.optimizer_kind(site.facts, bound["opt"].value, site.call) != _tf1.KERAS


def decide_disable(site: Site) -> SiteEdit:
    """`disable_mixed_precision_graph_rewrite()` as a statement of its own is removed; any other use of TF2's name
    calls lossscale_compat's; TF1's names, which still exist, are left with a warning."""
    call = site.call
    statement = site.facts.parent(call) if call is not None else None
    line = site.facts.parent(statement) if statement is not None else None
    if not (
        call is not None
        and isinstance(statement, cst.Expr)
        and statement.value is call
        and isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
    ):
        if site.row.fallback is not None and (call is None or not call.args):
            return NewName(site.row.fallback, w.VALUE_FALLBACK_NOTE)
        raise Unsafe(w.DISABLE_VALUE_USED)
    if call.args:
        raise Unsafe(w.BAD_ARGUMENTS)
    return DropCall(statement)
