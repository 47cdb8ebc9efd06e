"""Replays the optimizer goldens (tests/goldens/optimizer.json) on the installed stack."""

import numpy as np
import tensorflow as tf
from tf24_goldens import OPTIMIZER_GOLDENS, specs  # noqa: F401  (re-exported for the tests)

import lossscale_compat
from lossscale_compat import _flavour

KERAS3 = _flavour.has_keras3_loss_scaling()


def build_optimizer(form, inner, optimizers=None):
    """Our equivalent of the TF 2.4 optimizer a golden case built (inner from `optimizers`, else tf.keras's)."""
    inner = specs.inner_optimizer(inner, optimizers or tf.keras.optimizers)
    return specs.lso(form, inner, lossscale_compat.LossScaleOptimizer,
                     lossscale_compat.KerasLossScaleOptimizer, lossscale_compat.FixedLossScale,
                     lossscale_compat.DynamicLossScale)


def batch(data):
    return tf.constant(specs.array(data["x"], np)), tf.constant(specs.array(data["y"], np))


def tf24_step(optimizer, variables, forward):
    """TF 2.4's documented custom loop: get_scaled_loss, tape, get_unscaled_gradients, apply_gradients."""
    return specs.custom_loop_step(tf, optimizer, variables, forward)


def linear_model(case):
    """The golden case's Sequential([Input((3,)), Dense(1, name='dense')]) at its initial weights."""
    assert case["weights_order"] == ["kernel", "bias"]
    return specs.linear_model(tf, np, case["initial_weights"]["kernel"], case["initial_weights"]["bias"])


def train(model, optimizer, batches):
    """TF 2.4's custom loop over golden `batches` on a linear model; the state after each step."""
    step = tf24_step(optimizer, model.trainable_variables, lambda x, y: tf.reduce_mean(tf.square(model(x) - y)))
    return [state(optimizer, model.trainable_variables, step(*batch(data))) for data in batches]


def keras3_step(optimizer, variables, forward):
    """Keras 3's custom loop: scale_loss, tape, apply_gradients with the *scaled* gradients."""
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = forward(x, y)
            scaled = optimizer.scale_loss(loss)
        optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        return loss
    return step


def compiled(step, mode):
    return specs.compiled(tf, step, mode)


def state(optimizer, variables, loss=None):
    """The golden's per-step record, read from our optimizer."""
    out = {} if loss is None else {"loss": float(loss)}
    out["loss_scale"] = float(optimizer.loss_scale.numpy())
    out["dynamic_counter"] = None if optimizer.dynamic_counter is None else int(optimizer.dynamic_counter.numpy())
    out["iterations"] = int(optimizer.iterations.numpy())
    out["weights"] = [np.asarray(v.numpy(), np.float64).tolist() for v in variables]
    names = optimizer.get_slot_names()
    if names:
        out["slots"] = {name: [np.asarray(optimizer.get_slot(v, name).numpy(), np.float64).tolist()
                               for v in variables] for name in names}
    return out


# Float16 machine epsilon: the relative gap between 1.0 and the next float16 (10 fraction bits).
FLOAT16_EPSILON = 2.0 ** -10


def float16_bound(step):
    """The relative and absolute bound for values that went through float16 kernels, `step` steps into training.

    The one float16 tolerance of every test that compares with TF 2.4.0 (weights, losses), set here so that it
    holds on AMD and Intel CPUs alike, not tuned to the machine it was written on. oneDNN picks its float16
    kernels by the CPU's instruction set (AVX512-FP16/AMX on recent Intel; AVX512-BF16 without FP16 on AMD EPYC
    such as the 2-core CI machine; AVX2 on older CPUs), TF releases pick between oneDNN and Eigen differently
    (TF 2.21 and TF 2.15 round differently on the same AMD CPU, issue #34), and TF 2.4.0 ran Eigen's. Each
    kernel accumulates in float32 and rounds its float16 result once, so two kernels differ by at most one
    float16 epsilon relative per step, whichever CPU. A weight carries the earlier steps' differences into the
    next step, so after step n (counted from 0) they differ by at most (n + 1) epsilons. Measured: on an
    AVX512-FP16 Intel CPU the momentum case's loss at step 9 differs from TF 2.4.0's by 1.1e-3 relative (the
    bound is 9.8e-3); on the AMD CPU, by less (docs/goldens.md). Loss scales, skip decisions and `iterations`
    are compared exactly, never with this.
    """
    return (step + 1) * FLOAT16_EPSILON


def float16_tolerance(step):
    """`float16_bound(step)` as numpy's `rtol`/`atol`."""
    bound = float16_bound(step)
    return dict(rtol=bound, atol=bound)


def assert_states_differ(expected, observed):
    """The state before a restore differs from the one it must bring, so a restore that did nothing fails."""
    keys = ("loss_scale", "dynamic_counter", "iterations", "weights")
    assert [observed[key] for key in keys] != [expected[key] for key in keys], \
        "the state before the restore already is the expected one"


def assert_states_match(expected, observed, rtol=1e-6, atol=1e-6, tolerance=None):
    """Scale, counter and iterations exactly; losses, weights and slots to `tolerance(step)` or rtol/atol."""
    assert len(observed) == len(expected), f"{len(observed)} steps, TF 2.4.0 recorded {len(expected)}"
    for number, (want, got) in enumerate(zip(expected, observed)):
        where = f"step {number}"
        close = tolerance(number) if tolerance else dict(rtol=rtol, atol=atol)
        for key in ("loss_scale", "dynamic_counter", "iterations"):
            assert got[key] == want[key], f"{where}: {key} {got[key]} != TF 2.4.0's {want[key]}"
        if "loss" in want:
            np.testing.assert_allclose(got["loss"], want["loss"], err_msg=where, **close)
        assert len(got["weights"]) == len(want["weights"]), f"{where}: number of weights"
        for got_w, want_w in zip(got["weights"], want["weights"]):
            np.testing.assert_allclose(got_w, want_w, err_msg=f"{where}: weights", **close)
        # TF 2.4 made slots lazily (an eager first step that is skipped makes none); ours may exist earlier.
        assert set(want.get("slots", {})) <= set(got.get("slots", {})), f"{where}: slot names"
        for name, values in want.get("slots", {}).items():
            assert len(got["slots"][name]) == len(values), f"{where}: number of {name} slots"
            for got_s, want_s in zip(got["slots"][name], values):
                if want_s is not None:
                    np.testing.assert_allclose(got_s, want_s, err_msg=f"{where}: {name}", **close)


def assert_close(expected, actual):
    """Equal structure; numbers equal to float32 rounding (Adam's and RMSprop's kernels round differently today)."""
    if isinstance(expected, dict):
        assert sorted(expected) == sorted(actual)
        for key in expected:
            assert_close(expected[key], actual[key])
    elif isinstance(expected, list):
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual):
            assert_close(e, a)
    elif isinstance(expected, float):
        np.testing.assert_allclose(actual, expected, rtol=2e-6, atol=1e-7)
    else:
        assert actual == expected
