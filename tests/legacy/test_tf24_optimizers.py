"""Legacy mode on Keras 2 gives TF 2.4 code TF 2.4's optimizers (`OptimizerV2`) by default, checked against TF 2.4.0's
recorded values (tests/goldens/tf24_optimizer_v2.json); with `install(tf24_optimizers=False)` (or
LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0) the stack's own stay."""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import assert_close

import lossscale_compat
import conformance_programs
import graph_programs
import optimizer_v2_programs as programs
from lossscale_compat import _flavour

KERAS3 = _flavour.has_keras3_loss_scaling()
GOLDENS = json.loads((GOLDEN_DIR / "tf24_optimizer_v2.json").read_text())["cases"]
CASES = sorted(GOLDENS)
keras2_only = pytest.mark.skipif(KERAS3, reason="Keras 3 has no OptimizerV2 to give back")


@pytest.fixture
def legacy_mode():
    lossscale_compat.install(tf24_optimizers=True)  # the default, whatever LOSSSCALE_COMPAT_TF24_OPTIMIZERS says
    yield
    lossscale_compat.uninstall()


def tf24_program_optimizer(case_name):
    """What a TF 2.4 program builds, spelled as TF 2.4 spelled it, in legacy mode."""
    inner_name, form = case_name.split("/")
    custom_class = programs.custom_momentum_sgd_class(tf.keras.optimizers.Optimizer)
    inner = programs.inner_optimizer(inner_name, tf.keras.optimizers, custom_class)
    mixed_precision = tf.keras.mixed_precision
    return programs.wrap(form, inner, mixed_precision.experimental.LossScaleOptimizer, mixed_precision.LossScaleOptimizer)


@keras2_only
@pytest.mark.parametrize("case", CASES)
def test_tf24_spelling_trains_as_tf24(legacy_mode, case):
    optimizer = tf24_program_optimizer(case)
    assert _flavour.is_legacy_keras_optimizer(optimizer.inner_optimizer)
    assert_close(GOLDENS[case]["function"], programs.custom_loop(tf, optimizer, "function"))
    assert_close(GOLDENS[case]["hyperparameters"], programs.hyperparameters(tf, tf24_program_optimizer(case)))


@keras2_only
@pytest.mark.parametrize("case", ["custom_momentum_sgd/v2_dynamic", "SGD/v1_fixed"])
def test_tf24_spelling_fits_as_tf24(legacy_mode, case):
    assert_close(GOLDENS[case]["fit"], programs.fit(tf, np, tf24_program_optimizer(case)))


@keras2_only
def test_names_get_deserialize_and_compile_strings_give_optimizer_v2(legacy_mode):
    from tensorflow.keras.optimizers import Adam

    legacy = _flavour.tf24_optimizers_module()
    assert Adam is legacy.Adam and tf.keras.optimizers.Optimizer is legacy.Optimizer
    assert isinstance(tf.keras.optimizers.get("adam"), legacy.Adam)
    assert isinstance(tf.keras.optimizers.deserialize({"class_name": "SGD", "config": {"learning_rate": 0.5}}),
                      legacy.SGD)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("rmsprop", "mse")
    assert isinstance(model.optimizer, legacy.RMSprop)
    assert isinstance(tf.keras.optimizers.schedules.ExponentialDecay(1.0, 10, 0.5), tf.keras.optimizers.schedules.LearningRateSchedule)


@keras2_only
def test_uninstall_gives_back_the_stacks_optimizers():
    lossscale_compat.install(tf24_optimizers=True)
    assert tf.keras.optimizers is not _flavour.STACK_OPTIMIZERS
    lossscale_compat.uninstall()
    assert tf.keras.optimizers is _flavour.STACK_OPTIMIZERS
    assert not _flavour.is_legacy_keras_optimizer(tf.keras.optimizers.SGD())


@keras2_only
@pytest.mark.parametrize("how", ["default", "argument", "environment"])
def test_by_default_legacy_mode_gives_them(how, monkeypatch):
    monkeypatch.delenv("LOSSSCALE_COMPAT_TF24_OPTIMIZERS", raising=False)
    if how == "environment":
        monkeypatch.setenv("LOSSSCALE_COMPAT_TF24_OPTIMIZERS", "1")
    lossscale_compat.install(**({"tf24_optimizers": True} if how == "argument" else {}))
    try:
        legacy = _flavour.tf24_optimizers_module()
        assert tf.keras.optimizers.SGD is legacy.SGD
        assert _flavour.is_legacy_keras_optimizer(tf.keras.optimizers.get("sgd"))
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        assert type(opt) is tf.keras.mixed_precision.LossScaleOptimizer
        assert type(opt) is not lossscale_compat.KerasLossScaleOptimizer  # the form over OptimizerV2
    finally:
        lossscale_compat.uninstall()


@keras2_only
@pytest.mark.parametrize("how", ["argument", "environment", "environment_false"])
def test_with_the_opt_out_the_stacks_own_optimizers_stay(how, monkeypatch):
    if how.startswith("environment"):
        monkeypatch.setenv("LOSSSCALE_COMPAT_TF24_OPTIMIZERS", "0" if how == "environment" else " False ")
    lossscale_compat.install(**({"tf24_optimizers": False} if how == "argument" else {}))
    try:
        assert tf.keras.optimizers.SGD is _flavour.STACK_OPTIMIZERS.SGD
        assert not _flavour.is_legacy_keras_optimizer(tf.keras.optimizers.get("sgd"))
        assert tf.keras.mixed_precision.experimental.LossScaleOptimizer is lossscale_compat.LossScaleOptimizer
        assert tf.keras.mixed_precision.LossScaleOptimizer is lossscale_compat.KerasLossScaleOptimizer
    finally:
        lossscale_compat.uninstall()


@pytest.mark.skipif(not KERAS3, reason="on Keras 2 legacy mode gives OptimizerV2 (above)")
def test_keras3_keeps_its_optimizers(legacy_mode):
    assert tf.keras.optimizers.SGD is _flavour.STACK_OPTIMIZERS.SGD
    assert tf.keras.mixed_precision.LossScaleOptimizer is lossscale_compat.KerasLossScaleOptimizer
    assert tf.keras.mixed_precision.experimental.LossScaleOptimizer is lossscale_compat.LossScaleOptimizer


GRAPH_COMPILE = json.loads((Path(graph_programs.__file__).parent / "graph_compile.json").read_text())["cases"]


@keras2_only
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("optimizers", ["one", "list"])
@pytest.mark.parametrize("policy", sorted(graph_programs.COMPILE_POLICIES))
def test_compile_in_a_tf1_graph_wraps_as_tf24_and_fits(legacy_mode, policy, optimizers):
    """In TF1 graph mode Keras 2 compiles through its graph-mode `Model`, which wrapped a TF 2.4 `Policy`'s optimizer
    with a dynamic scale whatever the policy's loss scale; it now wraps as TF 2.4's graph-mode compile did, and
    refuses a list of optimizers under a policy as it did (recorded on TF 2.4.0 by
    tests/recorders/record_tf24_graph_compile.py)."""
    ours = conformance_programs.attempt(lambda: graph_programs.compile_under_policy(tf, policy, optimizers))
    tf24 = GRAPH_COMPILE[f"{optimizers} under {policy}"]
    if tf24 == {"error": ["TypeError", "not enough arguments for format string"]}:
        # TF 2.4 refused the list, but its message failed to format; ours says what to do instead
        assert ours["error"][0] == "ValueError", ours
        assert "takes a single optimizer" in ours["error"][1] and "Pass one optimizer" in ours["error"][1]
    else:
        assert ours == tf24
