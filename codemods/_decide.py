"""Decides each site of a module: the rule is the one its row of the mapping table names (`DECIDERS`).

The loop keeps, as its own local state, what the decisions so far settled that later ones read: the loss-scale
sites folded into a call (the `folded` of the edit decided for it) and the calls left alone (a site inside one is
kept too). Calls are decided first, so that the loss-scale site a call folds is not renamed too, and so that the
calls kept on TF1 (whose loss scale keeps TF1's name) are one frozenset before any loss-scale site reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import libcst as cst

from lossscale_compat import _mapping

from . import _tf1
from . import _warnings as w
from ._edits import KEEP, FixedFactor, SiteEdit, Wrap
from ._facts import Facts
from ._values import Expr, Unsafe
from .rules import graph_rewrite, loss_scale, optimizer, optimizer_class, policy, rename, tf1
from .rules.site import Site

# The rule for a site is its row's `rule` in the mapping table (`_mapping.RULES`): how to decide it...
DECIDERS: dict[str, Callable[[Site], SiteEdit]] = {
    "rename": rename.decide,
    "loss_scale": loss_scale.decide,
    "loss_scale_optimizer": optimizer.decide,
    "policy": policy.decide,
    "get_layer_policy": policy.decide_layer_policy,
    "graph_rewrite": graph_rewrite.decide,
    "graph_rewrite_disable": graph_rewrite.decide_disable,
    "tf1_optimizer": tf1.decide_optimizer,
}
# ...what a site its rule refused becomes instead of being kept, for the rules that have a way out (None: kept)...
REFUSED: dict[str, Callable[[Site, str], SiteEdit | None]] = {
    "loss_scale_optimizer": optimizer_class.refused,
    "graph_rewrite": graph_rewrite.refused,
    "get_layer_policy": policy.refused_layer_policy,
}
# ...and, for the rules whose calls may stay on TF1, whether one does (its loss scale then keeps TF1's name too).
KEPT_FOR_TF1: dict[str, Callable[[Site], bool]] = {
    "graph_rewrite": graph_rewrite.kept_for_tf1,
    "tf1_optimizer": tf1.kept_for_tf1,
}


@dataclasses.dataclass(frozen=True)
class Decisions:
    """Each site's edit, the loss-scale sites folded into a rewritten call, and the warnings given on the way."""

    edits: Mapping[Expr, SiteEdit]
    folded: frozenset[cst.CSTNode]
    warnings: tuple[tuple[cst.CSTNode, str], ...]


def decide_sites(facts: Facts, target: str, sites: Sequence[tuple[Expr, str]]) -> Decisions:
    """Decides each site's edit; a site inside a call left alone is kept, and a refused one warned.

    The calls first, then the loss-scale sites: the calls that stay on TF1 are known, as a frozenset, before the
    loss-scale sites (the only ones that read it) are built with it.
    """
    loop = _Loop()
    calls = [site for site in sites if _mapping.BY_OLD_NAME[site[1]].rule != "loss_scale"]
    scales = [site for site in sites if _mapping.BY_OLD_NAME[site[1]].rule == "loss_scale"]
    kept_for_tf1 = frozenset(
        call for call in (_decide_site(facts, target, site, frozenset(), loop) for site in calls) if call is not None
    )
    for site in scales:
        _decide_site(facts, target, site, kept_for_tf1, loop)
    return Decisions(MappingProxyType(loop.edits), frozenset(loop.folded), tuple(loop.warnings))


@dataclasses.dataclass
class _Loop:
    """What the decisions so far settled that later ones read: local to one `decide_sites`."""

    edits: dict[Expr, SiteEdit] = dataclasses.field(default_factory=dict)
    folded: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    kept_calls: dict[cst.CSTNode, str] = dataclasses.field(default_factory=dict)
    warnings: list[tuple[cst.CSTNode, str]] = dataclasses.field(default_factory=list)


def _decide_site(
    facts: Facts, target: str, site_of: tuple[Expr, str], kept_for_tf1: frozenset[cst.Call], loop: _Loop
) -> cst.Call | None:
    """Decides one site into `loop`; returns its call if it stays on TF1 (`KEPT_FOR_TF1`), else None."""
    node, old = site_of
    if node in loop.folded:
        return None
    parent = facts.parent(node)
    call = parent if isinstance(parent, cst.Call) and parent.func is node else None
    site = Site(facts, target, node, _mapping.BY_OLD_NAME[old], call, kept_for_tf1)
    kept = _inside(facts, node, loop.kept_calls)
    if kept is not None and not _builds_tf1_loss_scale_of(site, kept):
        loop.edits[node] = KEEP
        if facts.position(node).start.line != facts.position(kept).start.line:
            loop.warnings.append((node, loop.kept_calls[kept]))  # each line that keeps a TF 2.4 name says why
        return None
    if _assigned(facts, node):
        loop.edits[node] = _refused(site, w.NAME_ASSIGNED, loop.warnings, loop.kept_calls)
        return None
    keeps_tf1 = KEPT_FOR_TF1.get(site.row.rule)
    stays_on_tf1 = call if call is not None and keeps_tf1 is not None and keeps_tf1(site) else None
    try:
        edit = loop.edits[node] = DECIDERS[site.row.rule](site)
    except Unsafe as unsafe:
        loop.edits[node] = _refused(site, unsafe.code, loop.warnings, loop.kept_calls)
        return stays_on_tf1
    if isinstance(edit, (Wrap, FixedFactor)) and edit.folded is not None:
        loop.folded.add(edit.folded)
    return stays_on_tf1


def _assigned(facts: Facts, node: Expr) -> bool:
    """Whether `node` is assigned to or deleted (`mp.LossScaleOptimizer = None`, `del ...`), not read."""
    parent = facts.parent(node)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
        return parent.target is node
    return isinstance(parent, cst.Del) and parent.target is node


def _refused(
    site: Site, code: str, warnings: list[tuple[cst.CSTNode, str]], kept_calls: dict[cst.CSTNode, str]
) -> SiteEdit:
    """The edit of a site its rule refused: its rule's way out (`REFUSED`) if it has one for `code`, else the site
    kept, warned, and its call (if called) left alone with what it holds."""
    way_out = REFUSED.get(site.row.rule)
    edit = way_out(site, code) if way_out is not None else None
    if edit is not None:
        return edit
    warnings.append((site.node, code))
    if site.call is not None:
        kept_calls[site.call] = code
    return KEEP


def _builds_tf1_loss_scale_of(site: Site, kept: cst.CSTNode) -> bool:
    """Whether `site` builds the loss scale argument of a TF1 consumer that is itself left alone."""
    facts = site.facts
    row = _mapping.BY_OLD_NAME.get(facts.qualified_one(site.node) or "")
    return (
        site.call is not None
        and row is not None
        and row.rule == "loss_scale"
        and _tf1.only_tf1_consumers(facts, site.call, site.kept_for_tf1)
        and (grandparent := facts.parent(site.call)) is not None
        and facts.parent(grandparent) is kept
    )


def _inside(facts: Facts, node: cst.CSTNode, calls: Mapping[cst.CSTNode, str]) -> cst.CSTNode | None:
    """The call of `calls` that contains `node`, if any."""
    parent = facts.parent(node)
    while parent is not None:
        if parent in calls:
            return parent
        parent = facts.parent(parent)
    return None
