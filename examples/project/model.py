"""The model and data of a small TF 2.4-era regression project trained in mixed precision."""

import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


def use_mixed_precision():
    """Computes in float16 with float32 variables, as TF 2.4's mixed-precision guide set it up."""
    mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))


def build_model():
    """A two-layer regressor whose output layer computes in float32, as the guide advises."""
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(4,), name="hidden",
                              kernel_initializer=tf.keras.initializers.GlorotUniform(seed=1)),
        tf.keras.layers.Dense(1, dtype="float32", name="out",
                              kernel_initializer=tf.keras.initializers.GlorotUniform(seed=2)),
    ])


def dataset(seed, batches, batch_size=16, overflow_at=()):
    """Batches of (x, y); the batches numbered in `overflow_at` hold a corrupt record that overflows float16."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(batches * batch_size, 4)).astype("float32")
    y = (x @ np.array([[1.5], [-2.0], [0.5], [1.0]], "float32") + 0.25).astype("float32")
    for batch in overflow_at:
        x[batch * batch_size, 0] = 7e4  # above float16's largest finite value, 65504
    return x, y
