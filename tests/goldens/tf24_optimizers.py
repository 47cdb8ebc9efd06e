"""Replays the optimizer goldens (tests/goldens/optimizer.json) on the installed stack."""

import numpy as np
import tensorflow as tf
from tf24_goldens import OPTIMIZER_GOLDENS, specs  # noqa: F401  (re-exported for the tests)

import lossscale_compat
from lossscale_compat import _flavour

KERAS3 = _flavour.has_keras3_loss_scaling()


def build_optimizer(form, inner):
    """Our equivalent of the TF 2.4 optimizer a golden case built."""
    return specs.lso(form, specs.inner_optimizer(inner, tf.keras.optimizers), lossscale_compat.LossScaleOptimizer,
                     lossscale_compat.KerasLossScaleOptimizer, lossscale_compat.FixedLossScale,
                     lossscale_compat.DynamicLossScale)


def batch(data):
    return tf.constant(specs.array(data["x"], np)), tf.constant(specs.array(data["y"], np))


def tf24_step(optimizer, variables, forward):
    """TF 2.4's documented custom loop: get_scaled_loss, tape, get_unscaled_gradients, apply_gradients."""
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = forward(x, y)
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        optimizer.apply_gradients(zip(grads, variables))
        return loss
    return step


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
    if mode == "function":
        return tf.function(step)
    if mode == "jit":
        return tf.function(step, jit_compile=True)
    return step


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


def assert_states_match(expected, observed, rtol=1e-6, atol=1e-6):
    """Scale, counter and iterations exactly; losses, weights and slots to float32 rounding."""
    assert len(observed) == len(expected)
    for number, (want, got) in enumerate(zip(expected, observed)):
        where = f"step {number}"
        for key in ("loss_scale", "dynamic_counter", "iterations"):
            assert got[key] == want[key], f"{where}: {key} {got[key]} != TF 2.4.0's {want[key]}"
        if "loss" in want:
            np.testing.assert_allclose(got["loss"], want["loss"], rtol=rtol, atol=atol, err_msg=where)
        for got_w, want_w in zip(got["weights"], want["weights"]):
            np.testing.assert_allclose(got_w, want_w, rtol=rtol, atol=atol, err_msg=f"{where}: weights")
        for name, values in want.get("slots", {}).items():
            for got_s, want_s in zip(got["slots"][name], values):
                if want_s is not None:
                    np.testing.assert_allclose(got_s, want_s, rtol=rtol, atol=atol, err_msg=f"{where}: {name}")
