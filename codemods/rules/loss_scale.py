"""Loss-scale objects: a standalone one becomes the shim's (or stays on TF1's name); a `loss_scale` argument (a
string, a number, a loss-scale object or config) is read into the modern arguments."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping

from .. import _tf1
from .. import _warnings as w
from .._edits import NewName, SiteEdit
from .._facts import Facts
from .._values import Expr, SourceScale, Unsafe, bind_args, is_pure, number_value, string_value
from . import tf1
from .site import Site

_LOSS_SCALE_PARAMS = _mapping.PARAMETERS


def decide(site: Site) -> SiteEdit:
    """A loss scale that reaches only TF1 consumers keeps TF1's name; any other becomes the shim's."""
    if site.call is not None and _tf1.only_tf1_consumers(site.facts, site.call, site.kept_for_tf1):
        return tf1.kept_name(site)
    return NewName(site.row.shim, w.SHIM_NOTE)


def read(facts: Facts, node: Expr) -> tuple[SourceScale, cst.CSTNode | None]:
    """Reads a TF 2.4 `loss_scale` argument, or raises Unsafe: (the scale, the loss-scale class site it folds)."""
    text = string_value(node)
    if text == "dynamic":
        return _mapping.translate(_mapping.DYNAMIC, {}), None
    if number_value(node) is not None:
        return _mapping.translate(_mapping.FIXED, {"loss_scale_value": node}), None
    kind = _loss_scale_class(facts, node)
    if kind is not None:
        assert isinstance(node, cst.Call)
        bound = bind_args(node.args, _LOSS_SCALE_PARAMS[kind], 1 if kind == "FixedLossScale" else 0)
        values = {name: arg.value for name, arg in bound.items()}
        in_order = kind == "DynamicLossScale" and _stays_in_order(facts, node, list(bound))
        return _loss_scale_from(kind, values, in_order), node.func
    if isinstance(node, cst.Dict):
        return _read_dict(node), None
    raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)


def _loss_scale_class(facts: Facts, node: Expr) -> str | None:
    """Returns "FixedLossScale"/"DynamicLossScale" if `node` is a call to one of them."""
    name = facts.called_name(node)
    if name is None:
        return None
    row = _mapping.BY_OLD_NAME.get(name)
    if row is None or row.rule != "loss_scale":
        return None
    short = name.rsplit(".", 1)[1]
    return short if short in _LOSS_SCALE_PARAMS else None


def _read_dict(node: cst.Dict) -> SourceScale:
    entries = _string_keyed(node)
    kind = string_value(entries.pop("class_name", cst.Name("None")))
    config = entries.pop("config", None)
    if entries or kind not in _LOSS_SCALE_PARAMS or not isinstance(config, cst.Dict):
        raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
    values = _string_keyed(config)
    if set(values) - set(_LOSS_SCALE_PARAMS[kind]):
        raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
    if kind == "FixedLossScale" and "loss_scale_value" not in values:
        raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
    return _loss_scale_from(kind, values)


def _string_keyed(node: cst.Dict) -> dict[str, Expr]:
    out: dict[str, Expr] = {}
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        key = string_value(element.key)
        if key is None or key in out:
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        out[key] = element.value
    return out


def _stays_in_order(facts: Facts, node: cst.Call, given: list[str]) -> bool:
    """Whether a `DynamicLossScale(...)` call's arguments, moved onto the wrap as its last keywords, would run in
    the order they ran: given in the wrap's order, and the loss scale the wrap's last argument."""
    params = _LOSS_SCALE_PARAMS["DynamicLossScale"]
    arg = facts.parent(node)
    wrap = facts.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        given == sorted(given, key=params.index)
        and isinstance(arg, cst.Arg)
        and isinstance(wrap, cst.Call)
        and wrap.args[-1] is arg
    )


def _loss_scale_from(kind: str, values: dict[str, Expr], in_order: bool = False) -> SourceScale:
    """The modern scale; a value other than a constant or a name (`params["scale"]`) only where it moves onto the
    wrap and still runs when it ran (`in_order`, a dynamic scale's initial value or growth period)."""
    movable = {"initial_loss_scale", "increment_period"} if kind == "DynamicLossScale" and in_order else set()
    if any(not is_pure(value) and name not in movable for name, value in values.items()):
        raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
    try:
        return _mapping.translate(kind, values, number_value)
    except _mapping.UntranslatableLossScale:
        raise Unsafe(w.MULTIPLIER_NOT_TWO) from None
