"""TF 2.4.0's own checkpoints restore through `tf.train.Checkpoint(...).restore`, as TF 2.4 programs do it."""

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import (KERAS3, OPTIMIZER_GOLDENS, assert_states_differ, assert_states_match, build_optimizer,
                             linear_model, state, train)

import lossscale_compat

CHECKPOINTS = OPTIMIZER_GOLDENS["checkpoint"]


@pytest.fixture(params=["plain", "legacy mode"])
def mode(request):
    if request.param == "legacy mode":
        lossscale_compat.install()
        yield request.param
        lossscale_compat.uninstall()
    else:
        yield request.param


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_tf24_checkpoint_restores_and_training_continues_as_on_tf24(case, mode):
    """Loss scale, counter and iterations at once; slots, made at the first step after the restore, then."""
    model, optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    want = case["restored_state_before_first_step"]
    assert_states_differ(want, state(optimizer, model.trainable_variables))
    status = tf.train.Checkpoint(model=model, optimizer=optimizer).restore(str(GOLDEN_DIR / case["path"]))
    restored = state(optimizer, model.trainable_variables)
    for key in ("loss_scale", "dynamic_counter", "iterations"):
        assert restored[key] == want[key], key
    if KERAS3 and mode == "plain":
        # Keras 3 names a model's variables differently from TF 2.4; legacy mode (or restore_tf24_checkpoint)
        # maps them. The optimizer's own state above came back regardless.
        status.expect_partial()
        return
    # TF 2.4 made the slots at the restore; ours are made, and restored, at the first step. The next steps
    # below, which read them, show that they came back.
    assert_states_match([{k: v for k, v in want.items() if k != "slots"}], [restored])
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


@pytest.mark.tf_checkpoint
def test_a_slot_the_inner_optimizer_does_not_keep_is_an_error_naming_it():
    case = next(c for c in CHECKPOINTS if "momentum" in c["name"])
    lossscale_compat.install(tf24_optimizers=False)  # today's Adam, built before the restore (`build`)
    try:
        model = linear_model(case)
        inner = dict(case["inner"], class_name="Adam", config={"learning_rate": 0.1})
        optimizer = build_optimizer(case["form"], inner)
        optimizer.build(model.trainable_variables)
        with pytest.raises(ValueError, match="TF 2.4 slot 'momentum' of variable"):
            tf.train.Checkpoint(model=model, optimizer=optimizer).restore(str(GOLDEN_DIR / case["path"]))
    finally:
        lossscale_compat.uninstall()


FORMS = {"experimental": {"class": "experimental", "loss_scale": {"py": "str", "value": "dynamic"}}, "keras": {"class": "LossScaleOptimizer"}}
SGD = {"class_name": "SGD", "config": {"learning_rate": 0.1}}


def foreign_checkpoint(tmp_path):
    """A checkpoint whose optimizer holds a custom `warmup_steps` that no optimizer of ours keeps."""
    foreign = tf.train.Checkpoint(optimizer=tf.train.Checkpoint(
        iter=tf.Variable(7, dtype=tf.int64), warmup_steps=tf.Variable(100.0)))
    return foreign.write(str(tmp_path / "foreign"))


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_checkpoint_name_nothing_matches_raises_naming_it_at_the_restore(form, tmp_path):
    """Into a built optimizer, an entry no state of ours keeps raises at once instead of being dropped."""
    optimizer = build_optimizer(FORMS[form], SGD)
    variable = tf.Variable([1.0])
    optimizer.apply_gradients([(tf.constant([0.5]), variable)])
    with pytest.raises(ValueError, match="'warmup_steps'.*same optimizer class"):
        tf.train.Checkpoint(optimizer=optimizer).restore(foreign_checkpoint(tmp_path))


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_checkpoint_name_nothing_matches_raises_naming_it_at_the_first_step(form, tmp_path):
    """Into an optimizer not built yet (Keras makes some state only then), it raises at the first step."""
    optimizer = build_optimizer(FORMS[form], SGD)
    tf.train.Checkpoint(optimizer=optimizer).restore(foreign_checkpoint(tmp_path))
    with pytest.raises(ValueError, match="'warmup_steps'.*same optimizer class"):
        optimizer.apply_gradients([(tf.constant([0.5]), tf.Variable([1.0]))])


@pytest.mark.tf_checkpoint
def test_a_checkpoint_of_our_own_trained_optimizer_restores_everything_into_a_fresh_one(tmp_path):
    """State Keras makes only when it builds (momentum) is not mistaken for a name nothing matches."""
    inner = {"class_name": "SGD", "config": {"learning_rate": 0.1, "momentum": 0.9}}
    source, variable = build_optimizer(FORMS["experimental"], inner), tf.Variable([1.0, 2.0])
    for grad in ([1.0, 1.0], [float("inf"), 1.0], [0.5, 0.25]):
        source.apply_gradients([(tf.constant(grad), variable)])
    prefix = tf.train.Checkpoint(optimizer=source, variable=variable).save(str(tmp_path / "own"))
    target, copy = build_optimizer(FORMS["experimental"], inner), tf.Variable([0.0, 0.0])
    assert (int(target.iterations), int(target.skipped_steps)) != (3, 1)
    status = tf.train.Checkpoint(optimizer=target, variable=copy).restore(prefix)
    assert (int(target.iterations), int(target.skipped_steps)) == (3, 1)
    for optimizer, var in ((source, variable), (target, copy)):
        optimizer.apply_gradients([(tf.constant([0.0, 0.0]), var)])  # moves by the momentum alone
    status.assert_consumed()
    np.testing.assert_array_equal(copy.numpy(), variable.numpy())


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_a_checkpointed_hyperparameter_overrides_the_constructor_as_in_tf24(case):
    """TF 2.4 restored `momentum` into the variable its optimizer read, so the checkpoint's 0.9 beats a
    constructor's 0.5; training then continues exactly as TF 2.4.0's did with 0.9."""
    lossscale_compat.install()
    try:
        model = linear_model(case)
        inner = dict(case["inner"], config=dict(case["inner"]["config"], momentum=0.5))
        optimizer = build_optimizer(case["form"], inner)
        tf.train.Checkpoint(model=model, optimizer=optimizer).restore(str(GOLDEN_DIR / case["path"]))
        assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))
    finally:
        lossscale_compat.uninstall()


@pytest.mark.tf_checkpoint
def test_a_hyperparameter_the_inner_optimizer_has_no_setting_for_is_an_error_naming_it(tmp_path):
    """TF 2.4's SGD `decay` of 0.01 has no setting in today's optimizers; it raises rather than train otherwise."""
    prefix = tf.train.Checkpoint(optimizer=tf.train.Checkpoint(decay=tf.Variable(0.01))).write(str(tmp_path / "d"))
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match="hyperparameter decay=0.01.*no 'decay' setting"):
        tf.train.Checkpoint(optimizer=optimizer).restore(prefix)


def test_a_tf24_checkpoint_with_more_layers_than_the_built_model_raises_naming_the_layer():
    """In legacy mode, TF 2.4.0's two-layer `save_weights` into a built one-layer model raises instead of deferring."""
    prefix = str(GOLDEN_DIR.parents[1] / "examples" / "tf24" / "goldens" / "tf24_weights" / "weights")
    lossscale_compat.install()
    try:
        model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
        with pytest.raises(ValueError, match="'layer_with_weights-1'.*1 layers with weights"):
            tf.train.Checkpoint(root=model).restore(prefix)
    finally:
        lossscale_compat.uninstall()
