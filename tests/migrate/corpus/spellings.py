# TF 2.4 mixed-precision code in the spellings real projects used; migrated by test_never_dangling.py.
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision
from tensorflow.python.keras.mixed_precision.experimental import loss_scale_optimizer as lso

mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))
print(mixed_precision.global_policy().name)
fixed = tf.mixed_precision.experimental.FixedLossScale(256)
dynamic = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 12, increment_period=100)
odd = tf.compat.v2.mixed_precision.experimental.DynamicLossScale(multiplier=3)
a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), "dynamic")
b = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.Adam(), loss_scale=dynamic)
c = lso.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)
d = tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), odd)
e = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(), loss_scale="dynamic")
tf.train.experimental.disable_mixed_precision_graph_rewrite()
f = tf.keras.mixed_precision.experimental.LossScaleOptimizer.from_config(a.get_config())
g = tf.mixed_precision.experimental.DynamicLossScale.from_config(dynamic.get_config())
print(isinstance(fixed, tf.mixed_precision.experimental.LossScale))
policy_scale = mixed_precision.global_policy().loss_scale


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
