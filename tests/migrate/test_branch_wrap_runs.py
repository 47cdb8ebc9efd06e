"""Issue 42: loops on an optimizer wrapped by flag (on `self`, as TensorFlowTTS's and OpenNMT-tf's trainers do, or on
a name passed into a step function, as Horovod's benchmarks do), once migrated onto Keras's own classes, train as the
unmodified program does in legacy mode (`lossscale-compat run`), with the flag on and off."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow")  # the codemod's own CI sessions (nox -s codemod-libcst) run without TensorFlow

from .test_holder_runs import assert_trains_alike, migrate_and_run

# Our own program (modelled on those trainers): a trainer that wraps its optimizer when `mixed` and scales under the
# same flag, built once with it and once without; a module optimizer wrapped when `AMP`, passed to a `tf.function`
# step. The wrapped loops see a batch with an infinity, so they skip a step and halve their scale; the plain one
# trains on finite data.
PROGRAM = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

import _harness

args = _harness.parse_args(__doc__ or "branch wraps")
tf.config.set_visible_devices([], "GPU")
AMP = True


def dense(seed):
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="tanh", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    _harness.initial_weights(model, seed=seed)
    return model


class Trainer:
    def __init__(self, model, mixed):
        self.model = model
        self.mixed = mixed
        self.optimizer = tf.keras.optimizers.SGD(0.05)
        if mixed:
            self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer, loss_scale="dynamic")

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
            if self.mixed:
                loss = self.optimizer.get_scaled_loss(loss)
        gradients = tape.gradient(loss, self.model.trainable_variables)
        if self.mixed:
            gradients = self.optimizer.get_unscaled_gradients(gradients)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))


@tf.function
def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = opt.get_unscaled_gradients(scaled_gradients)
    opt.apply_gradients(zip(gradients, model.trainable_variables))


opt = tf.keras.optimizers.SGD(0.05)
if AMP:
    opt = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")
param_model = dense(92)
mixed_trainer = Trainer(dense(90), mixed=True)
plain_trainer = Trainer(dense(91), mixed=False)
rng = np.random.RandomState(93)
features = rng.uniform(-1, 1, size=(6, 5, 4)).astype("float32")
targets = features.sum(axis=-1, keepdims=True).astype("float32")
finite = features.copy()
features[2, 1, 0] = np.inf


result = {
    "mixed": _harness.record_loop(mixed_trainer.train_step, mixed_trainer.model.trainable_variables,
                                  lambda: mixed_trainer.optimizer, features, targets),
    "plain": _harness.record_loop(plain_trainer.train_step, plain_trainer.model.trainable_variables,
                                  lambda: plain_trainer.optimizer, finite, targets),
    "parameter": _harness.record_loop(lambda x, y: step(param_model, opt, x, y), param_model.trainable_variables,
                                      lambda: opt, features, targets),
}
_harness.emit(result, args.json)
"""


def test_migrated_branch_wrap_loops_train_as_the_original_in_legacy_mode(tmp_path):
    target, new, got, want = migrate_and_run(tmp_path, PROGRAM)
    if target == "keras3":  # every loop is on Keras 3's own class
        assert "lossscale_compat" not in new and "get_scaled_loss" not in new, new
    assert set(want) == {"mixed", "plain", "parameter"}
    for name in ("mixed", "parameter"):
        assert want[name]["skipped"] == [2] and len(set(want[name]["loss_scale"])) == 2, (name, want[name])
    assert want["plain"]["skipped"] == [] and want["plain"]["loss_scale"] == [None] * 6, want["plain"]
    assert_trains_alike(got, want)
