"""TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` on Keras 2 (tf_keras, or TF 2.15's keras).

Keras 2 kept TF 2.4's API and algorithm, so this class only adds what it lost: TF <= 2.3 configs
TF 2.4's slot accessors, and its pass-through of hyperparameters and clipping to the inner optimizer.
"""

from __future__ import annotations

from typing import Any

from lossscale_compat import _conversions, _flavour, _inner_access


class KerasLossScaleOptimizer(_inner_access.InnerOptimizerAccess, _flavour.keras2_loss_scale_optimizer_for_new_optimizers()):
    """TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer`, on Keras 2."""

    def __init__(self, inner_optimizer: Any, dynamic: bool = True, initial_scale: Any = None,
                 dynamic_growth_steps: Any = None):
        _conversions.check_not_nested(inner_optimizer)
        super().__init__(inner_optimizer, dynamic, initial_scale, dynamic_growth_steps)

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> "KerasLossScaleOptimizer":
        inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
        return cls(inner, **kwargs)
