"""TF 2.4's Keras loss-scale optimizers: the non-experimental surface and the experimental form."""

from __future__ import annotations

from typing import Any

from lossscale_compat import _conversions, _flavour, _loss_scale
from lossscale_compat._deprecation import dynamic_difference, warn_deprecated

# TF 2.4's Keras surface, built on the installed Keras's modern LossScaleOptimizer.
if _flavour.has_keras3_loss_scaling():
    from lossscale_compat._keras3_optimizer import KerasLossScaleOptimizer
else:
    from lossscale_compat._keras2_optimizer import KerasLossScaleOptimizer  # type: ignore[assignment]  # same API


def _tf24_loss_scale_kwargs(loss_scale: Any) -> dict[str, Any]:
    """The modern constructor's keyword arguments for TF 2.4's `loss_scale`, with the deprecation warning."""
    kwargs = _conversions.loss_scale_to_kwargs(loss_scale)
    keras3 = _flavour.has_keras3_loss_scaling()
    warn_deprecated(
        "`tf.keras.mixed_precision.experimental.LossScaleOptimizer` was removed from TensorFlow "
        "after 2.8; the modern equivalent is "
        + _conversions.replacement_call(kwargs, _flavour.keras_public_prefix(), keras3)
        + "."
        + dynamic_difference(keras3 and kwargs.get("dynamic", True) is not False),
        "LossScaleOptimizer",
    )
    return kwargs


def _inner_and_kwargs(config: dict, custom_objects: Any) -> tuple[Any, dict[str, Any]]:
    """A config's inner optimizer and the modern constructor's keyword arguments, checked as TF 2.4 checked them."""
    inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
    if not kwargs.get("dynamic", True):  # TF 2.4 rebuilt a FixedLossScale here, with its checks
        _loss_scale.check_fixed_loss_scale_value(kwargs["initial_scale"])
    return inner, kwargs


class LossScaleOptimizer(KerasLossScaleOptimizer):
    """TF 2.4's `tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale)`.

    `loss_scale` is "dynamic", a Python int or float (a fixed scale), a `FixedLossScale`, a
    `DynamicLossScale` with multiplier 2 (only its settings are used), or a serialized one.
    """

    _tf24_name = "LossScaleOptimizerV1"  # the class name TF 2.4's messages use

    def __init__(self, optimizer: Any, loss_scale: Any):
        super().__init__(optimizer, **_tf24_loss_scale_kwargs(loss_scale))

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> LossScaleOptimizer:
        """Accepts TF <= 2.3 configs (`optimizer`, `loss_scale`) and TF 2.4's four-key configs."""
        inner, kwargs = _inner_and_kwargs(config, custom_objects)
        legacy_form = cls.__dict__.get("_legacy_form")
        if legacy_form is not None and _flavour.is_legacy_keras_optimizer(inner):
            return legacy_form.from_inner(inner, kwargs)
        restored = cls.__new__(cls)
        KerasLossScaleOptimizer.__init__(restored, inner, **kwargs)
        return restored


if not _flavour.has_keras3_loss_scaling():
    from lossscale_compat._keras2_optimizer import LegacyKerasLossScaleOptimizer

    class LegacyLossScaleOptimizer(LegacyKerasLossScaleOptimizer):
        """TF 2.4's experimental `LossScaleOptimizer(optimizer, loss_scale)` over a legacy (`OptimizerV2`) optimizer."""

        _tf24_name = "LossScaleOptimizerV1"

        def __init__(self, optimizer: Any, loss_scale: Any):
            super().__init__(optimizer, **_tf24_loss_scale_kwargs(loss_scale))

        @classmethod
        def from_config(cls, config: dict, custom_objects: Any = None) -> Any:
            """As `LossScaleOptimizer.from_config`: TF 2.4's experimental class again, not the other form (a
            subclass: the subclass)."""
            if "_modern_form" in cls.__dict__:
                return LossScaleOptimizer.from_config(config, custom_objects)
            return cls.from_inner(*_inner_and_kwargs(config, custom_objects))

        @classmethod
        def from_inner(cls, inner: Any, kwargs: dict) -> LegacyLossScaleOptimizer:
            """This form over `inner` with the modern constructor's `kwargs` (a config's), warning nothing."""
            restored = cls.__new__(cls)
            LegacyKerasLossScaleOptimizer.__init__(restored, inner, **kwargs)
            return restored

    LossScaleOptimizer._legacy_form = LegacyLossScaleOptimizer  # both read by the metaclass
    LegacyLossScaleOptimizer._modern_form = LossScaleOptimizer
    LegacyLossScaleOptimizer.__name__ = LegacyLossScaleOptimizer._tf24_name  # in messages, as TF 2.4's
    for legacy_form in (LegacyLossScaleOptimizer, LegacyKerasLossScaleOptimizer):  # the same names, overridden below
        _flavour.register_keras_serializable(legacy_form, name="KerasLossScaleOptimizer")

# Serialized, both classes come back as KerasLossScaleOptimizer, as both came back as TF 2.4's
# non-experimental class. TF 2.4's own name for the experimental class loads too.
_flavour.register_keras_serializable(LossScaleOptimizer, name="KerasLossScaleOptimizer")
_flavour.register_keras_serializable(KerasLossScaleOptimizer, name="KerasLossScaleOptimizer")
_flavour.register_custom_object("LossScaleOptimizerV1", KerasLossScaleOptimizer)


def tf24_public_classes(legacy_forms: bool) -> dict[str, Any]:
    """The classes legacy mode gives TF 2.4's names ("experimental": `LossScaleOptimizerV1`, "keras": the
    non-experimental class): with `legacy_forms` (TF 2.4's optimizers in effect), the forms over `OptimizerV2`,
    which build the modern forms for any other optimizer."""
    if legacy_forms:
        return {"experimental": LegacyLossScaleOptimizer, "keras": LegacyKerasLossScaleOptimizer}
    return {"experimental": LossScaleOptimizer, "keras": KerasLossScaleOptimizer}
