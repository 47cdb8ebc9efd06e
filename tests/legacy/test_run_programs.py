"""TF 2.4-era programs (examples/tf24) run unmodified under `lossscale-compat run` and train as on TF 2.4.0."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from tf24_optimizers import float16_bound
from warm_python import warm_python

from lossscale_compat import _flavour
from lossscale_compat.legacy import _install


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tf24"
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
# Programs whose weights pass through float16 kernels: compared to float16 precision (docs/goldens.md).
FLOAT16_PROGRAMS = {"policy_fit", "fit_full_epochs"}


def run(program, tmp_path, *args, stderr=None):
    """Runs examples/tf24/PROGRAM.py through `python -m lossscale_compat run` (tests/warm_python.py); returns its JSON
    result (and appends what it wrote to stderr to the list `stderr`, if given)."""
    out = tmp_path / f"{program}.json"
    done = warm_python(ENV).run(["-m", "lossscale_compat", "run", str(EXAMPLES / f"{program}.py"), "--json", str(out),
                                 *args], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    if stderr is not None:
        stderr.append(done.stderr)
    return json.loads(out.read_text())


def golden(program):
    return json.loads((EXAMPLES / "goldens" / f"{program}.json").read_text())


def assert_trains_like(want, got, program):
    for key in ("steps", "loss_scale", "skipped", "iterations"):
        assert got[key] == want[key], f"{key}: {got[key]} != TF 2.4.0's {want[key]}"
    bound = float16_bound(want["steps"]) if program in FLOAT16_PROGRAMS else 1e-6  # float16_bound says why
    assert len(got["weights"]) == len(want["weights"])
    for got_w, want_w in zip(got["weights"], want["weights"]):
        np.testing.assert_allclose(got_w, want_w, rtol=bound, atol=bound)


@pytest.mark.parametrize("program", ["custom_loop", "fit", "fixed_scale", "dynamic_loss_scale_object",
                                     "policy_fit", "mirrored", "global_step"])
def test_program_trains_as_on_tf24(program, tmp_path):
    want = golden(program)
    got = run(program, tmp_path)
    assert_trains_like(want, got, program)
    if "policy" in want:
        assert got["policy"] == want["policy"]
    if "global_step" in want:  # TF 2.4 adopted the variable given as `iterations`: skipped steps advance it too
        assert got["global_step"] == want["global_step"]


def test_fit_runs_every_epoch_in_full_as_on_tf24_or_warns_that_it_did_not(tmp_path):
    """A finite input of exactly `steps_per_epoch` batches, several epochs: TF 2.4.0 ran each epoch in full. Where this
    Keras's `fit` lets the input run out (Keras 3.3.3: every second epoch runs no step), legacy mode says so."""
    want, stderr = golden("fit_full_epochs"), []
    got = run("fit_full_epochs", tmp_path, stderr=stderr)
    if _flavour.keras_fit_model_ending_epochs_early() is None:
        for label in ("dataset", "arrays"):
            assert_trains_like(want[label], got[label], "fit_full_epochs")
        assert "ShortEpochWarning" not in stderr[0]
        return
    assert all(got[label]["steps"] < want[label]["steps"] for label in ("dataset", "arrays"))
    assert f"ShortEpochWarning: Epoch 2 ran 0 of its {want['dataset']['steps'] // 3} steps" in stderr[0]


@pytest.mark.tf_checkpoint
def test_program_resumes_from_a_tf24_checkpoint_as_on_tf24(tmp_path):
    """`tf.train.Checkpoint(model=, optimizer=).restore` of TF 2.4.0's own checkpoint: weights, loss scale,
    iterations and the momentum slots (made only at the first step after the restore) all come back."""
    want = golden("restore_checkpoint")
    got = run("restore_checkpoint", tmp_path)
    assert got["restored"]["loss_scale"] == want["restored"]["loss_scale"]
    assert got["restored"]["iterations"] == want["restored"]["iterations"]
    assert_trains_like(want, got, "restore_checkpoint")
    np.testing.assert_allclose(np.concatenate(got["momentum"]), np.concatenate(want["momentum"]), rtol=1e-6, atol=1e-6)


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("restored_with", ["load_weights", "manager"])
def test_fit_program_resumes_with_load_weights_and_checkpoint_manager_as_on_tf24(restored_with, tmp_path):
    """`model.load_weights(prefix)` of TF 2.4.0's `save_weights` output (Keras 3 too), and a `CheckpointManager`
    directory TF 2.4.0 wrote: loss scale, iterations, weights and the momentum made at the next step come back."""
    want, got = golden("load_weights"), run("load_weights", tmp_path)
    if restored_with == "manager":
        want, got = want["manager"], got["manager"]
    assert got["restored"]["loss_scale"] == want["restored"]["loss_scale"]
    assert got["restored"]["iterations"] == want["restored"]["iterations"]
    assert_trains_like(want, got, "load_weights")
    assert len(got["momentum"]) == len(want["momentum"])
    np.testing.assert_allclose(np.concatenate(got["momentum"]), np.concatenate(want["momentum"]), rtol=1e-6, atol=1e-6)


# TF 2.4's class names, and ours for the same classes (docs/legacy_mode.md). With TF 2.4's optimizers (legacy mode's
# default on Keras 2) the names give the forms over them, which carry TF 2.4's own class names.
OUR_NAMES = {} if _flavour.tf24_optimizers_module() is not None and _install.tf24_optimizers_by_environment() else {
    "LossScaleOptimizerV1": "LossScaleOptimizer", "LossScaleOptimizer": "KerasLossScaleOptimizer"}


def first_sentence(message):
    return message.split(". ")[0].rstrip(".:")


def test_legacy_names_behave_as_on_tf24(tmp_path):
    """Every spelling resolves; Policy, set_policy, compile and the graph rewrite act as in TF 2.4.0."""
    want, got = golden("legacy_names"), run("legacy_names", tmp_path)
    assert set(got) == set(want)
    assert got.pop("spellings") == {spelling: OUR_NAMES.get(name, name)
                                    for spelling, name in want.pop("spellings").items()}
    assert want, "the golden recorded nothing beyond the spellings"
    for key, expected in want.items():
        observed = got[key]
        if isinstance(expected, dict) and "error" in expected:
            # Our messages start with TF 2.4.0's and then say what to do instead.
            assert observed.get("error") == expected["error"], f"{key}: {observed}"
            assert first_sentence(observed["message"]) == first_sentence(expected["message"]), key
        else:
            assert observed == expected, key
