"""Learning-rate reads and writes as TF 2.4.0 made them (examples/tf24/hyperparameters.py), on every Keras.

`float(opt.lr)`, `opt.lr.numpy()`, `tf.keras.backend.get_value`/`set_value`, `opt.lr = x`,
`opt.learning_rate.assign(x)` and a schedule's `opt.learning_rate(step)`: in legacy mode, and through
lossscale_compat's optimizers used directly. Keras 3.0-3.4's variables lack `__float__`, which is what this
catches on the stacks pinned to them.
"""

import importlib.util
import json
import sys

import pytest
import tensorflow as tf
from test_run_programs import EXAMPLES, run

import lossscale_compat
from lossscale_compat import _flavour, _keras_backports

GOLDEN = json.loads((EXAMPLES / "goldens" / "hyperparameters.json").read_text())
WRAPS = ("plain", "experimental_lso", "lso")
KERAS_2 = not _flavour.has_keras3_loss_scaling()
STEPS = (0, 5, 10, 20)
LEARNING_RATE_CALLS = tuple(f"step_{step}" for step in STEPS)  # opt.learning_rate(step)
LR_CALLS = tuple(f"lr_step_{step}" for step in STEPS)  # opt.lr(step)


def program():
    """examples/tf24/hyperparameters.py as a module (its reads run only when it runs as a program)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location("tf24_hyperparameters", EXAMPLES / "hyperparameters.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES))
    return module


def assert_reads_like_tf24(got, want, keys):
    for key in keys:
        assert got[key] == pytest.approx(want[key], rel=1e-7), f"{key}: {got[key]!r} != TF 2.4.0's {want[key]!r}"


def constant_keys():
    return [key for key in GOLDEN["plain"] if key != "schedule"]


@pytest.fixture(scope="module")
def legacy_reads(tmp_path_factory):
    return run("hyperparameters", tmp_path_factory.mktemp("hyperparameters"))


@pytest.mark.parametrize("wrap", WRAPS)
def test_legacy_mode_reads_and_sets_a_constant_learning_rate_as_tf24(legacy_reads, wrap):
    assert legacy_reads[wrap].keys() == GOLDEN[wrap].keys()
    assert_reads_like_tf24(legacy_reads[wrap], GOLDEN[wrap], constant_keys())


@pytest.mark.parametrize("calls", (LEARNING_RATE_CALLS, LR_CALLS), ids=("learning_rate", "lr"))
@pytest.mark.parametrize("wrap", WRAPS)
def test_legacy_mode_calls_a_learning_rate_schedule_as_tf24(legacy_reads, wrap, calls):
    assert_reads_like_tf24(legacy_reads[wrap]["schedule"], GOLDEN[wrap]["schedule"], calls)


def test_our_optimizers_used_directly_read_as_tf24():
    """Without legacy mode: lossscale_compat's two classes, as migrated-by-hand code builds them. On Keras 3 they
    add what Keras 3.0-3.4's variables lack (`__float__`) and `set_value` on a Keras variable (lossscale_compat._keras_backports)."""
    wraps = {
        "experimental_lso": lambda opt: lossscale_compat.LossScaleOptimizer(opt, "dynamic"),
        "lso": lambda opt: lossscale_compat.KerasLossScaleOptimizer(opt),
    }
    got = program().reads(wraps)
    for wrap in wraps:
        assert_reads_like_tf24(got[wrap], GOLDEN[wrap], constant_keys())
        assert_reads_like_tf24(got[wrap]["schedule"], GOLDEN[wrap]["schedule"], LEARNING_RATE_CALLS + LR_CALLS)


def test_the_learning_rate_is_the_inner_optimizers_very_variable_as_in_tf24():
    inner = tf.keras.optimizers.SGD(learning_rate=0.25)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(inner)
    assert optimizer.lr is inner.learning_rate and optimizer.learning_rate is inner.learning_rate
    optimizer.lr.assign(0.5)
    tf.keras.backend.set_value(optimizer.lr, 0.75)
    assert float(optimizer.learning_rate) == float(inner.learning_rate.numpy()) == 0.75


def test_keras_callbacks_read_a_schedules_learning_rate_as_a_number_through_our_optimizer():
    """Keras 3's `ReduceLROnPlateau` logs `float(optimizer.learning_rate)` every epoch; TF 2.4's ran with a schedule."""
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(schedule)), loss="mse")
    history = model.fit(tf.ones((4, 2)), tf.ones((4, 1)), epochs=1, verbose=0,
                        callbacks=[tf.keras.callbacks.ReduceLROnPlateau(monitor="loss")])
    assert len(history.history["loss"]) == 1


def test_our_optimizers_add_only_what_this_keras_lacks_once():
    lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    assert _keras_backports.backports() == []  # nothing left to add, and nothing added twice
    variable = tf.Variable(1.0)
    tf.keras.backend.set_value(variable, 2.0)  # what worked before still does
    assert float(variable.numpy()) == 2.0
