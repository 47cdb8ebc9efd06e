"""Gradients passed to `apply_gradients` without `get_unscaled_gradients` are applied as TF 2.4.0 applied them.

A TF 2.4 program may wrap its optimizer and keep a loop that never scales the loss (or scales it and forgets to
unscale). TF 2.4 applied such gradients as they were; Keras 3's own class would divide them by the loss scale.
Goldens: tests/goldens/tf24_raw_apply.json (tests/recorders/record_tf24_raw_apply.py).
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR

import lossscale_compat

GOLDEN = json.loads((GOLDEN_DIR / "tf24_raw_apply.json").read_text())
GRADIENTS = [[float(g) for g in grads] for grads in GOLDEN["gradients"]]


def _run(case):
    var = tf.Variable([1.0, 2.0])
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1), **GOLDEN["settings"][case["setting"]])

    def step(grads):
        if case["scaled_loss"]:
            with tf.GradientTape() as tape:
                loss = optimizer.get_scaled_loss(tf.reduce_sum(var * grads))
            grads = tape.gradient(loss, var)
        optimizer.apply_gradients([(grads, var)])

    if case["mode"] == "function":
        step = tf.function(step)
    states = []
    for grads in GRADIENTS:
        step(tf.constant(grads))
        states.append((np.asarray(var), float(np.asarray(optimizer.loss_scale)), int(np.asarray(optimizer.iterations))))
    return states


@pytest.mark.parametrize(
    "case", GOLDEN["cases"], ids=[f"{c['setting']}-{'scaled' if c['scaled_loss'] else 'raw'}-{c['mode']}" for c in GOLDEN["cases"]]
)
def test_gradients_not_unscaled_by_the_caller_are_applied_as_on_tf24(case):
    for step, ((var, loss_scale, iterations), want) in enumerate(zip(_run(case), case["states"])):
        expected = np.asarray(want["var"])
        finite = np.isfinite(expected)
        np.testing.assert_allclose(var[finite], expected[finite], rtol=1e-6, err_msg=f"step {step}")
        # A fixed scale applies the infinite gradient, as TF 2.4 did. The element it reaches stays non-finite: -inf
        # on TF 2.4, NaN on Keras 2's SGD, which keeps a momentum slot at momentum=0 (inf * 0); see docs/legacy_mode.md.
        assert not np.isfinite(var[~finite]).any(), f"step {step}"
        assert (loss_scale, iterations) == (want["loss_scale"], want["iterations"]), f"step {step}"
