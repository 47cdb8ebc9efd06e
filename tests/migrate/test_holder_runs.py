"""Issue 42: loops on an optimizer held by `self`, by a compiled model or returned by a function of the module, once
migrated onto Keras's own classes, train as the unmodified program does in legacy mode (`lossscale-compat run`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lossscale_compat.codemods._engine import migrate_source

pytest.importorskip("tensorflow")  # the codemod's own CI sessions (nox -s codemod-libcst) run without TensorFlow

from .test_migrated_examples import _target_env

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tf24"

# Our own program, one loop per way of holding the optimizer (modelled on TF 2.x trainer classes, TF 2.4's guide's
# compiled model, and `get_optimizer` factories); a batch with an infinity makes every loop skip a step and halve
# its scale.
PROGRAM = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

import _harness

args = _harness.parse_args(__doc__ or "holders")
tf.config.set_visible_devices([], "GPU")


def dense(seed):
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="tanh", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    _harness.initial_weights(model, seed=seed)
    return model


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05), loss_scale="dynamic")

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
            scaled_loss = self.optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
        gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))


compiled = dense(81)
wrapped = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05), loss_scale="dynamic")
compiled.compile(optimizer=wrapped, loss="mse")


@tf.function
def compiled_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(compiled(x) - y))
        scaled_loss = compiled.optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, compiled.trainable_variables)
    gradients = compiled.optimizer.get_unscaled_gradients(scaled_gradients)
    compiled.optimizer.apply_gradients(zip(gradients, compiled.trainable_variables))


def get_optimizer(learning_rate):
    optimizer = tf.keras.optimizers.SGD(learning_rate)
    optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")
    return optimizer


factory_model = dense(82)
factory_optimizer = get_optimizer(0.05)


@tf.function
def factory_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(factory_model(x) - y))
        scaled_loss = factory_optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, factory_model.trainable_variables)
    gradients = factory_optimizer.get_unscaled_gradients(scaled_gradients)
    factory_optimizer.apply_gradients(zip(gradients, factory_model.trainable_variables))


trainer = Trainer(dense(80))
rng = np.random.RandomState(83)
features = rng.uniform(-1, 1, size=(6, 5, 4)).astype("float32")
targets = features.sum(axis=-1, keepdims=True).astype("float32")
features[2, 1, 0] = np.inf


def record(step, variables, optimizer):
    return _harness.record_loop(step, variables, optimizer, features, targets)


result = {
    "self": record(trainer.train_step, trainer.model.trainable_variables, lambda: trainer.optimizer),
    "compiled": record(compiled_step, compiled.trainable_variables, lambda: compiled.optimizer),
    "factory": record(factory_step, factory_model.trainable_variables, lambda: factory_optimizer),
}
_harness.emit(result, args.json)
"""


def _run(directory: Path, name: str, env: dict, legacy: bool) -> dict:
    out = directory / f"{name}.json"
    command = [sys.executable, *(["-m", "lossscale_compat", "run"] if legacy else []), f"{name}.py", "--json", str(out)]
    done = subprocess.run(command, check=False, cwd=directory, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def migrate_and_run(tmp_path: Path, program: str) -> tuple[str, str, dict, dict]:
    """Migrates `program` for the target this stack serves and runs it, and the original in legacy mode: (target,
    migrated source, the migrated run's result, the original's)."""
    target = "keras3" if _target_env("keras3") is not None else "tf_keras"
    env = _target_env(target)
    assert env is not None
    shutil.copy(EXAMPLES / "_harness.py", tmp_path / "_harness.py")
    (tmp_path / "original.py").write_text(program)
    result = migrate_source(program.encode(), target, "original.py")
    assert result.status == "changed", result.error
    new = result.new.decode()
    (tmp_path / "migrated.py").write_text(new)
    return target, new, _run(tmp_path, "migrated", env, legacy=False), _run(tmp_path, "original", env, legacy=True)


def assert_trains_alike(got: dict, want: dict) -> None:
    """Each loop's steps, skipped steps, loss scales and weights are the same in both runs."""
    assert set(got) == set(want)
    for name, expected in want.items():
        for key in ("steps", "skipped", "loss_scale"):
            assert got[name][key] == expected[key], (name, key)
        assert len(got[name]["weights"]) == len(expected["weights"]), name
        for observed, recorded in zip(got[name]["weights"], expected["weights"]):
            assert observed == pytest.approx(recorded, rel=1e-6, abs=1e-7), name


def test_migrated_holder_loops_train_as_the_original_in_legacy_mode(tmp_path):
    target, new, got, want = migrate_and_run(tmp_path, PROGRAM)
    if target == "keras3":  # every loop is on Keras 3's own class
        assert "lossscale_compat" not in new and "get_scaled_loss" not in new, new
    assert set(want) == {"self", "compiled", "factory"}
    for name, expected in want.items():
        assert expected["skipped"] == [2] and len(set(expected["loss_scale"])) == 2, (name, expected)
    assert_trains_alike(got, want)
