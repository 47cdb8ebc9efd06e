# Modelled on tensorflow/models@00b830c7ca641413f37e5147cf059c89f79b0e8e, official/modeling/performance.py,
# in its TF 2.4-era form: the Model Garden's `tensorflow.compat.v2` import, the graph rewrite, the policy with a
# loss scale.
import tensorflow.compat.v2 as tf


def configure_optimizer(optimizer, use_float16=False, use_graph_rewrite=False, loss_scale="dynamic"):
    """Configures an optimizer for float16 training."""
    if use_float16:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=loss_scale)
    if use_graph_rewrite:
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, loss_scale=loss_scale)
    return optimizer


def set_mixed_precision_policy(dtype, loss_scale=None):
    """Sets the global Keras policy for `dtype`."""
    if dtype == tf.float16:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=loss_scale)
        tf.keras.mixed_precision.experimental.set_policy(policy)
    elif dtype == tf.bfloat16:
        tf.keras.mixed_precision.experimental.set_policy("mixed_bfloat16")
    else:
        tf.keras.mixed_precision.experimental.set_policy("float32")


class Trainer:
    """Keeps the mixed-precision module as a value."""

    def __init__(self, model):
        self.model = model
        self._mp = tf.keras.mixed_precision.experimental

    def build_optimizer(self, optimizer):
        return self._mp.LossScaleOptimizer(optimizer, "dynamic")
