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

from lossscale_compat import _flavour, _loss_scale, _optimizer
from lossscale_compat._deprecation import quiet
from lossscale_compat.legacy import _graph_rewrite, _keras_hooks, _policy


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """TF 2.4's `enable_mixed_precision_graph_rewrite`, choosing by the optimizer's kind when called, as TF 2.4 did."""
    if isinstance(opt, tf.compat.v1.train.Optimizer):
        return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, _tensorflows(loss_scale))
    with quiet():  # the call site was migrated on purpose; its note says why it stays
        return _graph_rewrite.enable_mixed_precision_graph_rewrite(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """TF 2.4's `disable_mixed_precision_graph_rewrite`, for a migrated file that uses the function as a value."""
    with quiet():
        _graph_rewrite.disable_mixed_precision_graph_rewrite()


def _tensorflows(loss_scale: Any) -> Any:
    """`loss_scale` as TF1's rewrite takes it: one of our loss scales becomes TensorFlow's own class, from its config.

    TF1's rewrite accepts only TensorFlow's classes. The copy starts where ours was built to start (a fresh object,
    as migrated code builds it just before the call); any other value is passed on for TensorFlow to check.
    """
    tensorflows = tuple(_flavour.TF_LOSS_SCALE_CLASSES.values())
    if isinstance(loss_scale, tensorflows) or not isinstance(loss_scale, _loss_scale.LossScale):
        return loss_scale
    kind = type(loss_scale).__name__
    if type(loss_scale) not in (_loss_scale.FixedLossScale, _loss_scale.DynamicLossScale):
        raise TypeError(
            f"A TF1 optimizer's graph rewrite takes TensorFlow's own loss scales, and {kind} is a subclass of "
            "lossscale_compat's LossScale that cannot be rebuilt as one. Instead, pass 'dynamic', a number, or "
            "tf.compat.v1.mixed_precision.FixedLossScale/DynamicLossScale(...)."
        )
    tensorflows_class: Any = _flavour.TF_LOSS_SCALE_CLASSES[kind]
    return tensorflows_class.from_config(loss_scale.get_config())


class Policy(_policy.Policy):
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
    tf24_rule = _keras_hooks.hooked(original, method)

    @functools.wraps(original)
    def compile_or_get_optimizer(self: Any, *args: Any, **kwargs: Any) -> Any:
        chosen = tf24_rule if isinstance(getattr(self, "dtype_policy", None), _policy.Policy) else original
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
        set_policy=_policy.set_policy,
        global_policy=_policy.global_policy,
        get_layer_policy=_policy.get_layer_policy,
    )
    return module


keras_experimental = _keras_experimental()
