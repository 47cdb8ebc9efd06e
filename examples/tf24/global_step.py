"""A TF 2.4-era custom loop that hands the optimizer the global step as its `iterations`, as TF1-style code did.

TF 2.4 adopted the variable: each step, skipped or not, advanced the global step that summaries and schedules read.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(5)
x = rng.uniform(-1, 1, size=(6, 8, 2)).astype("float32")
y = (x @ np.array([[1.0], [-1.0]], "float32")).astype("float32")
x[2, 3, 0] = np.inf

model = tf.keras.Sequential([tf.keras.layers.Dense(
    1, input_shape=(2,), kernel_initializer=tf.keras.initializers.Constant(0.5), bias_initializer="zeros")])
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.Adam(learning_rate=0.01), "dynamic")
global_step = tf.compat.v1.train.get_or_create_global_step()
global_step.assign(10)  # resumed mid-run
optimizer.iterations = global_step


@tf.function
def step(features, targets):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(features) - targets))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


recorder = _harness.Recorder()
global_steps = []
for i in range(len(x)):
    before = _harness.weights_of(model.trainable_variables)
    step(x[i], y[i])
    recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))
    global_steps.append(int(global_step.numpy()))
_harness.emit(recorder.result(optimizer, model.trainable_variables, global_step=global_steps), args.json)
