"""Config equivalence: whether an old and a new loss-scale optimizer construction are the same; the new for an old.

Each side is loaded onto this stack first (TF <= 2.3 and TF 2.4 configs as `from_config` loads them),
then reduced to what decides training: the kind of loss scaling, its initial scale and growth steps,
the inner optimizer's class, and its config. Names are left out (Keras 3 makes them unique), a plain
Keras 3 optimizer's `loss_scale_factor` counts as a fixed scale (the modern form of TF 2.4's fixed
scale), and floats are compared as the float32 numbers training uses.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from lossscale_compat import _conversions, _flavour, _loss_scale, _mapping
from lossscale_compat._optimizer import KerasLossScaleOptimizer


class _Absent:
    def __repr__(self) -> str:
        return "absent"


class _Float32(float):
    """A float compared, and shown, as the float32 number training uses."""

    def __repr__(self) -> str:
        return str(np.float32(self))


_ABSENT = _Absent()


def config_differences(old: Any, new: Any, custom_objects: dict[str, Any] | None = None) -> list[str]:
    """What differs between two optimizer constructions once loaded on this stack; empty if equivalent.

    `old` and `new` are each an optimizer (a loss-scale one of any flavour, ours included, or a plain
    Keras optimizer), a serialized optimizer, or a loss-scale optimizer's config (TF <= 2.3, TF 2.4 or
    Keras 3 form).
    """
    return summary_differences(config_summary(old, custom_objects), config_summary(new, custom_objects))


class ConfigSummary(dict):
    """What decides training in one optimizer construction, key by key; `==` means equivalent."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfigSummary):
            return NotImplemented
        return not summary_differences(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None


def config_summary(side: Any, custom_objects: dict[str, Any] | None = None) -> ConfigSummary:
    """One construction reduced to what decides training, for `assert config_summary(old) == config_summary(new)`."""
    return ConfigSummary(_summary(side, custom_objects))


def summary_differences(old_summary: dict[str, Any], new_summary: dict[str, Any]) -> list[str]:
    """One line per key whose value differs between two summaries; empty if they are equivalent."""
    return [
        f"{key}: {old_summary.get(key, _ABSENT)!r} (old) != {new_summary.get(key, _ABSENT)!r} (new)"
        for key in sorted(set(old_summary) | set(new_summary))
        if not _same(old_summary.get(key, _ABSENT), new_summary.get(key, _ABSENT))
    ]


def _same(old: Any, new: Any) -> bool:
    """`==`, except that two NaNs are the same setting (inside lists and dicts too)."""
    if isinstance(old, float) and isinstance(new, float) and math.isnan(old) and math.isnan(new):
        return True
    if isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        return type(old) is type(new) and len(old) == len(new) and all(map(_same, old, new))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[key], new[key]) for key in old)
    return bool(old == new)


def assert_equivalent(old: Any, new: Any, custom_objects: dict[str, Any] | None = None) -> None:
    """Raises AssertionError naming every difference between two optimizer constructions."""
    differences = config_differences(old, new, custom_objects)
    if differences:
        raise AssertionError("The optimizers are not equivalent:\n  " + "\n  ".join(differences))


def _summary(side: Any, custom_objects: dict[str, Any] | None) -> dict[str, Any]:
    scaling, inner = _scaling_and_inner(side, custom_objects)
    from_factor = scaling.pop("from_factor", False)
    summary = dict(scaling, inner_optimizer=type(inner).__name__)
    for key, value in inner.get_config().items():
        if key == "name" or (key == "loss_scale_factor" and (value is None or from_factor)):
            continue  # Keras 3 makes names unique; a plain optimizer's factor is its scale, above
        summary[f"inner_optimizer.{key}"] = _float32(value)
    return summary


def _scaling_and_inner(side: Any, custom_objects: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    if isinstance(side, dict):
        return _from_config(side, custom_objects)
    if isinstance(side, _flavour.keras_loss_scale_optimizer()):
        dynamic = getattr(side, "dynamic", True)  # Keras 3's own class is always dynamic
        return _scaling(dynamic, side.initial_scale, side.dynamic_growth_steps), side.inner_optimizer
    if callable(getattr(side, "get_config", None)) and callable(getattr(side, "apply_gradients", None)):
        return _plain_optimizer(side)
    raise TypeError(
        f"Expected an optimizer, a serialized optimizer or a LossScaleOptimizer config, but got: {side!r}. "
        "Pass the optimizer object, `tf.keras.optimizers.serialize(optimizer)`, or `optimizer.get_config()`."
    )


def _from_config(config: dict[str, Any], custom_objects: Any) -> tuple[dict[str, Any], Any]:
    if "class_name" in config and (
        not isinstance(config["class_name"], str) or not isinstance(config.get("config", {}), dict)
    ):  # `class_name: 5` was an AttributeError; `config: []` passed as an optimizer of no settings
        raise TypeError(
            f"Expected a serialized optimizer, whose `class_name` is a string and `config` a dict, but got: "
            f"{config!r}. Pass `tf.keras.optimizers.serialize(optimizer)` or `optimizer.get_config()`."
        )
    body = config.get("config", config) if "class_name" in config else config
    if "inner_optimizer" not in body and "optimizer" not in body:  # a serialized plain optimizer
        if "class_name" not in config:
            raise TypeError(
                f"Expected a serialized optimizer or a LossScaleOptimizer config, but got: {config!r}. "
                "A LossScaleOptimizer config has `inner_optimizer` (TF 2.4, Keras 3) or `optimizer` and "
                "`loss_scale` (TF <= 2.3); a serialized optimizer has `class_name` and `config`."
            )
        return _plain_optimizer(_conversions.deserialize_inner_optimizer(config, custom_objects))
    # Loaded exactly as `from_config` loads it, TF 2.4's defaults and checks included.
    return _scaling_and_inner(KerasLossScaleOptimizer.from_config(body, custom_objects), custom_objects)


def _plain_optimizer(optimizer: Any) -> tuple[dict[str, Any], Any]:
    factor = getattr(optimizer, "loss_scale_factor", None)
    if factor is None:
        return {"loss_scaling": "none"}, optimizer
    return dict(_scaling(False, factor, None), from_factor=True), optimizer


def _scaling(dynamic: bool, initial_scale: Any, growth_steps: Any) -> dict[str, Any]:
    scaling = {"loss_scaling": "dynamic" if dynamic else "fixed", "initial_scale": _float32(float(initial_scale))}
    if dynamic:
        scaling["dynamic_growth_steps"] = int(growth_steps)
    return scaling


def _float32(value: Any) -> Any:
    """Floats as the float32 number training uses; containers element by element."""
    if isinstance(value, bool) or not isinstance(value, (float, np.floating, dict, list, tuple)):
        return value
    if isinstance(value, dict):
        return {k: _float32(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_float32(v) for v in value]
    return _Float32(np.float32(value))


_TF24_CLASS = "tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer"


def modern_equivalent(legacy: Any, inner_optimizer: Any = None) -> Any:
    """Returns the modern object the codemod writes for `legacy`, or raises ValueError saying why none exists.

    `legacy` is one of our optimizers, a TF <= 2.3 or TF 2.4 optimizer config (or serialized optimizer), or a
    TF 2.4 `loss_scale` (a loss-scale object, "dynamic", a number), which needs `inner_optimizer`. The inner
    optimizer is rebuilt from its config, so the result shares no state with `legacy`.
    """
    kwargs, inner = _tf24_construction(legacy, inner_optimizer)
    target = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"
    inner_config = inner.get_config()
    if inner_config.get("loss_scale_factor") is not None:
        raise ValueError(
            f"The inner optimizer already has loss_scale_factor={inner_config['loss_scale_factor']}, "
            "so it would scale twice; the codemod leaves such code alone. Remove the factor first."
        )
    if not kwargs.get("dynamic", True) and target == "keras3":
        return _keras3_fixed_scale(inner, inner_config, kwargs["initial_scale"])
    modern_class = _resolve(_mapping.replacement(_mapping.BY_OLD_NAME[_TF24_CLASS], target))
    scale = {key: kwargs[key] for key in ("initial_scale", "dynamic_growth_steps") if kwargs.get(key) is not None}
    if not kwargs.get("dynamic", True):
        scale["dynamic"] = False
    return modern_class(type(inner).from_config(inner_config), **scale)


def _tf24_construction(legacy: Any, inner_optimizer: Any) -> tuple:
    """(TF 2.4 keyword arguments, inner optimizer) for any accepted form of `legacy`."""
    tf24_class = KerasLossScaleOptimizer
    if isinstance(legacy, dict):
        body = legacy.get("config", legacy) if "class_name" in legacy else legacy
        if "inner_optimizer" not in body and "optimizer" not in body:
            raise ValueError(
                f"This config is not a loss-scale optimizer's, so it has no modern loss-scale "
                f"equivalent: {legacy!r}. Pass a TF 2.4 LossScaleOptimizer config."
            )
        legacy = tf24_class.from_config(body)
    if isinstance(legacy, tf24_class):
        kwargs: dict[str, Any] = {"dynamic": legacy.dynamic, "initial_scale": legacy.initial_scale}
        if legacy.dynamic:
            kwargs["dynamic_growth_steps"] = legacy.dynamic_growth_steps
        return kwargs, legacy.inner_optimizer
    if isinstance(legacy, _flavour.keras_loss_scale_optimizer()) or callable(getattr(legacy, "apply_gradients", None)):
        raise ValueError(
            f"{legacy!r} is already a modern optimizer; modern_equivalent() takes a TF 2.4 "
            "construction: lossscale_compat's optimizers, a TF 2.4 config, or a loss scale."
        )
    if isinstance(legacy, _loss_scale.DynamicLossScale):
        try:
            _mapping.translate(_mapping.DYNAMIC_LOSS_SCALE, legacy.get_config())
        except _mapping.UntranslatableLossScale as error:
            raise ValueError(
                f"{legacy} has multiplier {legacy.multiplier}, so there is no modern equivalent, and the codemod "
                f"does not rewrite it. {error}"
            ) from None
    kwargs = _conversions.loss_scale_to_kwargs(legacy)
    if inner_optimizer is None:
        raise TypeError(
            f"A loss scale alone ({legacy!r}) becomes part of an optimizer; pass the optimizer it "
            "scales for: `modern_equivalent(loss_scale, inner_optimizer=...)`."
        )
    return kwargs, inner_optimizer


def _keras3_fixed_scale(inner: Any, inner_config: dict[str, Any], value: Any) -> Any:
    """Keras 3's fixed scale: the inner optimizer's own `loss_scale_factor`, if it carries over exactly."""
    if "loss_scale_factor" not in inner_config:
        raise ValueError(
            f"{type(inner).__name__} takes no `loss_scale_factor`, which is Keras 3's only fixed "
            "loss scale. Keep lossscale_compat.LossScaleOptimizer, or use a dynamic scale."
        )
    if not _mapping.is_exact_loss_scale_factor(value):
        raise ValueError(
            f"A fixed loss scale of {value!r} is not a power of two: Keras 3 divides by its "
            "`loss_scale_factor` where TF 2.4 multiplied by the reciprocal, so gradients can "
            "differ in the last bit, and the codemod does not rewrite it to `loss_scale_factor`. Use a "
            "power of two, or keep lossscale_compat.LossScaleOptimizer."
        )
    return type(inner).from_config(dict(inner_config, loss_scale_factor=float(value)))


def _resolve(dotted: str | None) -> Any:
    """The object a dotted name from the mapping names, e.g. `keras.mixed_precision.LossScaleOptimizer`."""
    assert dotted is not None, "the mapping names a modern LossScaleOptimizer on every target"
    root, *rest = dotted.split(".")
    value = importlib.import_module(root)
    for name in rest:
        value = getattr(value, name)
    return value
