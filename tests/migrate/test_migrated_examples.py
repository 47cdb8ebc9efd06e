"""Migrated TF 2.4-era example programs reproduce what they did on TF 2.4.0 (examples/tf24/goldens)."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest
from warm_python import warm_python

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tf24"
PROGRAMS = ("custom_loop", "fit", "fixed_scale", "dynamic_loss_scale_object")
BASE_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0"}
# Environments to try, in order, to reach each target's Keras (TF 2.15 has Keras 2 without the switch).
TARGET_ENVS = {"keras3": ({},), "tf_keras": ({"TF_USE_LEGACY_KERAS": "1"}, {})}
# Any TF 2.4 spelling; on Keras 3 the custom-loop methods are TF 2.4 API too.
LEGACY_RE = re.compile(
    r"mixed_precision \. experimental|train \. experimental|compat \. v1|\b(Fixed|Dynamic)?LossScale\b"
)
KERAS3_LEGACY_RE = re.compile(r"\bget_(un)?scaled_(loss|gradients)\b")
WEIGHT_RTOL = 1e-6
WEIGHT_ATOL = 1e-6
_PROBE = (
    "import tensorflow as tf; "
    "print(hasattr(tf.keras.mixed_precision.LossScaleOptimizer, 'scale_loss'))"
)


def _with(extra: dict) -> dict:
    """Returns this process's environment plus `extra`, without any inherited legacy-Keras switch."""
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env.update(BASE_ENV)
    env.update(extra)
    return env


def _serves(target: str, env: dict) -> bool:
    """Returns whether this interpreter, in `env`, has `target`'s Keras (detected by feature)."""
    server = warm_python(env)
    if server.preload_error is not None:  # tf.keras cannot be imported in `env` (TF_USE_LEGACY_KERAS without tf_keras)
        return False
    try:
        probe = server.run(["-c", _PROBE], cwd=Path.cwd(), timeout=300)
    except (OSError, TimeoutError, subprocess.TimeoutExpired):
        return False
    if probe.returncode != 0:
        return False
    has_scale_loss = probe.stdout.strip().splitlines()[-1:] == ["True"]
    return has_scale_loss if target == "keras3" else not has_scale_loss


@functools.lru_cache(maxsize=None)
def _target_env(target: str):
    """Returns the first environment in which this stack runs `target`'s Keras, or None."""
    for extra in TARGET_ENVS[target]:
        env = _with(extra)
        if _serves(target, env):
            return env
    return None


def _env(target: str) -> dict:
    """Returns the environment to migrate and run `target`'s programs in."""
    env = _target_env(target)
    assert env is not None
    return env


def _require(target: str) -> None:
    """Skips unless the current stack runs `target`'s API, or where another stack runs the same programs already."""
    if target == "keras3" and os.environ.get("TF_USE_LEGACY_KERAS") == "1":
        pytest.skip("a tf_keras stack: --target keras3 runs on this TensorFlow's Keras 3 stacks, whose newest Keras "
                    "is the one installed here beside tf_keras (lossscale_compat/_stacks.py)")
    if _target_env(target) is None:
        needed = (
            "Keras 3 (tf.keras LossScaleOptimizer with scale_loss, e.g. TF 2.21)"
            if target == "keras3"
            else "Keras 2 (tf.keras LossScaleOptimizer without scale_loss: TF 2.15, or TF_USE_LEGACY_KERAS=1 with tf_keras)"
        )
        pytest.skip(f"--target {target} runs only where tf.keras is {needed}; this stack is not")


@functools.lru_cache(maxsize=None)
def _keras_class_counts_steps() -> bool:
    """Whether Keras 3's own LossScaleOptimizer advances its `iterations` at all on this stack (the flavour gate)."""
    probe = warm_python(_env("keras3")).run(
        ["-c", "from lossscale_compat import _flavour; print(_flavour.keras_loss_scale_optimizer_counts_steps())"],
        cwd=Path.cwd(), timeout=300,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    return probe.stdout.strip().splitlines()[-1] == "True"


def _migrate(tmp_path: Path, name: str, target: str) -> Path:
    """Copies one program and its harness to tmp_path and migrates it with the real CLI."""
    for file in (name + ".py", "_harness.py"):
        shutil.copy(EXAMPLES / file, tmp_path / file)
    program = tmp_path / (name + ".py")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "--target", target,
         "--report", str(report), str(program)],
        capture_output=True, text=True, env=_env(target),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (entry,) = json.loads(report.read_text())["files"]
    assert entry["status"] == "changed" and entry["warnings"] == [], entry
    return program


def _run(program: Path, target: str) -> dict:
    """Runs a migrated program on the current stack (tests/warm_python.py) and returns its JSON result."""
    out = program.with_suffix(".json")
    done = warm_python(_env(target)).run([str(program), "--json", str(out)], cwd=program.parent, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _code_only(path: Path) -> str:
    """Returns the program's tokens without comments and strings (docstrings may name TF 2.4 API)."""
    with path.open("rb") as f:
        tokens = [t.string for t in tokenize.tokenize(f.readline)
                  if t.type not in (tokenize.COMMENT, tokenize.STRING, tokenize.ENCODING)]
    return " ".join(tokens)


def _golden(name: str) -> dict:
    """Returns TF 2.4.0's recorded result for one program."""
    golden = json.loads((EXAMPLES / "goldens" / (name + ".json")).read_text())
    assert golden["tensorflow"] == "2.4.0"
    return golden


def test_goldens_make_the_programs_exercise_skips_and_growth():
    """Should record skipped steps and a changing loss scale, or the comparison proves little."""
    goldens = {name: _golden(name) for name in PROGRAMS}
    for name in ("custom_loop", "fit", "dynamic_loss_scale_object"):
        assert goldens[name]["skipped"], name
    for name in ("fit", "dynamic_loss_scale_object"):
        scales = goldens[name]["loss_scale"]
        assert any(b > a for a, b in zip(scales, scales[1:])), name
    assert len(set(goldens["fixed_scale"]["loss_scale"])) == 1


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_migrated_example_reproduces_tf24_golden(tmp_path, name, target):
    """Should, once migrated, give TF 2.4.0's loss-scale trajectory, skips and weights."""
    _require(target)
    program = _migrate(tmp_path, name, target)
    source = _code_only(program)
    assert not LEGACY_RE.search(source), LEGACY_RE.search(source)
    if target == "keras3":
        assert not KERAS3_LEGACY_RE.search(source), KERAS3_LEGACY_RE.search(source)
    golden = _golden(name)
    result = _run(program, target)
    assert result["steps"] == golden["steps"]
    assert result["loss_scale"] == golden["loss_scale"]
    assert result["skipped"] == golden["skipped"]
    # TF 2.4 and Keras 2 count a skipped step in `iterations`; Keras 3 does not (see docs/codemod.md).
    skipped_counted = target == "tf_keras"
    expected_iterations = golden["iterations"] - (0 if skipped_counted else len(golden["skipped"]))
    if target == "keras3" and "LossScaleOptimizer" in source and not _keras_class_counts_steps():
        expected_iterations = 0  # Keras 3.0-3.6's own class never advances its `iterations` (docs/support.md)
    assert result["iterations"] == expected_iterations
    assert len(result["weights"]) == len(golden["weights"])
    for got, want in zip(result["weights"], golden["weights"]):
        np.testing.assert_allclose(got, want, rtol=WEIGHT_RTOL, atol=WEIGHT_ATOL)
