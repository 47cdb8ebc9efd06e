"""How each TF 2.4 way of naming a loss scale maps to the Keras optimizer's keyword arguments."""

from __future__ import annotations

import math
import os
import sys
import warnings
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour, _loss_scale, _mapping
from lossscale_compat._deprecation import _PACKAGE_DIR

ACCEPTED = 'the string "dynamic" (recommended), an int, a float, a FixedLossScale, or a DynamicLossScale'


def loss_scale_to_kwargs(loss_scale: Any) -> dict[str, Any]:
    """Returns `dynamic`/`initial_scale`/`dynamic_growth_steps` for a TF 2.4 `loss_scale` argument."""
    return _modern_scale(loss_scale).kwargs()


def _modern_scale(loss_scale: Any) -> _mapping.ModernScale:
    """The one translation (`_mapping.translate`) of a TF 2.4 `loss_scale` argument, with TF 2.4's errors."""
    if isinstance(loss_scale, dict):
        loss_scale = _loss_scale.deserialize(loss_scale)
    if isinstance(loss_scale, (int, float)):  # bool too, and no >= 1 check, as in TF 2.4
        _check_fixed_number(loss_scale)
        return _mapping.translate(_mapping.FIXED, {"loss_scale_value": loss_scale})
    if isinstance(loss_scale, str) and loss_scale == "dynamic":
        return _mapping.translate(_mapping.DYNAMIC, {})
    if isinstance(loss_scale, (_loss_scale.FixedLossScale, _loss_scale.DynamicLossScale)):
        return _translate_object(
            loss_scale, 'When passing a DynamicLossScale to "loss_scale", DynamicLossScale.multiplier must be 2. Got:'
        )
    if isinstance(loss_scale, _loss_scale.LossScale):
        raise TypeError(
            "Passing a LossScale that is not a FixedLossScale or a DynamicLossScale is no longer "
            f"supported. Got: {loss_scale}. Instead, pass {ACCEPTED}."
        )
    raise ValueError(
        f"Invalid value passed to loss_scale. loss_scale must be {ACCEPTED}. Got value: "
        f"{loss_scale}. A dict from `lossscale_compat.serialize` works too; numpy scalars "
        "must be converted with `float(value)` first."
    )


def _check_fixed_number(value: int | float) -> None:
    """Raises for a number over float32's range, as TF 2.4 did; warns for one TF 2.4 took that defeats scaling."""
    if (isinstance(value, int) or math.isfinite(value)) and abs(value) > _loss_scale.FLOAT32_MAX:
        raise ValueError(
            "Can't convert Python sequence with a value out of range for a double-precision float. "
            f"(loss_scale={value!r} is over float32's largest number, about 3.4e38, which TF 2.4 refused too.) "
            'Instead, pass "dynamic" or a scale such as 2 ** 15.'
        )
    if not (0 < value < math.inf):  # 0, False, negatives, NaN, inf
        warnings.warn(
            f"LossScaleOptimizer(optimizer, {value!r}): a fixed loss scale that is not a positive finite number "
            "defeats loss scaling (0 zeroes every gradient, which unscaling turns into NaN; NaN and inf make every "
            "gradient non-finite), and a fixed scale skips no step, so the weights become NaN at the first step. "
            'TF 2.4 accepted it and so does this class; instead, pass "dynamic" or a finite scale such as 128.',
            UserWarning,
            stacklevel=_users_level(),
        )


def _users_level() -> int:
    """The `stacklevel`, from our caller, of the user's line: past lossscale_compat and Keras 2's metaclass call."""
    frame: Any = sys._getframe(2)
    level = 2
    while frame is not None and (
        os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)
        or frame.f_code.co_filename.endswith(os.path.join("mixed_precision", "loss_scale_optimizer.py"))
    ):
        frame, level = frame.f_back, level + 1
    return level


def _translate_object(loss_scale: Any, multiplier_prefix: str) -> _mapping.ModernScale:
    """Translates a FixedLossScale or DynamicLossScale by its settings; only those carry over, not its state."""
    if isinstance(loss_scale, _loss_scale.FixedLossScale):
        return _mapping.translate(_mapping.FIXED_LOSS_SCALE, {"loss_scale_value": loss_scale._loss_scale_value})
    try:
        return _mapping.translate(_mapping.DYNAMIC_LOSS_SCALE, loss_scale.get_config())
    except _mapping.UntranslatableLossScale as error:
        raise ValueError(f"{multiplier_prefix} {loss_scale}. {error}") from None


class NestedLossScaleOptimizerError(TypeError, AttributeError):
    """Wrapping a LossScaleOptimizer in another: a TypeError now, an AttributeError in TF 2.4."""


def check_scale_arguments(initial_scale: Any, dynamic_growth_steps: Any) -> None:
    """Raises TF 2.4's error type for a scale that is not a number, saying so; warns where TF 2.4 truncated silently."""
    checks = [
        (float, initial_scale, '"initial_scale" must be a number, such as 32768.0 or 2**15'),
        (int, dynamic_growth_steps, '"dynamic_growth_steps" must be a whole number of steps, such as 2000'),
    ]
    for convert, value, expected in checks:
        if value is None:
            continue
        try:
            convert(value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{expected}, but got: {value!r} ({error}).") from None
    if isinstance(dynamic_growth_steps, float) and not dynamic_growth_steps.is_integer():
        warnings.warn(
            f"dynamic_growth_steps={dynamic_growth_steps!r} is not a whole number of steps; it is used as "
            f"{int(dynamic_growth_steps)}, as TF 2.4 did. Pass an int to silence this warning.",
            UserWarning,
            stacklevel=3,
        )


def check_not_nested(inner_optimizer: Any) -> None:
    """Refuses a loss-scale optimizer as the inner optimizer, with the error types old and new code catch."""
    if isinstance(inner_optimizer, _flavour.keras_loss_scale_optimizer()):
        raise NestedLossScaleOptimizerError(
            f"LossScaleOptimizer cannot wrap another LossScaleOptimizer, but got: {inner_optimizer}. "
            "Wrap its `inner_optimizer` instead."
        )


# TF 2.4's `OptimizerV2` hooks, which a custom optimizer written against TF 2.4 overrides; Keras 3 calls none of them.
OPTIMIZER_V2_HOOKS = ("_resource_apply_dense", "_resource_apply_sparse", "_create_slots")


def check_not_optimizer_v2_style(inner_optimizer: Any) -> None:
    """Refuses a custom optimizer written against TF 2.4's `OptimizerV2`, which Keras 3 would never call."""
    cls = type(inner_optimizer)
    hooks = [name for name in OPTIMIZER_V2_HOOKS if any(name in vars(base) for base in cls.__mro__)]
    if hooks:
        raise TypeError(
            f"{cls.__name__} is written against TF 2.4's OptimizerV2 (it defines {', '.join(hooks)}), which Keras 3 "
            "no longer has: these methods would never be called and the optimizer would not train. Run the program "
            f"on Keras 2 ({_KERAS2_WAY_OUT}, where lossscale_compat trains it as TF 2.4 did), or port the "
            "optimizer to Keras 3 (`build` for slots, `update_step` for the update)."
        )


_KERAS2_WAY_OUT = (
    "`pip install tf_keras` and `TF_USE_LEGACY_KERAS=1`; there TF 2.4's optimizers are `tf.keras.optimizers.legacy`, "
    "and legacy mode gives them as `tf.keras.optimizers`"
)


def check_not_tf1_graph_mode(what: str) -> None:
    """Refuses TF1 graph mode where the optimizer cannot run in it (Keras 3's optimizers, and Keras 2's newer ones,
    which TF 2.4 code gets in legacy mode only with LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0), naming the ways out."""
    if not _flavour.in_tf1_graph_mode():
        return
    if _flavour.keras_has_tf1_graph_mode():
        raise RuntimeError(
            f"{what} cannot run in TF1 graph mode (`tf.compat.v1.disable_eager_execution()` or a `tf.Graph`): Keras "
            "2's `tf.keras.optimizers` run eagerly or inside `tf.function` only. TF 2.4's optimizers, which ran in "
            "graph mode, are `tf.keras.optimizers.legacy` here: build the inner optimizer from there, or run the "
            "program in legacy mode without its opt-out (`LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0`, "
            "`install(tf24_optimizers=False)`): by default it gives them as `tf.keras.optimizers`."
        )
    raise RuntimeError(
        f"{what} cannot run in TF1 graph mode (`tf.compat.v1.disable_eager_execution()`): Keras 3's optimizers and "
        "models run eagerly or inside `tf.function` only. Run the program on Keras 2 "
        f"({_KERAS2_WAY_OUT}, and run in graph mode as in TF 2.4), or remove `disable_eager_execution()` and put the "
        "training step in a `tf.function`."
    )


class IncompleteConfigError(ValueError, KeyError):
    """A config without its inner optimizer: a ValueError with a message now, a bare KeyError in TF 2.4."""

    __str__ = BaseException.__str__  # KeyError's would show the message quoted


def legacy_config_to_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    """Converts a TF <= 2.3 optimizer config (`optimizer` + serialized `loss_scale`) to TF 2.4's keys."""
    config = dict(config)
    if "loss_scale" not in config:
        return config
    loss_scale = _loss_scale.deserialize(config.pop("loss_scale"))
    if not isinstance(loss_scale, (_loss_scale.FixedLossScale, _loss_scale.DynamicLossScale)):
        raise ValueError(
            f"Serialized LossScaleOptimizers with a LossScale that is not a FixedLossScale or "
            f"DynamicLossScale can no longer be deserialized. Got: {loss_scale}. Re-save the "
            "optimizer with a FixedLossScale or DynamicLossScale."
        )
    config.update(
        _translate_object(
            loss_scale,
            "Cannot deserialize LossScaleOptimizer with a DynamicLossScale "
            "whose multiplier is not 2. Got DynamicLossScale:",
        ).kwargs()
    )
    config["inner_optimizer"] = config.pop("optimizer")
    return config


def optimizer_from_config(config: dict[str, Any], custom_objects: Any = None) -> tuple[Any, dict[str, Any]]:
    """Splits a TF <= 2.3 or TF 2.4 optimizer config into the inner optimizer and keyword arguments."""
    if not isinstance(config, dict) or ("inner_optimizer" not in config and "optimizer" not in config):
        got = f"a config with the keys {sorted(config)}" if isinstance(config, dict) else repr(config)
        raise IncompleteConfigError(
            f"A LossScaleOptimizer config needs `inner_optimizer` (TF 2.4, Keras 3) or `optimizer` and `loss_scale` "
            f"(TF <= 2.3), but got {got}. Pass what the optimizer's `get_config()` returned."
        )
    kwargs = legacy_config_to_kwargs(config)
    kwargs.pop("is_legacy_optimizer", None)  # Keras 2's mark for which optimizer family to build, not an argument
    return deserialize_inner_optimizer(kwargs.pop("inner_optimizer"), custom_objects), kwargs


def deserialize_inner_optimizer(config: Any, custom_objects: Any = None) -> Any:
    """Deserializes a TF 2.4 (or modern) inner optimizer config into a current Keras optimizer."""
    if not isinstance(config, dict):
        return config
    if "class_name" not in config:
        raise IncompleteConfigError(
            f"An inner optimizer config needs `class_name` and `config`, but got the keys {sorted(config)}. Pass "
            "what `tf.keras.optimizers.serialize(optimizer)` returned."
        )
    # A copy: Keras 2's legacy deserialize lower-cases the class name in the dict it is given, as TF 2.4's did.
    config = dict(config, config=without_decay(config.get("config", {})))
    class_name = config.get("class_name")
    unknown = ValueError(
        f"Unknown optimizer: {class_name}. Please ensure this object is passed to the "
        f"`custom_objects` argument, e.g. `custom_objects={{'{class_name}': {class_name}}}`."
    )
    try:
        inner = _flavour.deserialize_optimizer(config, custom_objects)
    except (ValueError, TypeError) as error:
        if class_name in (custom_objects or {}):
            raise
        if _known_optimizer(class_name, custom_objects):  # Keras's own error says which setting; "unknown" misleads
            raise ValueError(
                f"Cannot load this {class_name} config: {_first_line(error)} Instead, remove or correct the "
                f"settings {class_name} does not take."
            ) from error
        raise unknown from error
    if not isinstance(inner, _flavour.current_optimizer_class()) and not _flavour.is_legacy_keras_optimizer(inner):
        # Keras 3 hands back what it could not resolve
        raise unknown
    return inner


def _known_optimizer(class_name: Any, custom_objects: Any) -> bool:
    """Whether Keras builds an optimizer from `class_name` with its defaults (so a failure was the config's)."""
    try:
        probe = _flavour.deserialize_optimizer({"class_name": class_name, "config": {}}, custom_objects)
    except (ValueError, TypeError):
        return False
    return isinstance(probe, _flavour.current_optimizer_class()) or _flavour.is_legacy_keras_optimizer(probe)


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return text if text.endswith(".") else text + "."


def without_decay(optimizer_config: dict[str, Any]) -> dict[str, Any]:
    """TF 2.4's `decay` as the learning-rate schedule that computes the same rate.

    TF 2.4 used `learning_rate / (1 + decay * iterations)`, which is
    `InverseTimeDecay(learning_rate, decay_steps=1, decay_rate=decay)`. Keras' current optimizers
    reject or silently ignore `decay`, so a non-zero one becomes that schedule instead of being lost.
    """
    config = dict(optimizer_config)
    decay = config.pop("decay", 0.0)
    if decay:
        learning_rate = config.get("learning_rate", 0.01)
        if isinstance(learning_rate, dict):
            raise ValueError(
                f"This TF 2.4 optimizer config has both a learning-rate schedule and decay={decay}, which "
                "TF 2.4 applied on top of the schedule; no Keras schedule computes that. Set `decay` to 0 "
                "and write a `LearningRateSchedule` that divides the schedule by (1 + decay * step)."
            )
        schedule = tf.keras.optimizers.schedules.InverseTimeDecay(learning_rate, decay_steps=1, decay_rate=decay)
        config["learning_rate"] = tf.keras.optimizers.schedules.serialize(schedule)
    return config


def replacement_call(kwargs: dict[str, Any], prefix: str, keras3: bool) -> str:
    """The modern construction equivalent to TF 2.4 `kwargs`, for deprecation messages."""
    scale = _mapping.ModernScale(
        kwargs.get("dynamic", True) is not False, kwargs.get("initial_scale"), kwargs.get("dynamic_growth_steps")
    )
    return _mapping.describe(scale, prefix, "keras3" if keras3 else "tf_keras")
