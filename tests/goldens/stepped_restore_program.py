"""The program of tests/goldens/tf24_stepped_restore.json, shared by its TF 2.4.0 recorder and its test (Python 3.8).

Two jobs on a dense layer: the first trains FIRST_JOB and saves; the second trains SECOND_JOB_OWN, restores the
first's checkpoint and trains AFTER_RESTORE. Two batches overflow: one in the second job's own steps, one after.
"""

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(11)
X = rng.uniform(-1, 1, size=(8, 4, 3)).astype("float32")
Y = rng.uniform(-1, 1, size=(8, 4, 2)).astype("float32")
X[4, 0, 0] = np.inf  # the second job's own second step overflows
X[6, 1, 2] = np.inf  # and, after the restore, its second
WEIGHTS = [rng.uniform(-0.5, 0.5, size=(3, 2)).astype("float32"), np.zeros(2, "float32")]
FIRST_JOB, SECOND_JOB_OWN, AFTER_RESTORE = (0, 1, 2), (3, 4), (5, 6, 7)


def build(wrap):
    """A new model with the same starting weights, and `wrap(Adam(0.05))`."""
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.set_weights(WEIGHTS)
    return model, wrap(tf.keras.optimizers.Adam(0.05))


def train(model, optimizer, batches):
    """TF 2.4's custom loop: a tape over the scaled loss, the unscaled gradients applied, in a tf.function."""

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            scaled = optimizer.get_scaled_loss(tf.reduce_mean(tf.square(model(x) - y)))
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for i in batches:
        step(X[i], Y[i])
