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

from .holder_loops import COMPILED, FACTORY, TRAINER
from .test_migrated_examples import _target_env

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tf24"

# The loops of holder_loops.py, each a module of its own (migrated alone), trained by one driver program of ours that
# names no TF 2.4 API; a batch with an infinity makes every loop skip a step and halve its scale.
LOOPS = {"trainer": TRAINER, "compiled": COMPILED, "factory": FACTORY}  # module name: loop
DRIVER = """\
import types

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__ or "holders")
tf.config.set_visible_devices([], "GPU")

import compiled  # noqa: E402
import factory  # noqa: E402
import trainer  # noqa: E402


def dense(seed):
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="tanh", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    _harness.initial_weights(model, seed=seed)
    return model


rng = np.random.RandomState(83)
features = rng.uniform(-1, 1, size=(6, 5, 4)).astype("float32")
targets = features.sum(axis=-1, keepdims=True).astype("float32")
features[2, 1, 0] = np.inf


def batches(variables, optimizer, recorder):
    for x, y in zip(features, targets):
        before = _harness.weights_of(variables)
        yield x, y
        recorder.step_done(optimizer(), before, _harness.weights_of(variables))


def record(step, variables, optimizer):
    return _harness.record_loop(step, variables, optimizer, features, targets)


held = trainer.Trainer(dense(80), types.SimpleNamespace(learning_rate=0.05))
compiled.model.build((None, 4))
_harness.initial_weights(compiled.model, seed=81)
factory_model, made = dense(82), []
get_optimizer = factory.get_optimizer
factory.get_optimizer = lambda learning_rate: made.append(get_optimizer(learning_rate)) or made[-1]
factory_recorder = _harness.Recorder()
factory.train(factory_model, batches(factory_model.trainable_variables, lambda: made[-1], factory_recorder))

result = {
    "self": record(held.train_step, held.model.trainable_variables, lambda: held.optimizer),
    "compiled": record(compiled.train_step, compiled.model.trainable_variables, lambda: compiled.model.optimizer),
    "factory": factory_recorder.result(made[-1], factory_model.trainable_variables),
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
    target = "keras3" if _target_env("keras3") is not None else "tf_keras"
    env = _target_env(target)
    assert env is not None
    for name in ("original", "migrated"):
        (tmp_path / name).mkdir()
        shutil.copy(EXAMPLES / "_harness.py", tmp_path / name / "_harness.py")
        (tmp_path / name / "driver.py").write_text(DRIVER)
    for name, loop in LOOPS.items():
        (tmp_path / "original" / f"{name}.py").write_text(loop)
        result = migrate_source(loop.encode(), target, f"{name}.py")
        assert result.status == "changed", result.error
        new = result.new.decode()
        if target == "keras3":  # every loop is on Keras 3's own class
            assert "lossscale_compat" not in new and "get_scaled_loss" not in new, new
        (tmp_path / "migrated" / f"{name}.py").write_text(new)
    want = _run(tmp_path / "original", "driver", env, legacy=True)
    got = _run(tmp_path / "migrated", "driver", env, legacy=False)
    assert set(want) == {"self", "compiled", "factory"}
    for name, expected in want.items():
        assert expected["skipped"] == [2] and len(set(expected["loss_scale"])) == 2, (name, expected)
    assert_trains_alike(got, want)
