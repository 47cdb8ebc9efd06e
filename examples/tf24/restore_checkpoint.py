"""A TF 2.4-era program that resumes from a checkpoint TF 2.4.0 wrote (goldens/tf24_checkpoint/).

With --write-checkpoint (TF 2.4.0 only), it first trains four steps, one of them skipped, and writes that
checkpoint. Either way it then restores it the usual way, with `tf.train.Checkpoint(...).restore`, and
trains four more steps.
"""

import os

import numpy as np
import tensorflow as tf

import _harness

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKPOINT = os.path.join(HERE, "goldens", "tf24_checkpoint", "ckpt-1")

args = _harness.parse_args(__doc__, writes_checkpoint=True)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(6)
x = rng.uniform(-1, 1, size=(8, 16, 3)).astype("float32")
y = (x @ np.array([[2.0], [0.5], [-1.0]], "float32")).astype("float32")
x[1, 4, 1] = np.inf  # before the checkpoint
x[6, 0, 0] = np.inf  # after it


def build():
    model = tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.3), bias_initializer="zeros")])
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=1024, increment_period=2))
    return model, optimizer


def train(model, optimizer, steps, recorder=None):
    @tf.function
    def step(features, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(features) - targets))
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for i in steps:
        before = _harness.weights_of(model.trainable_variables)
        step(x[i], y[i])
        if recorder is not None:
            recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))


if args.write_checkpoint:
    if tf.__version__ != "2.4.0":
        raise SystemExit("--write-checkpoint must run on TensorFlow 2.4.0")
    model, optimizer = build()
    train(model, optimizer, range(4))
    tf.train.Checkpoint(model=model, optimizer=optimizer).write(CHECKPOINT)

model, optimizer = build()
tf.train.Checkpoint(model=model, optimizer=optimizer).restore(CHECKPOINT)
restored = {"loss_scale": _harness.current_loss_scale(optimizer), "iterations": int(optimizer.iterations.numpy()),
            "weights": [w.ravel().tolist() for w in _harness.weights_of(model.trainable_variables)]}
recorder = _harness.Recorder()
train(model, optimizer, range(4, 8), recorder)
momentum = [optimizer.get_slot(v, "momentum").numpy().ravel().tolist() for v in model.trainable_variables]
_harness.emit(recorder.result(optimizer, model.trainable_variables, restored=restored, momentum=momentum), args.json)
