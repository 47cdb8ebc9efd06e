"""TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` on Keras 2 (tf_keras, or TF 2.15's keras).

Keras 2 kept TF 2.4's API and algorithm, so this class only adds what it lost: TF <= 2.3 configs
and TF 2.4's slot accessors (`get_slot_names`, `get_slot`).
"""

from __future__ import annotations

from typing import Any

from lossscale_compat import _conversions, _flavour, _slots


class KerasLossScaleOptimizer(_slots.SlotAccess, _flavour.keras2_loss_scale_optimizer_for_new_optimizers()):
    """TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer`, on Keras 2."""

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> "KerasLossScaleOptimizer":
        inner, kwargs = _conversions.optimizer_from_config(config, custom_objects)
        return cls(inner, **kwargs)
