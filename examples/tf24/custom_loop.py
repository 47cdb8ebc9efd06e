"""A TF 2.4-era custom training loop with a dynamic LossScaleOptimizer inside a tf.function."""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(0)
x = rng.uniform(-1, 1, size=(10, 16, 4)).astype("float32")
y = (x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25).astype("float32")
x[3, 0, 0] = np.inf  # a corrupt record: its gradients are not finite, so the step is skipped
x[7, 5, 2] = np.nan

model = tf.keras.Sequential([
    tf.keras.layers.Dense(
        1,
        kernel_initializer=tf.keras.initializers.Constant([[0.1], [0.2], [-0.3], [0.4]]),
        bias_initializer=tf.keras.initializers.Constant(0.05),
        input_shape=(4,),
    )
])
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.05), "dynamic"
)


@tf.function
def train_step(features, targets):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(features) - targets))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


recorder = _harness.Recorder()
for epoch in range(2):
    for i in range(len(x)):
        before = _harness.weights_of(model.trainable_variables)
        train_step(x[i], y[i])
        recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))

_harness.emit(recorder.result(optimizer, model.trainable_variables), args.json)
