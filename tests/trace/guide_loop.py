"""A training program for the record tests, in the style of TensorFlow's mixed-precision guide's custom loop.

It trains with the stack's own `LossScaleOptimizer` in that stack's idiom (TF 2.4 / Keras 2: get_scaled_loss and
get_unscaled_gradients; Keras 3: scale_loss), overflows at one step, and prints each step's loss as JSON.
Options: --eager (no tf.function), --xla (a tf.function compiled with XLA), --fit (model.fit instead of the loop),
--crash-at N, --steps N, --overflow-at N.
Keep it Python 3.8 compatible: it runs on TF 2.4.0 too.
"""

import argparse
import inspect
import json

import numpy as np
import tensorflow as tf


def train(eager=False, fit=False, steps=6, overflow_at=2, crash_at=None, learning_rate=0.1, xla=False):
    """Trains the model; returns each step's loss (None under fit)."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(steps * 8, 4)).astype("float32")
    y = (x @ rng.uniform(-1, 1, size=(4, 2)).astype("float32")).astype("float32")
    y[overflow_at * 8] = 3e38  # its squared error overflows: that step's gradients are not finite
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(
        2, kernel_initializer=tf.keras.initializers.GlorotUniform(seed=1))])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate))
    if fit:
        model.compile(optimizer=optimizer, loss="mse")
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
        return None

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            if hasattr(optimizer, "get_scaled_loss"):
                scaled_loss = optimizer.get_scaled_loss(loss)
            else:
                scaled_loss = optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled_loss, model.trainable_variables)
        if hasattr(optimizer, "get_unscaled_gradients"):
            gradients = optimizer.get_unscaled_gradients(gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    if xla:  # TF 2.4 named it experimental_compile
        name = "jit_compile" if "jit_compile" in inspect.signature(tf.function).parameters else "experimental_compile"
        train_step = tf.function(train_step, **{name: True})
    elif not eager:
        train_step = tf.function(train_step)
    losses = []
    for step in range(steps):
        if step == crash_at:
            raise RuntimeError("the data loader failed at step %d" % step)
        losses.append(float(train_step(x[step * 8:(step + 1) * 8], y[step * 8:(step + 1) * 8])))
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eager", action="store_true")
    parser.add_argument("--xla", action="store_true")
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--overflow-at", type=int, default=2)
    parser.add_argument("--crash-at", type=int)
    args = parser.parse_args()
    losses = train(args.eager, args.fit, args.steps, args.overflow_at, args.crash_at, xla=args.xla)
    if losses is not None:
        print(json.dumps(losses))


if __name__ == "__main__":
    main()
