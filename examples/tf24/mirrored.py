"""A TF 2.4-era MirroredStrategy loop on two CPU replicas; a NaN on one replica skips the step on both."""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

rng = np.random.RandomState(5)
x = rng.uniform(-1, 1, size=(6, 2, 8, 3)).astype("float32")  # step, replica, batch, feature
y = (x @ np.array([[0.5], [1.5], [-1.0]], "float32")).astype("float32")
x[2, 1, 0, 0] = np.nan  # only replica 1 sees it at step 2

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.1), bias_initializer="zeros")])
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.5),
        tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=64, increment_period=2))


@tf.function
def train_step(features, targets):
    def replica_step(features, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(features) - targets)) / strategy.num_replicas_in_sync
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return strategy.run(replica_step, args=(features, targets))


def per_replica(array, step):
    return strategy.experimental_distribute_values_from_function(
        lambda context: tf.constant(array[step, context.replica_id_in_sync_group]))


recorder = _harness.Recorder()
for step in range(len(x)):
    before = _harness.weights_of(model.trainable_variables)
    train_step(per_replica(x, step), per_replica(y, step))
    recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))
_harness.emit(recorder.result(optimizer, model.trainable_variables), args.json)
