"""Learning-rate reads and writes as TF 2.4.0 made them (examples/tf24/hyperparameters.py), on every Keras.

`float(opt.lr)`, `opt.lr.numpy()`, `tf.keras.backend.get_value`/`set_value`, `opt.lr = x`,
`opt.learning_rate.assign(x)` and a schedule's `opt.learning_rate(step)`: in legacy mode, and through
lossscale_compat's optimizers used directly. Keras 3.0-3.4's variables lack `__float__`, which is what this
catches on the stacks pinned to them.
"""

import importlib.util
import json
import os
import sys

import pytest
import tensorflow as tf
from test_run_programs import EXAMPLES, run

import lossscale_compat
from lossscale_compat import _flavour
from lossscale_compat.legacy._install import TF24_OPTIMIZERS_VARIABLE

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


# Keras 3's and Keras 2.11+'s optimizers make `learning_rate` the current value, which they and Keras's callbacks
# (`ReduceLROnPlateau`) read as a number, so `opt.learning_rate(step)` cannot be TF 2.4's there, through our classes
# either; `opt.lr(step)` is, on Keras 3; on Keras 2 neither is (docs/legacy_mode.md), but with TF 2.4's optimizers
# (LOSSSCALE_COMPAT_TF24_OPTIMIZERS=1, which the program run in legacy mode inherits), whose `learning_rate` is the
# schedule, both are.
TF24_OPTIMIZERS = KERAS_2 and os.environ.get(TF24_OPTIMIZERS_VARIABLE, "") not in ("", "0")
@pytest.mark.parametrize(
    ("wrap", "calls"),
    [
        pytest.param(wrap, calls, marks=pytest.mark.xfail(
            not TF24_OPTIMIZERS and (KERAS_2 or calls == LEARNING_RATE_CALLS), strict=True,
            reason="this Keras's own optimizer's `learning_rate` is the current value, not the schedule"))
        for wrap in WRAPS for calls in (LEARNING_RATE_CALLS, LR_CALLS)
    ],
    ids=lambda value: value if isinstance(value, str) else value[0].rsplit("_", 1)[0],
)
def test_legacy_mode_calls_a_learning_rate_schedule_as_tf24(legacy_reads, wrap, calls):
    assert_reads_like_tf24(legacy_reads[wrap]["schedule"], GOLDEN[wrap]["schedule"], calls)


@pytest.mark.skipif(
    _flavour.keras_variable_class_without_float() is not None,
    reason="Keras 3.0-3.4's variables lack `__float__`; only legacy mode adds it (docs/legacy_mode.md)",
)
def test_our_optimizers_used_directly_read_as_tf24():
    """Without legacy mode: lossscale_compat's two classes, as migrated-by-hand code builds them. Keras 3's own
    `tf.keras.backend.set_value` refuses a Keras variable there; legacy mode adapts it (the test above)."""
    wraps = {
        "experimental_lso": lambda opt: lossscale_compat.LossScaleOptimizer(opt, "dynamic"),
        "lso": lambda opt: lossscale_compat.KerasLossScaleOptimizer(opt),
    }
    got = program().reads(wraps)
    keys = [key for key in constant_keys() if KERAS_2 or key != "after_set_value"]
    for wrap in wraps:
        assert_reads_like_tf24(got[wrap], GOLDEN[wrap], keys)
        if not KERAS_2:
            assert_reads_like_tf24(got[wrap]["schedule"], GOLDEN[wrap]["schedule"], LR_CALLS)


def test_the_learning_rate_is_the_inner_optimizers_very_variable_as_in_tf24():
    inner = tf.keras.optimizers.SGD(learning_rate=0.25)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(inner)
    assert optimizer.lr is inner.learning_rate and optimizer.learning_rate is inner.learning_rate


def test_keras_callbacks_read_a_schedules_learning_rate_as_a_number_through_our_optimizer():
    """Keras 3's `ReduceLROnPlateau` logs `float(optimizer.learning_rate)` every epoch; TF 2.4's ran with a schedule."""
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(schedule)), loss="mse")
    history = model.fit(tf.ones((4, 2)), tf.ones((4, 1)), epochs=1, verbose=0,
                        callbacks=[tf.keras.callbacks.ReduceLROnPlateau(monitor="loss")])
    assert len(history.history["loss"]) == 1
