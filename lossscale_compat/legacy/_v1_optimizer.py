"""TensorFlow's own `tf.compat.v1` loss-scale optimizer, taking this package's loss scales as TF 2.4's took its own."""

from __future__ import annotations

from typing import Any

from lossscale_compat import _flavour, _loss_scale


def v1_loss_scale_optimizer(tf_class: type) -> type:
    """A subclass of TensorFlow's `MixedPrecisionLossScaleOptimizer` that also takes our `LossScale` objects.

    In TF 2.4 `tf.mixed_precision.experimental.DynamicLossScale` and the class this optimizer took were
    one class; in legacy mode the former is ours, so the optimizer keeps and updates our object itself.
    """

    class MixedPrecisionLossScaleOptimizer(tf_class):
        __doc__ = tf_class.__doc__

        def __init__(self, opt: Any, loss_scale: Any):
            ours = isinstance(loss_scale, _loss_scale.LossScale) and not isinstance(
                loss_scale, tuple(_flavour.TF_LOSS_SCALE_CLASSES.values())
            )
            super().__init__(opt, 1 if ours else loss_scale)
            if ours:
                self._loss_scale = loss_scale
                self._track_trackable(loss_scale, "loss_scale", overwrite=True)

        def _doing_dynamic_loss_scaling(self) -> bool:
            return isinstance(self._loss_scale, _loss_scale.DynamicLossScale)

        def variables(self) -> list:
            state = self._loss_scale
            if hasattr(state, "_weights"):  # TensorFlow's own loss scales
                return super().variables()
            own = [state._current_loss_scale, state._num_good_steps] if hasattr(state, "_num_good_steps") else []
            return self._optimizer.variables() + own

    MixedPrecisionLossScaleOptimizer.__module__ = tf_class.__module__
    return MixedPrecisionLossScaleOptimizer
