"""Loss-scale objects: reading a TF 2.4 `loss_scale` argument (a string, a number, a loss-scale object or config)."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping, _translation

from .. import _warnings as w
from .._scan import SiteScan
from .._values import _bind, _Expr, _is_pure, _LossScale, _number, _string, _Unsafe

_LOSS_SCALE_PARAMS = _translation.PARAMETERS


class LossScaleRule(SiteScan):
    """Reads a loss scale from the source, or says why it cannot."""

    def _loss_scale_class(self, node: _Expr) -> str | None:
        """Returns "FixedLossScale"/"DynamicLossScale" if `node` is a call to one of them."""
        name = self.called_name(node)
        if name is None:
            return None
        row = _mapping.BY_OLD_NAME.get(name)
        if row is None or row.rule != "loss_scale":
            return None
        short = name.rsplit(".", 1)[1]
        return short if short in _LOSS_SCALE_PARAMS else None

    def _read_loss_scale(self, node: _Expr) -> _LossScale:
        """Reads a TF 2.4 `loss_scale` argument, or raises _Unsafe."""
        text = _string(node)
        if text == "dynamic":
            return _translation.translate(_translation.DYNAMIC, {})
        if _number(node) is not None:
            return _translation.translate(_translation.FIXED, {"loss_scale_value": node})
        kind = self._loss_scale_class(node)
        if kind is not None:
            assert isinstance(node, cst.Call)
            bound = _bind(node.args, _LOSS_SCALE_PARAMS[kind], 1 if kind == "FixedLossScale" else 0)
            values = {name: arg.value for name, arg in bound.items()}
            scale = self._loss_scale_from(kind, values)
            self._folded.add(node.func)
            return scale
        if isinstance(node, cst.Dict):
            return self._read_loss_scale_dict(node)
        raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)

    def _read_loss_scale_dict(self, node: cst.Dict) -> _LossScale:
        entries = self._string_keyed(node)
        kind = _string(entries.pop("class_name", cst.Name("None")))
        config = entries.pop("config", None)
        if entries or kind not in _LOSS_SCALE_PARAMS or not isinstance(config, cst.Dict):
            raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        values = self._string_keyed(config)
        if set(values) - set(_LOSS_SCALE_PARAMS[kind]):
            raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        if kind == "FixedLossScale" and "loss_scale_value" not in values:
            raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        return self._loss_scale_from(kind, values)

    @staticmethod
    def _string_keyed(node: cst.Dict) -> dict[str, _Expr]:
        out: dict[str, _Expr] = {}
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
            key = _string(element.key)
            if key is None or key in out:
                raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
            out[key] = element.value
        return out

    @staticmethod
    def _loss_scale_from(kind: str, values: dict[str, _Expr]) -> _LossScale:
        if any(not _is_pure(value) for value in values.values()):
            raise _Unsafe(w.LOSS_SCALE_NOT_VISIBLE)
        try:
            return _translation.translate(kind, values, _number)
        except _translation.UntranslatableLossScale:
            raise _Unsafe(w.MULTIPLIER_NOT_TWO) from None
