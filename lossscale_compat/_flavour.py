"""The one place that knows which TensorFlow/Keras flavour is installed.

Every gate tests whether a feature exists, never a version number. Everything
else in the package asks this module instead of probing TensorFlow or Keras.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Tuple

import tensorflow as tf

# Trackable base with the `_track_trackable` hook that names checkpoint dependencies;
# public as `tf.__internal__.tracking.Trackable` on every supported TensorFlow.
Trackable = tf.__internal__.tracking.Trackable


def _tf_compat_loss_scale_classes() -> Dict[str, type]:
    """TensorFlow's own surviving `tf.compat.v1.mixed_precision` loss-scale classes, if any."""
    namespace = getattr(tf.compat.v1, "mixed_precision", None)
    names = ("LossScale", "FixedLossScale", "DynamicLossScale")
    return {name: getattr(namespace, name) for name in names if hasattr(namespace, name)}


TF_LOSS_SCALE_CLASSES: Dict[str, type] = _tf_compat_loss_scale_classes()
"""Name -> TensorFlow's own class, for the names TensorFlow still ships."""


@functools.lru_cache(maxsize=None)
def keras_loss_scale_optimizer() -> type:
    """Returns the modern `LossScaleOptimizer` class of the Keras that `tf.keras` resolves to."""
    return tf.keras.mixed_precision.LossScaleOptimizer


@functools.lru_cache(maxsize=None)
def has_keras3_loss_scaling() -> bool:
    """Whether the modern LSO follows Keras 3 (`scale_loss`, no fixed mode) rather than Keras 2."""
    lso = keras_loss_scale_optimizer()
    return hasattr(lso, "scale_loss") and not hasattr(lso, "get_scaled_loss")


@functools.lru_cache(maxsize=None)
def keras_public_prefix() -> str:
    """How users spell the installed Keras's mixed-precision namespace."""
    return "keras.mixed_precision" if has_keras3_loss_scaling() else "tf.keras.mixed_precision"


def keras_custom_objects() -> Dict[str, Any]:
    """Keras's global custom objects (`custom_object_scope`, `register_keras_serializable`)."""
    utils = tf.keras.utils
    getter = getattr(utils, "get_custom_objects", None)
    return dict(getter()) if getter is not None else {}


def distribution_context() -> Tuple[bool, bool]:
    """Returns (a non-default strategy is active, we are in cross-replica context)."""
    return tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context()
