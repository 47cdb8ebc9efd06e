"""TF1: sites that stay on TensorFlow's own `tf.compat.v1.mixed_precision` names, and TF1's loss-scale optimizer."""

from __future__ import annotations

from .. import _tf1
from .. import _warnings as w
from .._edits import KEEP, NewName, SiteEdit
from .._values import Unsafe
from .site import Site


def kept_name(site: Site) -> SiteEdit:
    """Keeps a TF1 site on TensorFlow's own `tf.compat.v1.mixed_precision` name (unchanged if it already is)."""
    name = site.facts.qualified_one(site.node)
    assert name is not None  # a site has one qualified name (`SiteCollector._site`)
    if name.startswith("tensorflow.compat.v1."):
        return KEEP  # still exported by TensorFlow: nothing to change
    return NewName(f"{_tf1.TF1_MODULE}.{name.rpartition('.')[2]}", w.TF1_KEPT_NOTE)


def kept_for_tf1(site: Site) -> bool:
    """Whether TF1's `MixedPrecisionLossScaleOptimizer` here wraps a provably TF1 optimizer."""
    if site.call is None:
        return False
    try:
        bound = site.bound()
    except Unsafe:
        return False
    return _tf1.optimizer_kind(site.facts, bound["opt"].value, site.call) == _tf1.TF1


def decide_optimizer(site: Site) -> SiteEdit:
    """TF1's `MixedPrecisionLossScaleOptimizer` of a provably TF1 optimizer stays on TensorFlow's v1 name."""
    if not kept_for_tf1(site):
        raise Unsafe(w.TF1_LOSS_SCALE_OPTIMIZER)
    return kept_name(site)
