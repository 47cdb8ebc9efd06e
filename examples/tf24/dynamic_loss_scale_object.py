"""A TF 2.4-era eager custom loop whose LossScaleOptimizer gets a `DynamicLossScale` object."""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(1)
x = rng.uniform(-1, 1, size=(8, 16, 3)).astype("float32")
y = (x @ np.array([[40.0], [-25.0], [30.0]], "float32")).astype("float32")

model = tf.keras.Sequential([
    tf.keras.layers.Dense(
        1,
        kernel_initializer=tf.keras.initializers.Constant([[0.5], [0.5], [-0.5]]),
        bias_initializer="zeros",
        input_shape=(3,),
    )
])
# A loss scale this large overflows float32 until it has been halved enough, then grows again
# every 2 good steps, overflows again, and so on.
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.02),
    loss_scale=tf.mixed_precision.experimental.DynamicLossScale(
        initial_loss_scale=2 ** 124, increment_period=2
    ),
)

recorder = _harness.Recorder()
for epoch in range(3):
    for i in range(len(x)):
        before = _harness.weights_of(model.trainable_variables)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x[i]) - y[i]))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
        grads = optimizer.get_unscaled_gradients(scaled_grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))

_harness.emit(recorder.result(optimizer, model.trainable_variables), args.json)
