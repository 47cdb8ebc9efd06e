"""Both loss-scale optimizer forms take TF 2.4's `OptimizerV2` on Keras 2 (`tf.keras.optimizers.legacy`, and custom
subclasses written against TF 2.4) and train them as TF 2.4.0 did; on Keras 3 such a subclass gets a clear error."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf
from test_configs import expect
from tf24_goldens import GOLDEN_DIR, our_class
from tf24_optimizers import (assert_close, KERAS3, OPTIMIZER_GOLDENS, assert_states_differ, assert_states_match, batch,
                             build_optimizer, compiled, linear_model, specs, state, tf24_step, train)

import optimizer_v2_programs as programs
from lossscale_compat import (DynamicLossScale, FixedLossScale, KerasLossScaleOptimizer, LossScaleOptimizer,
                              restore_tf24_checkpoint)
from lossscale_compat import _flavour

GOLDENS = json.loads((GOLDEN_DIR / "tf24_optimizer_v2.json").read_text())["cases"]
CASES = sorted(GOLDENS)
CUSTOM_LOOP = OPTIMIZER_GOLDENS["custom_loop"]
CHECKPOINTS = OPTIMIZER_GOLDENS["checkpoint"]
OUR_EXTRA_CHECKPOINT_KEY = "optimizer/.ATTRIBUTES/skipped_steps"  # docs/monitoring.md#skipped_steps
keras2_only = pytest.mark.skipif(KERAS3, reason="Keras 3 has no OptimizerV2 (tested below for its error)")


def legacy_optimizers():
    return tf.keras.optimizers.legacy


def fresh(case_name):
    inner_name, form = case_name.split("/")
    custom_class = programs.custom_momentum_sgd_class(legacy_optimizers().Optimizer)
    inner = programs.inner_optimizer(inner_name, legacy_optimizers(), custom_class)
    return programs.wrap(form, inner, LossScaleOptimizer, KerasLossScaleOptimizer)


@keras2_only
@pytest.mark.parametrize("mode", programs.MODES)
@pytest.mark.parametrize("case", CASES)
def test_custom_loop_matches_tf24(case, mode):
    optimizer = fresh(case)
    assert isinstance(optimizer, KerasLossScaleOptimizer)
    assert isinstance(optimizer, LossScaleOptimizer) is case.endswith(("v1_dynamic", "v1_fixed"))
    assert_close(GOLDENS[case][mode], programs.custom_loop(tf, optimizer, mode))


@keras2_only
@pytest.mark.parametrize("case", CASES)
def test_hyperparameters_are_tf24s_variables(case):
    assert GOLDENS[case]["hyperparameters"]  # the golden read at least the learning rate
    assert_close(GOLDENS[case]["hyperparameters"], programs.hyperparameters(tf, fresh(case)))


@keras2_only
@pytest.mark.parametrize("case", CASES)
def test_checkpoint_has_tf24s_keys_and_our_skip_counter(case, tmp_path):
    keys = programs.checkpoint_keys(tf, fresh(case), str(tmp_path))
    assert OUR_EXTRA_CHECKPOINT_KEY in keys
    assert sorted(set(keys) - {OUR_EXTRA_CHECKPOINT_KEY}) == GOLDENS[case]["checkpoint_keys"]


@keras2_only
@pytest.mark.parametrize("case", [c for c in CASES if c.startswith(("custom", "SGD"))])
def test_fit_matches_tf24(case):
    assert_close(GOLDENS[case]["fit"], programs.fit(tf, np, fresh(case)))


@keras2_only
@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("custom")])
def test_checkpoint_restores_into_a_fresh_optimizer_and_training_continues(case, tmp_path):
    """Save after three steps, restore into a new wrapper over a new custom optimizer: the next steps are TF 2.4's."""
    expected = GOLDENS[case]["eager"]
    trained, var = fresh(case), tf.Variable([1.0, 2.0])
    for grads in programs.GRADIENTS[:3]:
        trained.apply_gradients([(tf.constant(grads), var)])  # as TF 2.4 applied them: not scaled, not unscaled
    path = tf.train.Checkpoint(optimizer=trained, var=var).save(str(tmp_path / "ckpt"))
    restored, restored_var = fresh(case), tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(optimizer=restored, var=restored_var).restore(path).assert_existing_objects_matched()
    for grads, after in zip(programs.GRADIENTS[3:], expected[3:]):
        restored.apply_gradients([(tf.constant(grads), restored_var)])
        assert_close(after["var"], [float(x) for x in restored_var.numpy()])
        assert float(restored.loss_scale) == after["loss_scale"]
        assert int(restored.iterations.numpy()) == after["iterations"]


@keras2_only
def test_skipped_steps_counts_the_skipped_step():
    optimizer = fresh("custom_momentum_sgd/v2_dynamic")
    programs.custom_loop(tf, optimizer, "function")
    assert int(optimizer.skipped_steps.numpy()) == 1  # GRADIENTS has one non-finite step


@keras2_only
@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
@pytest.mark.parametrize("case", CUSTOM_LOOP, ids=[c["name"] for c in CUSTOM_LOOP])
def test_optimizer_goldens_with_legacy_inner_optimizers(case, mode):
    """The recorded custom-loop cases (tests/goldens/optimizer.json), with TF 2.4's own `OptimizerV2` inside."""
    kernel = tf.Variable(case["initial_kernel"], dtype=tf.float32, name="kernel")
    optimizer = build_optimizer(case["form"], case["inner"], legacy_optimizers())

    def forward(x, y):
        return tf.reduce_mean(tf.square(tf.matmul(x, kernel) - y))

    step = compiled(tf24_step(optimizer, [kernel], forward), mode)
    observed = [state(optimizer, [kernel], step(*batch(data))) for data in case["data"]["batches"]]
    tolerance = dict(rtol=2e-5, atol=2e-5) if case["inner"]["class_name"] == "Adam" else {}
    assert_states_match(case["modes"][mode]["steps"], observed, **tolerance)


@keras2_only
def test_a_subclass_of_ours_given_a_legacy_optimizer_says_what_to_do():
    class MyLossScaleOptimizer(KerasLossScaleOptimizer):
        pass

    with pytest.raises(TypeError, match="lossscale_compat.KerasLossScaleOptimizer itself takes legacy optimizers"):
        MyLossScaleOptimizer(legacy_optimizers().SGD(1.0))


@pytest.mark.skipif(not KERAS3, reason="on Keras 2 such a subclass is TF 2.4's OptimizerV2 and trains (above)")
@pytest.mark.parametrize("form", ["v2_dynamic", "v1_fixed"])
def test_keras3_refuses_a_tf24_style_subclass_naming_the_way_out(form):
    class TF24Style(tf.keras.optimizers.SGD):
        def _create_slots(self, var_list):
            raise AssertionError("never called on Keras 3")

        def _resource_apply_dense(self, grad, var, apply_state=None):
            raise AssertionError("never called on Keras 3")

    with pytest.raises(TypeError) as raised:
        programs.wrap(form, TF24Style(0.1), LossScaleOptimizer, KerasLossScaleOptimizer)
    message = str(raised.value)
    assert "TF24Style" in message and "_resource_apply_dense" in message
    assert "TF_USE_LEGACY_KERAS=1" in message and "update_step" in message


@keras2_only
@pytest.mark.parametrize("case", ["SGD/v2_fixed", "SGD/v1_fixed"])
def test_attribute_errors_name_tf24s_class(case):
    """TF 2.4's messages named its classes, `LossScaleOptimizer` and `LossScaleOptimizerV1`."""
    expected = "LossScaleOptimizerV1" if "/v1" in case else "LossScaleOptimizer"
    with pytest.raises(AttributeError, match=f"^'{expected}' object has no attribute 'no_such_setting'"):
        fresh(case).no_such_setting


@keras2_only
def test_a_failed_construction_leaves_the_legacy_optimizer_free():
    inner = legacy_optimizers().SGD(1.0)
    with pytest.raises(ValueError, match='"initial_scale" must be specified'):
        KerasLossScaleOptimizer(inner, dynamic=False)
    assert KerasLossScaleOptimizer(inner).inner_optimizer is inner


def restored_from_tf24_checkpoint(case, restore, **inner_config):
    """The golden case's model and loss-scale optimizer over a legacy inner optimizer, restored with `restore`."""
    model = linear_model(case)
    inner = dict(case["inner"], config=dict(case["inner"]["config"], **inner_config))
    optimizer = build_optimizer(case["form"], inner, legacy_optimizers())
    assert_states_differ(case["restored_state_before_first_step"], state(optimizer, model.trainable_variables))
    return model, optimizer, restore(str(GOLDEN_DIR / case["path"]), model, optimizer)


@keras2_only
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_restore_tf24_checkpoint_into_a_legacy_inner_optimizer(case):
    """Every key TF 2.4.0 wrote lands (its hyperparameter variables too: OptimizerV2 keeps them); the slots are there
    at once, as on TF 2.4.0; then TF 2.4.0's next steps."""
    model, optimizer, restored = restored_from_tf24_checkpoint(
        case, lambda path, model, optimizer: restore_tf24_checkpoint(path, model=model, optimizer=optimizer))
    assert sorted(restored) == sorted(case["variables"])
    assert case["slots_exist_right_after_restore"]
    assert_states_match([case["restored_state_before_first_step"]], [state(optimizer, model.trainable_variables)])
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


@keras2_only
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_restore_tf24_checkpoint_gives_a_legacy_inner_the_checkpoints_momentum(case):
    """Built with another momentum, the optimizer takes the checkpoint's, as TF 2.4 did (the next steps show it)."""
    assert case["inner"]["config"]["momentum"] != 0.5
    model, optimizer, _ = restored_from_tf24_checkpoint(
        case, lambda path, model, optimizer: restore_tf24_checkpoint(path, model=model, optimizer=optimizer),
        momentum=0.5)
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


@keras2_only
@pytest.mark.parametrize("case", CHECKPOINTS, ids=[c["name"] for c in CHECKPOINTS])
def test_tensorflows_own_restore_reads_tf24_checkpoints_into_a_legacy_inner_optimizer(case):
    """`tf.train.Checkpoint(...).restore`, as TF 2.4 programs call it: Keras 2's OptimizerV2 loss-scale optimizer
    keeps TF 2.4's layout, so all of TF 2.4.0's state lands, slots included; only the `save_counter` of `restore`,
    which the golden's `write` did not save, is unmatched (our skip count is a value of the optimizer's node)."""
    model, optimizer, status = restored_from_tf24_checkpoint(
        case, lambda path, model, optimizer: tf.train.Checkpoint(model=model, optimizer=optimizer).restore(path))
    assert_states_match([case["restored_state_before_first_step"]], [state(optimizer, model.trainable_variables)])
    with pytest.raises(AssertionError, match="unmatched objects") as unmatched:
        status.assert_existing_objects_matched()
    assert sorted(re.findall(r"<tf.Variable '([^']+)'", str(unmatched.value))) == ["save_counter:0"]
    assert_states_match(case["continued"], train(model, optimizer, case["data_after"]["batches"]))


FORMS = OPTIMIZER_GOLDENS["configs"]["forms"]


def form_over_legacy_inner(case):
    inner = specs.inner_optimizer(case["inner"], legacy_optimizers())
    return specs.lso(case["form"], inner, LossScaleOptimizer, KerasLossScaleOptimizer, FixedLossScale, DynamicLossScale)


@keras2_only
@pytest.mark.parametrize("which", ["from_config_same_class", "from_config_other_class"])
@pytest.mark.parametrize("case", [c for c in FORMS if "ok" in c["result"]], ids=[c["name"] for c in FORMS
                                                                                if "ok" in c["result"]])
def test_from_config_over_a_legacy_inner_gives_tf24s_form(case, which):
    """Each form's config through `from_config` of the same and of the other form gives TF 2.4's class (by name;
    over OptimizerV2 it is the legacy form, an instance of ours) and settings, or TF 2.4's error."""
    optimizer = form_over_legacy_inner(case)
    if which == "from_config_same_class":
        cls = type(optimizer)
    else:
        cls = KerasLossScaleOptimizer if isinstance(optimizer, LossScaleOptimizer) else LossScaleOptimizer
    expected = case[which]
    restored = expect(expected, lambda: cls.from_config(json.loads(json.dumps(optimizer.get_config()))),
                      check_class=False)
    if restored is not None:
        assert type(restored).__name__ == expected["ok"]["class"]
        assert isinstance(restored, our_class(expected["ok"]["class"]))
        assert _flavour.is_legacy_keras_optimizer(restored.inner_optimizer)
