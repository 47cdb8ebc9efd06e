"""Loss-scale objects: reading a TF 2.4 `loss_scale` argument (a string, a number, a loss-scale object or config)."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping, _translation

from .. import _warnings as w
from .._state import RuleBase
from .._values import Expr, SourceScale, Unsafe, bind_args, is_pure, number_value, string_value

_LOSS_SCALE_PARAMS = _translation.PARAMETERS


class LossScaleRule(RuleBase):
    """Reads a loss scale from the source, or says why it cannot."""

    def _loss_scale_class(self, node: Expr) -> str | None:
        """Returns "FixedLossScale"/"DynamicLossScale" if `node` is a call to one of them."""
        name = self.facts.called_name(node)
        if name is None:
            return None
        row = _mapping.BY_OLD_NAME.get(name)
        if row is None or row.rule != "loss_scale":
            return None
        short = name.rsplit(".", 1)[1]
        return short if short in _LOSS_SCALE_PARAMS else None

    def _read_loss_scale(self, node: Expr) -> SourceScale:
        """Reads a TF 2.4 `loss_scale` argument, or raises Unsafe."""
        text = string_value(node)
        if text == "dynamic":
            return _translation.translate(_translation.DYNAMIC, {})
        if number_value(node) is not None:
            return _translation.translate(_translation.FIXED, {"loss_scale_value": node})
        kind = self._loss_scale_class(node)
        if kind is not None:
            assert isinstance(node, cst.Call)
            bound = bind_args(node.args, _LOSS_SCALE_PARAMS[kind], 1 if kind == "FixedLossScale" else 0)
            values = {name: arg.value for name, arg in bound.items()}
            scale = self._loss_scale_from(kind, values)
            self.plan.folded.add(node.func)
            return scale
        if isinstance(node, cst.Dict):
            return self._read_loss_scale_dict(node)
        raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)

    def _read_loss_scale_dict(self, node: cst.Dict) -> SourceScale:
        entries = self._string_keyed(node)
        kind = string_value(entries.pop("class_name", cst.Name("None")))
        config = entries.pop("config", None)
        if entries or kind not in _LOSS_SCALE_PARAMS or not isinstance(config, cst.Dict):
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        values = self._string_keyed(config)
        if set(values) - set(_LOSS_SCALE_PARAMS[kind]):
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        if kind == "FixedLossScale" and "loss_scale_value" not in values:
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        return self._loss_scale_from(kind, values)

    @staticmethod
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

    @staticmethod
    def _loss_scale_from(kind: str, values: dict[str, Expr]) -> SourceScale:
        if any(not is_pure(value) for value in values.values()):
            raise Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        try:
            return _translation.translate(kind, values, number_value)
        except _translation.UntranslatableLossScale:
            raise Unsafe(w.MULTIPLIER_NOT_TWO) from None
