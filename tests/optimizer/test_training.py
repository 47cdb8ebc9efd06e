"""Training with our optimizers gives TF 2.4.0's loss scales, skipped steps, iterations and weights."""

import numpy as np
import pytest
import tensorflow as tf
from tf24_optimizers import (KERAS3, OPTIMIZER_GOLDENS, assert_states_match, batch, build_optimizer, compiled,
                             float16_tolerance, keras3_step, linear_model, specs, state, tf24_step)

CUSTOM_LOOP = OPTIMIZER_GOLDENS["custom_loop"]
# Adam's update divides by sqrt(v) + epsilon; TF 2.4's and today's kernels round differently there.
ADAM_TOLERANCE = dict(rtol=2e-5, atol=2e-5)


def tolerance(case):
    return ADAM_TOLERANCE if case["inner"]["class_name"] == "Adam" else {}


def run_linear(case, mode, make_step):
    kernel = tf.Variable(case["initial_kernel"], dtype=tf.float32, name="kernel")
    optimizer = build_optimizer(case["form"], case["inner"])

    def forward(x, y):
        return tf.reduce_mean(tf.square(tf.matmul(x, kernel) - y))

    step = compiled(make_step(optimizer, [kernel], forward), mode)
    return [state(optimizer, [kernel], step(*batch(data))) for data in case["data"]["batches"]]


@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
@pytest.mark.parametrize("case", CUSTOM_LOOP, ids=[c["name"] for c in CUSTOM_LOOP])
def test_tf24_custom_loop_matches_tf24(case, mode):
    assert_states_match(case["modes"][mode]["steps"], run_linear(case, mode, tf24_step), **tolerance(case))


@pytest.mark.skipif(not KERAS3, reason="Keras 3's scale_loss/apply-unscales contract exists only on Keras 3")
@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
@pytest.mark.parametrize("case", CUSTOM_LOOP, ids=[c["name"] for c in CUSTOM_LOOP])
def test_keras3_custom_loop_with_scaled_gradients_matches_tf24(case, mode):
    """Keras 3 code passes scaled gradients; our optimizer unscales them and still trains as TF 2.4 did."""
    assert_states_match(case["modes"][mode]["steps"], run_linear(case, mode, keras3_step), **tolerance(case))


def mixed_float16_model(case):
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(3,)),
        tf.keras.layers.Dense(2, activation="relu", name="dense_0"),
        tf.keras.layers.Dense(1, name="dense_1"),
    ])
    model.set_weights([np.array(case["initial_weights"][layer][w], np.float32)
                       for layer in ("dense_0", "dense_1") for w in ("kernel", "bias")])
    return model


def float16_overflows(case, jit):
    """Which steps overflow in float16 when the case's model is trained by hand, with no optimizer class at all.

    A plain loop: the loss times a dynamic scale (halved on overflow, doubled after 2 good steps), and an SGD
    step on the finite gradients.
    """
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = mixed_float16_model(case)
        scale = tf.Variable(2.0**15)
        good = tf.Variable(0)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.cast(model(x), tf.float32) - y)) * scale
            grads = tape.gradient(loss, model.trainable_variables)
            finite = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in grads])
            if finite:
                for variable, grad in zip(model.trainable_variables, grads):
                    variable.assign_sub(0.01 * grad / scale)
                good.assign_add(1)
                if good >= 2:
                    scale.assign(scale * 2.0)
                    good.assign(0)
            else:
                scale.assign(scale / 2.0)
                good.assign(0)
            return finite

        step = tf.function(step, jit_compile=jit)
        return [not bool(step(*batch(data))) for data in case["data"]["batches"]]
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
@pytest.mark.parametrize("case", OPTIMIZER_GOLDENS["mixed_float16"],
                         ids=[c["name"] for c in OPTIMIZER_GOLDENS["mixed_float16"]])
def test_mixed_float16_model_matches_tf24(case, mode):
    """float16 overflow skips steps and backs the scale off exactly as on TF 2.4.0."""
    if mode == "jit" and float16_overflows(case, jit=True) != float16_overflows(case, jit=False):
        # TF 2.16 and 2.17's XLA on CPU; TF 2.4.0's XLA overflowed exactly where its eager mode did.
        pytest.skip(f"TensorFlow {tf.__version__}'s XLA finds other float16 overflows than its own eager mode in a "
                    "loop that uses no optimizer class (docs/support.md)")
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = mixed_float16_model(case)
        optimizer = build_optimizer(case["form"], case["inner"])
        variables = model.trainable_variables

        def forward(x, y):
            return tf.reduce_mean(tf.square(tf.cast(model(x), tf.float32) - y))

        step = compiled(tf24_step(optimizer, variables, forward), mode)
        observed = [state(optimizer, variables, step(*batch(data))) for data in case["data"]["batches"]]
        assert model(batch(case["data"]["batches"][0])[0]).dtype.name == case["modes"][mode]["output_dtype"]
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    # Losses and weights pass through float16 kernels, which differ by CPU and oneDNN setting: they match
    # to float16 precision (float16_tolerance says why). Loss scales, skips and iterations match exactly.
    assert_states_match(case["modes"][mode]["steps"], observed, tolerance=float16_tolerance)


@pytest.mark.parametrize("case", OPTIMIZER_GOLDENS["fit"], ids=[c["name"] for c in OPTIMIZER_GOLDENS["fit"]])
def test_fit_matches_tf24(case):
    """`model.compile(optimizer=ours)` + `fit`: on Keras 3 the trainer passes scaled gradients."""
    data = case["data"]
    model = linear_model(case)
    optimizer = build_optimizer(case["form"], case["inner"])
    model.compile(optimizer=optimizer, loss=case["compile"]["loss"])
    assert (model.optimizer is optimizer) is case["compiled_optimizer_is_same_object"]
    recorder = specs.batch_states(tf, optimizer, state)
    model.fit(specs.array(data["x"], np), specs.array(data["y"], np), batch_size=data["batch_size"],
              epochs=data["epochs"], shuffle=data["shuffle"], verbose=0, callbacks=[recorder])
    assert_states_match(case["per_batch"], recorder.batches, **tolerance(case))


def distributed_variable(variable):
    """The tf.distribute variable behind a Keras variable (Keras 3 wraps it; Keras 2 does not)."""
    return variable if callable(variable.value) else variable.value


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("case", OPTIMIZER_GOLDENS["mirrored"], ids=[c["name"] for c in OPTIMIZER_GOLDENS["mirrored"]])
def test_mirrored_strategy_matches_tf24(case, mode, mirrored):
    """A NaN on one replica skips the step on every replica, as on TF 2.4.0."""
    strategy = mirrored
    with strategy.scope():
        model = linear_model(case)
        optimizer = build_optimizer(case["form"], case["inner"])
    variables = model.trainable_variables

    def forward(x, y):
        return tf.reduce_mean(tf.square(model(x) - y)) / strategy.num_replicas_in_sync

    replica_step = tf24_step(optimizer, variables, forward)

    def step(x, y):
        return strategy.run(replica_step, args=(x, y))

    step = compiled(step, mode)
    observed = []
    for replicas in case["data"]["per_step_per_replica"]:
        def distributed(key, replicas=replicas):
            return strategy.experimental_distribute_values_from_function(
                lambda ctx: tf.constant(specs.array(replicas[ctx.replica_id_in_sync_group][key], np)))
        losses = step(distributed("x"), distributed("y"))
        record = state(optimizer, variables)
        record["replica_losses"] = [float(v) for v in strategy.experimental_local_results(losses)]
        record["replica_weights"] = [[np.asarray(r.numpy(), np.float64).tolist()
                                      for r in strategy.experimental_local_results(distributed_variable(v))]
                                     for v in variables]
        observed.append(record)
    expected = case["modes"][mode]["steps"]
    assert_states_match(expected, observed)
    for want, got in zip(expected, observed):
        np.testing.assert_allclose(got["replica_losses"], want["replica_losses"], rtol=1e-6, atol=1e-6)
        assert len(got["replica_weights"]) == len(want["replica_weights"])
        for want_v, got_v in zip(want["replica_weights"], got["replica_weights"]):
            np.testing.assert_allclose(got_v, want_v, rtol=1e-6, atol=1e-6)
