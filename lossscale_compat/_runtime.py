"""Run-time fallbacks for migrated code: what the codemod cannot decide when editing, decided when called.

Each keeps TF 2.4's behaviour on today's stacks without legacy mode: the graph rewrite of an optimizer of unknown
kind (and its `disable_...`, where its value is used), a `Policy` whose loss scale reaches `compile`, `isinstance`
against TF 2.4's loss-scale optimizer classes, and a module object for leftover uses of a
`tf.keras.mixed_precision.experimental` alias. Legacy mode's own
pieces do the work; nothing here changes TensorFlow for code that does not use these names.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour, _loss_scale, _optimizer, legacy
from lossscale_compat._deprecation import quiet


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """TF 2.4's `enable_mixed_precision_graph_rewrite`, choosing by the optimizer's kind when called, as TF 2.4 did."""
    if isinstance(opt, tf.compat.v1.train.Optimizer):
        ours = isinstance(loss_scale, _loss_scale.LossScale) and not isinstance(
            loss_scale, tuple(_flavour.TF_LOSS_SCALE_CLASSES.values())
        )
        wrapped = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, 1 if ours else loss_scale)
        if not ours:
            return wrapped
        # TF1's rewrite takes only TensorFlow's loss scales; legacy mode's subclass of its optimizer keeps and updates
        # ours, as TF 2.4's kept the object it was given.
        return legacy.v1_loss_scale_optimizer(type(wrapped))(opt, loss_scale)
    with quiet():  # the call site was migrated on purpose; its note says why it stays
        return legacy.enable_mixed_precision_graph_rewrite(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """TF 2.4's `disable_mixed_precision_graph_rewrite`, for a migrated file that uses the function as a value."""
    with quiet():
        legacy.disable_mixed_precision_graph_rewrite()


class Policy(legacy.Policy):
    """TF 2.4's experimental `Policy(name, loss_scale)`; `compile` of a model under it wraps as TF 2.4 did."""

    def __init__(self, name: str, loss_scale: Any = "auto"):
        with quiet():
            super().__init__(name, loss_scale)
        _install_compile_rule()


_compile_rule_installed = False


def _install_compile_rule() -> None:
    """Makes `compile` use TF 2.4's rule for models under a TF 2.4 Policy; other models keep their stack's rule."""
    global _compile_rule_installed
    if _compile_rule_installed:
        return
    model, method = _flavour.keras_compile_hook()
    original = getattr(model, method)
    tf24_rule = legacy.tf24_compile_rule(original, method)

    @functools.wraps(original)
    def compile_or_get_optimizer(self: Any, *args: Any, **kwargs: Any) -> Any:
        chosen = tf24_rule if isinstance(getattr(self, "dtype_policy", None), legacy.Policy) else original
        return chosen(self, *args, **kwargs)

    setattr(model, method, compile_or_get_optimizer)
    _compile_rule_installed = True


class _AnyLossScaleOptimizerType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (_flavour.keras_loss_scale_optimizer(), _optimizer.KerasLossScaleOptimizer))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, (_flavour.keras_loss_scale_optimizer(), _optimizer.KerasLossScaleOptimizer))


class AnyLossScaleOptimizer(metaclass=_AnyLossScaleOptimizerType):
    """For `isinstance`/`issubclass` against TF 2.4's Keras loss-scale optimizer classes: true for any of today's."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "AnyLossScaleOptimizer is only for isinstance() and issubclass() checks. To build one, use "
            "keras.mixed_precision.LossScaleOptimizer(optimizer) or lossscale_compat.LossScaleOptimizer(optimizer, "
            "loss_scale)."
        )


def _keras_experimental() -> types.ModuleType:
    module = types.ModuleType(
        "lossscale_compat.keras_experimental",
        "TF 2.4's `tf.keras.mixed_precision.experimental` as a module object, for a migrated file's leftover alias.",
    )
    module.__dict__.update(
        LossScaleOptimizer=_optimizer.LossScaleOptimizer,
        Policy=Policy,
        set_policy=legacy.set_policy,
        global_policy=legacy.global_policy,
        get_layer_policy=legacy.get_layer_policy,
    )
    return module


keras_experimental = _keras_experimental()
