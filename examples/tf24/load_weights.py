"""A TF 2.4-era `fit` program that resumes with `model.load_weights(prefix)` and with a `CheckpointManager`.

With --write-checkpoint (TF 2.4.0 only), it first trains one epoch of four batches, one of them skipped, and
saves that state twice: `model.save_weights(prefix)` (TF format) into goldens/tf24_weights/ and
`CheckpointManager.save()` into goldens/tf24_manager/. Either way it then resumes from each, the usual
way, and trains one more epoch.
"""

import os

import numpy as np
import tensorflow as tf

import _harness

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = os.path.join(HERE, "goldens", "tf24_weights", "weights")
MANAGER_DIRECTORY = os.path.join(HERE, "goldens", "tf24_manager")

args = _harness.parse_args(__doc__, writes_checkpoint=True)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(11)
x = rng.uniform(-1, 1, size=(128, 3)).astype("float32")
y = (x @ np.array([[1.5], [-0.5], [1.0]], "float32") + 0.25).astype("float32")
x[21, 2] = 1e30  # second batch of the first epoch: skipped
x[100, 0] = 1e30  # third batch of the resumed epoch: skipped


def build():
    model = tf.keras.Sequential([tf.keras.layers.Dense(
        2, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.2), bias_initializer="zeros"),
        tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(-0.1))])
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=256, increment_period=2))
    model.compile(optimizer=optimizer, loss="mse")
    return model


class RecordSteps(tf.keras.callbacks.Callback):
    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def on_train_batch_begin(self, batch, logs=None):
        self.before = _harness.weights_of(self.model.trainable_variables)

    def on_train_batch_end(self, batch, logs=None):
        self.recorder.step_done(self.model.optimizer, self.before, _harness.weights_of(self.model.trainable_variables))


def fit(model, part, recorder=None):
    callbacks = [RecordSteps(recorder)] if recorder is not None else []
    model.fit(x[part], y[part], batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=callbacks)


def resumed(model):
    """Trains the second epoch of a model whose state was just restored; returns what it saw."""
    optimizer = model.optimizer
    restored = {"loss_scale": _harness.current_loss_scale(optimizer), "iterations": int(optimizer.iterations.numpy()),
                "weights": [w.ravel().tolist() for w in _harness.weights_of(model.trainable_variables)]}
    recorder = _harness.Recorder()
    fit(model, slice(64, 128), recorder)
    momentum = [optimizer.get_slot(v, "momentum").numpy().ravel().tolist() for v in model.trainable_variables]
    return recorder.result(optimizer, model.trainable_variables, restored=restored, momentum=momentum)


if args.write_checkpoint:
    if tf.__version__ != "2.4.0":
        raise SystemExit("--write-checkpoint must run on TensorFlow 2.4.0")
    model = build()
    fit(model, slice(0, 64))
    model.save_weights(WEIGHTS)
    tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer),
                               MANAGER_DIRECTORY, max_to_keep=1).save()

model = build()
model.load_weights(WEIGHTS)
result = resumed(model)

model = build()
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer),
                                     MANAGER_DIRECTORY, max_to_keep=1)
manager.restore_or_initialize()
result["manager"] = resumed(model)
_harness.emit(result, args.json)
