"""On Keras 2 the skipped-step count is a value of the optimizer's own checkpoint node, so TF 2.4.0's checkpoints,
which lack it, restore as strictly as on TF 2.4.0, and checkpoints that kept it as a variable still restore it."""

import json

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3, OPTIMIZER_GOLDENS, assert_states_match, build_optimizer, linear_model, train

from lossscale_compat import KerasLossScaleOptimizer
from lossscale_compat import _flavour

pytestmark = [pytest.mark.tf_checkpoint,
              pytest.mark.skipif(KERAS3, reason="Keras 3 reads TF 2.4.0's checkpoints through restore_tf24_checkpoint")]

CHECKPOINTS = OPTIMIZER_GOLDENS["checkpoint"]
OLD = GOLDEN_DIR / "count_variable_ckpt"
OLD_STATES = json.loads((OLD / "state.json").read_text())["states"]
INNER_KINDS = {"todays_inner": lambda: _flavour.STACK_OPTIMIZERS, "legacy_inner": _flavour.tf24_optimizers_module}


@pytest.mark.parametrize("kind", sorted(INNER_KINDS))
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_tf24_checkpoints_pass_tf24s_own_restore_checks(case, kind):
    """TF 2.4.0 itself read these files and passed `assert_existing_objects_matched()` and `assert_consumed()`
    (tests/recorders/record_tf24_optimizer.py); so do both inner kinds, and TF 2.4.0's next steps follow."""
    model = linear_model(case)
    optimizer = build_optimizer(case["form"], case["inner"], INNER_KINDS[kind]())
    status = tf.train.Checkpoint(model=model, optimizer=optimizer).read(str(GOLDEN_DIR / case["path"]))
    status.assert_existing_objects_matched()
    assert int(optimizer.skipped_steps) == 0  # TF 2.4 counted nothing
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))
    status.assert_consumed()


@pytest.mark.parametrize("kind", sorted(INNER_KINDS))
def test_a_checkpoint_keeps_the_count_as_a_value_of_the_optimizer(kind, tmp_path):
    """The count is saved under the optimizer's node and restored; the other keys are Keras 2's own."""
    var = tf.Variable([1.0])
    source = KerasLossScaleOptimizer(INNER_KINDS[kind]().SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    for gradient in (float("nan"), 1.0, float("inf")):
        source.apply_gradients([(tf.constant([gradient]), var)])
    path = tf.train.Checkpoint(var=var, optimizer=source).write(str(tmp_path / "ckpt"))
    keys = {name for name, _ in tf.train.list_variables(path)}
    assert "optimizer/.ATTRIBUTES/skipped_steps" in keys
    assert not any("skipped_steps/" in key for key in keys), keys
    target = KerasLossScaleOptimizer(INNER_KINDS[kind]().SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    copy = tf.Variable([0.0])
    status = tf.train.Checkpoint(var=copy, optimizer=target).read(path)
    status.assert_existing_objects_matched()
    assert int(target.skipped_steps) == int(source.skipped_steps) == 2
    target.apply_gradients([(tf.constant([0.5]), copy)])  # makes the slots, if any, and consumes everything
    status.assert_consumed()


@pytest.mark.parametrize("kind", sorted(OLD_STATES))
def test_checkpoints_with_the_count_as_a_variable_still_restore_it(kind):
    """The layout this package wrote until 2026-11-27 (tests/recorders/write_count_variable_checkpoints.py)."""
    want = OLD_STATES[kind]
    var = tf.Variable([0.0])
    optimizer = KerasLossScaleOptimizer(INNER_KINDS[kind]().SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    status = tf.train.Checkpoint(var=var, optimizer=optimizer).read(str(OLD / kind))
    status.assert_existing_objects_matched()
    got = {"skipped_steps": int(optimizer.skipped_steps), "iterations": int(optimizer.iterations),
           "loss_scale": float(optimizer.loss_scale), "var": float(var.numpy()[0])}
    assert got == {key: want[key] for key in got}
    optimizer.apply_gradients([(tf.constant([0.5]), var)])
    status.assert_consumed()
