"""TF 2.4.0's own checkpoints restore through `tf.train.Checkpoint(...).restore`, as TF 2.4 programs do it."""

import pytest
import tensorflow as tf
from test_state import CHECKPOINTS, linear_model, train
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3, assert_states_match, build_optimizer, state

import lossscale_compat


@pytest.fixture(params=["plain", "legacy mode"])
def mode(request):
    if request.param == "legacy mode":
        lossscale_compat.install()
        yield request.param
        lossscale_compat.uninstall()
    else:
        yield request.param


@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_tf24_checkpoint_restores_and_training_continues_as_on_tf24(case, mode):
    """Loss scale, counter and iterations at once; slots, made at the first step after the restore, then."""
    model, optimizer = linear_model(case), build_optimizer(case["form"], case["inner"])
    fresh = state(optimizer, model.trainable_variables)
    want = case["restored_state_before_first_step"]
    assert (fresh["loss_scale"], fresh["iterations"]) != (want["loss_scale"], want["iterations"])
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


def test_a_slot_the_inner_optimizer_does_not_keep_is_an_error_naming_it():
    case = next(c for c in CHECKPOINTS if "momentum" in c["name"])
    lossscale_compat.install()
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


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_checkpoint_name_nothing_matches_raises_naming_it(form, tmp_path):
    """An optimizer entry no state of ours keeps (here a custom `warmup_steps`) raises instead of being dropped."""
    foreign = tf.train.Checkpoint(optimizer=tf.train.Checkpoint(
        iter=tf.Variable(7, dtype=tf.int64), warmup_steps=tf.Variable(100.0)))
    prefix = foreign.write(str(tmp_path / "foreign"))
    optimizer = build_optimizer(FORMS[form], SGD)
    with pytest.raises(ValueError, match="'warmup_steps'.*same optimizer class"):
        tf.train.Checkpoint(optimizer=optimizer).restore(prefix)


def test_restoring_a_checkpoint_of_our_own_optimizer_raises_nothing(tmp_path):
    """Names our own class wrote are all matched: the unknown-name error fires only for foreign state."""
    source = build_optimizer(FORMS["experimental"], SGD)
    source.iterations.assign(5)
    prefix = tf.train.Checkpoint(optimizer=source).save(str(tmp_path / "own"))
    target = build_optimizer(FORMS["experimental"], SGD)
    assert int(target.iterations.numpy()) != 5
    tf.train.Checkpoint(optimizer=target).restore(prefix).assert_existing_objects_matched()
    assert int(target.iterations.numpy()) == 5


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


def test_a_hyperparameter_the_inner_optimizer_has_no_setting_for_is_an_error_naming_it(tmp_path):
    """TF 2.4's SGD `decay` of 0.01 has no setting in today's optimizers; it raises rather than train otherwise."""
    prefix = tf.train.Checkpoint(optimizer=tf.train.Checkpoint(decay=tf.Variable(0.01))).write(str(tmp_path / "d"))
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match="hyperparameter decay=0.01.*no 'decay' setting"):
        tf.train.Checkpoint(optimizer=optimizer).restore(prefix)
