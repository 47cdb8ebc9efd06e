"""Programs modelled on public TF 2.4-era training code (examples/tf24/real_*.py) train as on TF 2.4.0: run
unmodified in legacy mode, and migrated by today's codemod for each target.

Cases known not to hold yet are strict xfails naming the exact cause (issue 25's work list): each flips to a
failure, to be removed, once the codemod or the library is fixed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorflow")  # the codemod's own CI sessions (nox -s codemod-libcst) run without TensorFlow
from tf24_optimizers import float16_bound  # noqa: E402
from warm_python import warm_python  # noqa: E402

from lossscale_compat import _flavour  # noqa: E402

from .test_migrated_examples import _env, _require  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tf24"
# Program -> how close its float results match TF 2.4.0's (docs/goldens.md): float16 kernels, Adam, float32.
PROGRAMS = {
    "real_mp_guide": "float16",
    "real_resnet_ctl": "float16",
    "real_transformer_rewrite": "adam",
    "real_efficientdet": "float16",
    "real_deblur_gan": "float16",
    "real_classifier_trainer": "float16",
    "real_albert_accumulation": "float16",
    "real_dreamer_optimizer": "float16",
    "real_tts_trainer": "adam",
    "real_opennmt_trainer": "float16",
    "real_model_garden_trainer": "float16",
}
TARGETS = ("keras3", "tf_keras")
STACK = "keras3" if _flavour.has_keras3_loss_scaling() else "keras2"

# (program, stack) -> why `lossscale-compat run` does not reproduce TF 2.4.0 yet: none since our Keras 3 class takes
# TF 2.4's `experimental_aggregate_gradients` (issue #23).
LEGACY_XFAIL: dict = {}
# (program, target) -> why today's codemod output does not run or does not match TF 2.4.0 (the same on every stack
# that serves the target): none since the codemod writes lossscale_compat's run-time fallbacks where no modern
# rewrite can be proven (issue 25: LSC134-LSC136).
MIGRATED_XFAIL: dict = {}


_GRAPH_REWRITE = ("tf.train.experimental.enable_mixed_precision_graph_rewrite(",
                  "lossscale_compat.enable_mixed_precision_graph_rewrite(")
_EXPERIMENTAL_POLICY = ("tf.keras.mixed_precision.experimental.Policy(", "lossscale_compat.Policy(")
# The run-time fallbacks at the sites the codemod once left alone, applied by hand to the original program before the
# codemod migrates the rest: the fallbacks themselves, apart from the rules that now write them.
FALLBACK_EDITS = {
    "real_mp_guide": [("from tensorflow.keras.mixed_precision import experimental as mixed_precision",
                       "from lossscale_compat import keras_experimental as mixed_precision")],
    "real_resnet_ctl": [_GRAPH_REWRITE, _EXPERIMENTAL_POLICY,
                        ("isinstance(optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer)",
                         "isinstance(optimizer, lossscale_compat.AnyLossScaleOptimizer)")],
    "real_transformer_rewrite": [_GRAPH_REWRITE],
    "real_efficientdet": [("isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer)",
                           "isinstance(self.optimizer, lossscale_compat.AnyLossScaleOptimizer)"),
                          ("tf2.keras.mixed_precision.experimental.Policy(policy_name, loss_scale=None)",
                           "lossscale_compat.Policy(policy_name, loss_scale=None)")],
    "real_classifier_trainer": [_EXPERIMENTAL_POLICY],
}
# (program, target) -> why the program does not yet train as on TF 2.4.0 with the fallbacks in place.
FALLBACK_XFAIL: dict = {}


def _xfail(request: pytest.FixtureRequest, reason: str | None) -> None:
    if reason:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def _golden(name: str) -> dict:
    golden = json.loads((EXAMPLES / "goldens" / f"{name}.json").read_text())
    assert golden["tensorflow"] == "2.4.0"
    return golden


def _runs(result: dict) -> dict:
    """The program's recorded training runs by name ("" for a program with one)."""
    if "steps" in result:
        return {"": result}
    return {key: value for key, value in result.items() if isinstance(value, dict) and "steps" in value}


def _bound(kind: str, steps: int) -> float:
    return {"float16": float16_bound(steps), "adam": 2e-5, "float32": 1e-6}[kind]  # float16_bound says why


def _keras3_iterations_frozen() -> bool:
    from lossscale_compat import _flavour

    return _flavour.has_keras3_loss_scaling() and not _flavour.keras_loss_scale_optimizer_counts_steps()


def assert_trains_like_tf24(got: dict, want: dict, kind: str, keras3_iterations: bool = False) -> None:
    """Scales, skips, steps and extras exactly, `iterations` exactly (or, with `keras3_iterations`, less the
    skipped steps as Keras 3's class counts), weights within the program's bound."""
    want_runs, got_runs = _runs(want), _runs(got)
    assert set(got_runs) == set(want_runs)
    for label, expected in want_runs.items():
        observed = got_runs[label]
        for key in ("steps", "loss_scale", "skipped"):
            assert observed[key] == expected[key], f"{label} {key}: {observed[key]} != TF 2.4.0's {expected[key]}"
        allowed = {expected["iterations"]}
        if keras3_iterations:
            allowed.add(expected["iterations"] - len(expected["skipped"]))
            if _keras3_iterations_frozen():  # Keras 3.0-3.6's own class: no step advances it (docs/support.md)
                allowed.add(0)
        assert observed["iterations"] in allowed, f"{label} iterations: {observed['iterations']} not in {allowed}"
        bound = _bound(kind, expected["steps"])
        assert len(observed["weights"]) == len(expected["weights"])
        for got_w, want_w in zip(observed["weights"], expected["weights"]):
            np.testing.assert_allclose(got_w, want_w, rtol=bound, atol=bound, err_msg=label)
        for key in set(expected) - {"steps", "loss_scale", "skipped", "iterations", "weights", "tensorflow"}:
            if isinstance(expected[key], list):
                np.testing.assert_allclose(observed[key], expected[key], rtol=bound, atol=bound, err_msg=key)
            else:
                assert observed[key] == expected[key], f"{label} {key}"


# Programs that checkpoint their optimizer: on Keras 3.0, whose optimizers are not TensorFlow trackables, our
# loss-scale optimizer refuses the checkpoint with this error instead of leaving its state out.
CHECKPOINTING = {"real_tts_trainer", "real_opennmt_trainer", "real_model_garden_trainer"}
# Programs whose TF 2.4 behaviour depends on `OptimizerV2` (docs/codemod.md): migrated for tf_keras, they build
# `tf.keras.optimizers.legacy.*` (LSC153), as legacy mode gives them.
ON_OPTIMIZER_V2 = {
    "real_tts_trainer": "AdamWeightDecay overrides apply_gradients(grads_and_vars, clip_norm, ...)",
    "real_opennmt_trainer": "it calls get_gradients and checkpoints the optimizer",
}
# Programs that are interrupted and resume from a checkpoint of the model and the optimizer: on TF 2.4.0 their
# `resumed` run ended exactly as their `uninterrupted` one (slots included where recorded).
RESUMES_LIKE_UNINTERRUPTED = {"real_opennmt_trainer", "real_model_garden_trainer"}
_UNTRACKABLE = "cannot be saved in or restored from a TensorFlow checkpoint on Keras 3.0"


def _run(program: Path, out: Path, env: dict, legacy: bool) -> dict | None:
    """The program's JSON result; None where it checkpoints and Keras cannot (checked to fail naming why)."""
    command = [*(["-m", "lossscale_compat", "run"] if legacy else []), str(program), "--json", str(out)]
    done = warm_python(env).run(command, cwd=program.parent)  # `python COMMAND`, without TensorFlow's start-up
    if program.stem in CHECKPOINTING and not _flavour.keras_optimizers_are_trackable():
        assert done.returncode != 0 and _UNTRACKABLE in done.stderr, done.stderr[-3000:]
        return None
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _migrate(tmp_path: Path, name: str, target: str, edits: list | None = None) -> tuple[Path, dict]:
    """Copies a program (with `edits` made) and its harness to tmp_path, migrates it with the real CLI; returns it
    and its report."""
    shutil.copy(EXAMPLES / "_harness.py", tmp_path / "_harness.py")
    program, report = tmp_path / f"{name}.py", tmp_path / "report.json"
    source = (EXAMPLES / f"{name}.py").read_text()
    if edits is not None:
        for old, new in edits:
            assert old in source, old
            source = source.replace(old, new)
        source = source.replace("import tensorflow as tf\n", "import tensorflow as tf\n\nimport lossscale_compat\n", 1)
    program.write_text(source)
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "--target", target,
         "--report", str(report), str(program)],
        capture_output=True, text=True, env=_env(target),
    )
    (entry,) = json.loads(report.read_text())["files"]
    assert entry["status"] == "changed" or (edits is not None and entry["status"] == "unchanged"), entry
    # Exit 1: sites were left for a person (their warnings are in the report); anything else is a failure.
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return program, entry


def test_goldens_exercise_skips_and_scale_changes():
    """Every recorded run skips a step and changes its scale, or the comparison proves little."""
    for name in PROGRAMS:
        for label, run in _runs(_golden(name)).items():
            assert run["skipped"], (name, label)
            assert len(set(run["loss_scale"])) > 1, (name, label)
            assert run["iterations"] == run["steps"], (name, label)  # TF 2.4 counted skipped steps
        if name in RESUMES_LIKE_UNINTERRUPTED:
            assert_resumed_like_uninterrupted(_golden(name), "float32")


def assert_resumed_like_uninterrupted(result: dict, kind: str) -> None:
    """The `resumed` run ends as the `uninterrupted` one: every recorded value but what the restore gave back."""
    resumed, uninterrupted = result["resumed"], result["uninterrupted"]
    assert set(resumed) - {"restored"} == set(uninterrupted)
    bound = _bound(kind, resumed["steps"])
    for key, value in uninterrupted.items():
        if key == "weights":
            for got_w, want_w in zip(resumed[key], value):
                np.testing.assert_allclose(got_w, want_w, rtol=bound, atol=bound, err_msg=key)
        elif key == "slots":
            np.testing.assert_allclose(resumed[key], value, rtol=bound, atol=bound, err_msg=key)
        else:
            assert resumed[key] == value, f"resumed {key}: {resumed[key]} != uninterrupted {value}"


@pytest.mark.parametrize("name", PROGRAMS)
def test_real_program_runs_unmodified_in_legacy_mode_as_on_tf24(name, tmp_path, request):
    """`lossscale-compat run` of the unmodified program gives TF 2.4.0's numbers, `iterations` included."""
    _xfail(request, LEGACY_XFAIL.get((name, STACK)))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
    got = _run(EXAMPLES / f"{name}.py", tmp_path / f"{name}.json", env, legacy=True)
    if got is not None:
        assert_trains_like_tf24(got, _golden(name), PROGRAMS[name])
        if name in RESUMES_LIKE_UNINTERRUPTED:
            assert_resumed_like_uninterrupted(got, "float32")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_real_program_migrated_runs_as_on_tf24(name, target, tmp_path, request):
    """`migrate --write --target T` output runs on the stack that serves T and gives TF 2.4.0's numbers
    (`iterations` less the skipped steps where it builds Keras 3's own class, as docs/codemod.md says)."""
    _require(target)
    _xfail(request, MIGRATED_XFAIL.get((name, target)))
    program, _ = _migrate(tmp_path, name, target)
    if target == "tf_keras" and name in ON_OPTIMIZER_V2:  # the tf_keras target keeps TF 2.4's optimizers there
        assert "tf.keras.optimizers.legacy." in program.read_text(), ON_OPTIMIZER_V2[name]
    got = _run(program, tmp_path / f"{name}.out.json", _env(target), legacy=False)
    if got is None:
        return
    # Keras 3's own class (built by compile, or written by the codemod) leaves skipped steps out of `iterations`
    # (Keras 3.0-3.6's counts no step at all); lossscale_compat's classes count them, as TF 2.4 did. Each is a
    # documented contract; nothing else is.
    assert_trains_like_tf24(got, _golden(name), PROGRAMS[name], keras3_iterations=target == "keras3")
    if name in RESUMES_LIKE_UNINTERRUPTED:
        assert_resumed_like_uninterrupted(got, "float32")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(FALLBACK_EDITS))
def test_real_program_with_runtime_fallbacks_runs_as_on_tf24(name, target, tmp_path, request):
    """With lossscale_compat's run-time fallbacks at the sites today's codemod leaves (`FALLBACK_EDITS`), and the
    rest migrated, each program runs and gives TF 2.4.0's numbers: what issue 25's rules are to produce."""
    _require(target)
    _xfail(request, FALLBACK_XFAIL.get((name, target)))
    program, entry = _migrate(tmp_path, name, target, FALLBACK_EDITS[name])
    imports = [line for line in program.read_text().splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in imports if "experimental" in line and "lossscale_compat" not in line], imports
    got = _run(program, tmp_path / f"{name}.out.json", _env(target), legacy=False)
    assert got is not None
    assert_trains_like_tf24(got, _golden(name), PROGRAMS[name], keras3_iterations=target == "keras3")


@pytest.mark.parametrize("target", TARGETS)
def test_second_migrate_of_the_real_programs_changes_nothing(target, tmp_path):
    """One pass is enough: `migrate --write` run again on its own output leaves every file as it was."""
    for name in PROGRAMS:
        shutil.copy(EXAMPLES / f"{name}.py", tmp_path / f"{name}.py")
    command = [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "--target", target, str(tmp_path)]
    first = subprocess.run(command, capture_output=True, text=True)
    assert first.returncode in (0, 1), first.stdout + first.stderr
    migrated = {path.name: path.read_bytes() for path in tmp_path.glob("*.py")}
    assert all(migrated[f"{name}.py"] != (EXAMPLES / f"{name}.py").read_bytes() for name in PROGRAMS)
    second = subprocess.run(command, capture_output=True, text=True)
    assert second.returncode in (0, 1), second.stdout + second.stderr
    assert {path.name: path.read_bytes() for path in tmp_path.glob("*.py")} == migrated
