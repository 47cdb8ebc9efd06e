"""A loss-scale optimizer restored before it has variables (deferred restoration) resumes as TF 2.4's did.

TF 2.4 checkpointed a slot only with the variable it belongs to: restored from a checkpoint that also holds the model,
training continues exactly as the uninterrupted run; from an optimizer-only checkpoint (TensorFlowTTS's
`tf.train.Checkpoint(steps=..., epochs=..., optimizer=...)`), the step count and loss scale come back and the slots
start fresh. examples/tf24/real_tts_trainer.py records both on TF 2.4.0 (goldens/real_tts_trainer.json: its
`resumed` run differs from its `uninterrupted` one, its `resumed_with_model` does not); this checks the rule itself
on every stack, under a strategy or not, with a tape or `tf.gradients`, for both wrapper forms.
"""

import numpy as np
import pytest
import tensorflow as tf

import lossscale_compat

FORMS = {"experimental": lambda inner: lossscale_compat.LossScaleOptimizer(inner, "dynamic"),
         "keras": lambda inner: lossscale_compat.KerasLossScaleOptimizer(inner)}
rng = np.random.RandomState(3)
X = rng.uniform(-1, 1, size=(6, 4, 3)).astype("float32")
Y = rng.uniform(-1, 1, size=(6, 4, 2)).astype("float32")
X[4, 0, 0] = np.inf  # skipped after the resume: the restored scale halves (the TF 2.4.0 golden skips on both sides)
RESUME_AT = 3


def build(form, weights=None):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    if weights is not None:
        model.set_weights(weights)
    return model, FORMS[form](tf.keras.optimizers.Adam(0.05))


def trainer(model, optimizer, gradients, strategy):
    def replica_step(x, y):
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled = optimizer.get_scaled_loss(loss)
        if gradients == "tf.gradients":
            grads = tf.gradients(scaled, model.trainable_variables)
        else:
            with tf.GradientTape() as tape:
                scaled = optimizer.get_scaled_loss(tf.reduce_mean(tf.square(model(x) - y)))
            grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(optimizer.get_unscaled_gradients(grads), model.trainable_variables))

    @tf.function
    def step(x, y):
        if strategy is None:
            replica_step(x, y)
        else:
            strategy.run(replica_step, args=(x, y))

    def train(batches):
        for i in batches:
            step(X[i], Y[i])

    return train


def scope(strategy):
    return strategy.scope() if strategy is not None else tf.name_scope("no_strategy")


@pytest.mark.tf_checkpoint
@pytest.mark.parametrize("with_model", [True, False], ids=["model in checkpoint", "optimizer-only checkpoint"])
@pytest.mark.parametrize("strategy_name", [None, "OneDeviceStrategy"])
@pytest.mark.parametrize("gradients", ["tape", "tf.gradients"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_deferred_resume_continues_as_tf24_did(form, gradients, strategy_name, with_model, tmp_path, recwarn):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0") if strategy_name else None
    with scope(strategy):
        model, optimizer = build(form)
    train = trainer(model, optimizer, gradients, strategy)
    train(range(RESUME_AT))
    saved = {"model": model} if with_model else {}
    path = tf.train.Checkpoint(steps=tf.Variable(RESUME_AT), optimizer=optimizer, **saved).save(str(tmp_path / "c"))
    weights = model.get_weights()
    saved_scale, saved_counter = float(optimizer.loss_scale), int(optimizer.dynamic_counter.numpy())

    with scope(strategy):
        resumed_model, resumed = build(form, weights)
        checkpoint = tf.train.Checkpoint(steps=tf.Variable(1), optimizer=resumed,
                                         **({"model": resumed_model} if with_model else {}))
        checkpoint.restore(path)  # before `resumed` has variables
    assert float(resumed.loss_scale) == saved_scale
    assert int(resumed.dynamic_counter.numpy()) == saved_counter == RESUME_AT
    assert int(resumed.iterations.numpy()) == RESUME_AT
    resumed.iterations.assign(tf.cast(checkpoint.steps, tf.int64))  # as TensorFlowTTS re-assigns it
    trainer(resumed_model, resumed, gradients, strategy)(range(RESUME_AT, len(X)))

    if with_model:  # the uninterrupted run
        reference_model, reference = model, optimizer
        trainer(model, optimizer, gradients, strategy)(range(RESUME_AT, len(X)))
        assert not [w for w in recwarn.list if "slots start from their initial value" in str(w.message)]
    else:  # what TF 2.4 resumed with: the count and the loss scale with its counter, fresh slots
        with scope(strategy):
            reference_model, reference = build(form, weights)
        reference.iterations.assign(RESUME_AT)
        reference.dynamic_counter.assign(saved_counter)
        trainer(reference_model, reference, gradients, strategy)(range(RESUME_AT, len(X)))
        assert [w for w in recwarn.list if "slots start from their initial value" in str(w.message)]
    assert int(resumed.iterations.numpy()) == int(reference.iterations.numpy()) == len(X)
    assert float(resumed.loss_scale) == float(reference.loss_scale)
    for got, want in zip(resumed_model.get_weights(), reference_model.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
