# TF 2.4 code that reaches the mixed-precision API through module aliases made by assignment.
import tensorflow as tf

mixed_precision = tf.keras.mixed_precision.experimental
mp = tf.keras.mixed_precision
loss_scales = tf.mixed_precision.experimental

mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))


def make_optimizer(learning_rate, fixed=None):
    inner = tf.keras.optimizers.SGD(learning_rate, momentum=0.9)
    if fixed is not None:
        return mp.experimental.LossScaleOptimizer(inner, loss_scales.FixedLossScale(fixed))
    return mixed_precision.LossScaleOptimizer(inner, loss_scale="dynamic")


def enable_mixed_precision(enabled):
    if enabled:
        mixed_precision = tf.keras.mixed_precision.experimental
        policy = mixed_precision.Policy("mixed_float16")
        mixed_precision.set_policy(policy)
