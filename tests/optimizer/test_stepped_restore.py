"""A checkpoint restored into a loss-scale optimizer that has already stepped gives what TF 2.4.0 gave.

TF 2.4.0's answers are in tests/goldens/tf24_stepped_restore.json (tests/recorders/record_tf24_stepped_restore.py): a
second job steps twice, then restores the first job's checkpoint. From an optimizer-only checkpoint TF 2.4 restored
`iterations`, the loss scale and its counter at once and kept the job's own Adam slots (it checkpointed a slot only
with its variable); from one that also holds the model, the slots and weights too. Then both train on.

Today's optimizers give a checkpoint's slots back by position: with the model the resume matches TF 2.4.0 throughout;
without it the job goes on from the saved slots instead of its own. The restore reads the checkpoint's object graph to
tell the two apart and warns only when the checkpoint does not hold the variables (docs/optimizer.md). Over TF 2.4's
`OptimizerV2` (a legacy inner optimizer) TensorFlow restores slots as TF 2.4 did.
"""

import json
import warnings

import numpy as np
import pytest
import stepped_restore_program as program
import tensorflow as tf
from stepped_restore_program import train
from tf24_goldens import GOLDEN_DIR

import lossscale_compat
from lossscale_compat import _slots

GOLDEN = json.loads((GOLDEN_DIR / "tf24_stepped_restore.json").read_text())
FORMS = {
    "experimental": lambda inner: lossscale_compat.LossScaleOptimizer(inner, "dynamic"),
    "keras": lambda inner: lossscale_compat.KerasLossScaleOptimizer(inner),
}
pytestmark = pytest.mark.tf_checkpoint

BATCHES = GOLDEN["batches"]


def build(form):
    return program.build(FORMS[form])


UNHELD = "does not hold, outside the optimizer, 2 of the 2 variables"


def restore_warnings(checkpoint, prefix):
    """The messages of the warnings `checkpoint.restore(prefix)` gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint.restore(prefix)
    return [str(warning.message) for warning in caught]


def assert_state(model, optimizer, want, label):
    inner = optimizer.inner_optimizer
    assert int(optimizer.iterations.numpy()) == want["iterations"], label
    assert float(optimizer.loss_scale) == want["loss_scale"], label
    assert int(optimizer.dynamic_counter.numpy()) == want["counter"], label
    for name, slots in want["slots"].items():
        got = [_slots.slot_variable(inner, v, name).numpy() for v in model.trainable_variables]
        for got_slot, want_slot in zip(got, slots):
            np.testing.assert_allclose(got_slot, want_slot, rtol=2e-5, atol=2e-6, err_msg=f"{label} slot {name}")
    for got_w, want_w in zip(model.get_weights(), want["weights"]):
        np.testing.assert_allclose(got_w, want_w, rtol=2e-5, atol=2e-6, err_msg=f"{label} weights")


@pytest.mark.parametrize("checkpoint", ["optimizer_only", "with_model"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_restore_into_a_stepped_optimizer_as_tf24(form, checkpoint, tmp_path):
    want = GOLDEN[checkpoint]
    model, optimizer = build(form)
    train(model, optimizer, BATCHES["first_job"])
    assert_state(model, optimizer, want["saved"], "saved")
    saved = {"model": model} if checkpoint == "with_model" else {}
    prefix = tf.train.Checkpoint(steps=tf.Variable(3), optimizer=optimizer, **saved).save(str(tmp_path / "c"))

    second_model, second = build(form)
    train(second_model, second, BATCHES["second_job_own"])
    assert_state(second_model, second, want["before_restore"], "before the restore")
    restored = {"model": second_model} if checkpoint == "with_model" else {}
    told = restore_warnings(tf.train.Checkpoint(steps=tf.Variable(0), optimizer=second, **restored), prefix)
    assert len([message for message in told if UNHELD in message]) == (checkpoint == "optimizer_only"), told
    if checkpoint == "with_model":
        assert_state(second_model, second, want["after_restore"], "after the restore")
        train(second_model, second, BATCHES["after_restore"])
        assert_state(second_model, second, want["after_training"], "after training on")
        return
    # The named difference: the count and the scale as TF 2.4.0 restored them, the slots the checkpoint's, and the
    # weights too where today's optimizer checkpoints the variables it updates (Keras 3's do: docs/support.md).
    kernels = [name for name, shape in tf.train.list_variables(prefix) if shape == [3, 2]]
    weights = want["saved" if len(kernels) > len(want["saved"]["slots"]) else "after_restore"]["weights"]
    differs = dict(want["after_restore"], slots=want["saved"]["slots"], weights=weights)
    assert_state(second_model, second, differs, "after the restore, the checkpoint's slots")
    assert want["after_restore"]["slots"] != want["saved"]["slots"]  # TF 2.4.0 kept the job's own


def test_a_checkpoint_holding_the_model_restored_without_it_warns(tmp_path):
    """TF 2.4 restored a slot only with a variable the restore matched: with the model in the file but not in the
    restoring `tf.train.Checkpoint`, it kept the job's own slots (the golden's `model_saved_not_restored`)."""
    want = GOLDEN["model_saved_not_restored"]
    assert want["after_restore"]["slots"] == want["before_restore"]["slots"] != want["saved"]["slots"]
    model, optimizer = build("keras")
    train(model, optimizer, BATCHES["first_job"])
    prefix = tf.train.Checkpoint(steps=tf.Variable(3), optimizer=optimizer, model=model).save(str(tmp_path / "c"))
    second_model, second = build("keras")
    train(second_model, second, BATCHES["second_job_own"])
    told = restore_warnings(tf.train.Checkpoint(steps=tf.Variable(0), optimizer=second), prefix)
    assert len([message for message in told if UNHELD in message]) == 1, told
    for name, slots in want["saved"]["slots"].items():  # the named difference: the checkpoint's slots
        got = [_slots.slot_variable(second.inner_optimizer, v, name).numpy() for v in second_model.trainable_variables]
        for got_slot, want_slot in zip(got, slots):
            np.testing.assert_allclose(got_slot, want_slot, rtol=2e-5, atol=2e-6, err_msg=f"slot {name}")


def test_a_restore_before_the_first_step_does_not_warn_of_slots_held_outside(tmp_path):
    model, optimizer = build("keras")
    train(model, optimizer, BATCHES["first_job"])
    prefix = tf.train.Checkpoint(optimizer=optimizer, model=model).save(str(tmp_path / "c"))
    fresh_model, fresh = build("keras")
    told = restore_warnings(tf.train.Checkpoint(optimizer=fresh, model=fresh_model), prefix)
    assert not [message for message in told if "outside the optimizer" in message], told
