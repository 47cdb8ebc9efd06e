# Modelled on horovod/horovod@02920055a1a315f0999da71e06047c8009568c25, horovod/tensorflow/__init__.py:
# a library silencing TF 2.2's device check through a private module, then wrapping optimizers.
import tensorflow as tf

if tf.__version__.startswith("2.2."):
    from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check

    device_compatibility_check.log_device_compatibility_check = lambda policy_name, skip_local: None


def wrap_for_fp16(optimizer, loss_scale="dynamic"):
    """Wraps a Keras optimizer for float16 training."""
    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale)


def loss_scale_of(optimizer):
    """The loss scale object of a wrapped optimizer."""
    return tf.train.experimental.FixedLossScale(optimizer.loss_scale())
