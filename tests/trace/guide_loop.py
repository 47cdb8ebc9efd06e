"""A training program for the record tests, in the style of TensorFlow's mixed-precision guide's custom loop.

It trains with the stack's own `LossScaleOptimizer` in that stack's idiom (TF 2.4 / Keras 2: get_scaled_loss and
get_unscaled_gradients; Keras 3: scale_loss), overflows at one step, and prints each step's loss as JSON.
Options: --eager (no tf.function), --xla (a tf.function compiled with XLA), --fit (model.fit instead of the loop),
--crash-at N, --steps N, --overflow-at N, --overflow-target V (the target that overflows there, default 3e38;
`inf` makes the gradients not finite at any scale); --initial-scale S (a dynamic scale starting at S), --fixed-scale S (a fixed
scale, where the stack has one; exit 3 where it has not), --restore-each-step (before each step the weights are set
back to their first values and every step but the overflowing one trains on the first batch, as a loop that
restores a checkpoint before each trial would).
Keep it Python 3.8 compatible: it runs on TF 2.4.0 too.
"""

import argparse
import inspect
import json

import numpy as np
import tensorflow as tf


def train(eager=False, fit=False, steps=6, overflow_at=2, crash_at=None, learning_rate=0.1, xla=False,
          scale=None, restore_each_step=False, overflow_target=3e38):
    """Trains the model; returns each step's loss (None under fit). `scale`: {"initial_scale": S} or
    {"dynamic": False, "initial_scale": S}."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(steps * 8, 4)).astype("float32")
    y = (x @ rng.uniform(-1, 1, size=(4, 2)).astype("float32")).astype("float32")
    y[overflow_at * 8] = overflow_target  # its squared error overflows: that step's gradients are not finite
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(
        2, kernel_initializer=tf.keras.initializers.GlorotUniform(seed=1))])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(learning_rate), **(scale or {}))
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
    first_weights = model.get_weights()
    for step in range(steps):
        if step == crash_at:
            raise RuntimeError("the data loader failed at step %d" % step)
        batch = step
        if restore_each_step:
            model.set_weights(first_weights)
            batch = step if step == overflow_at else 0
        losses.append(float(train_step(x[batch * 8:(batch + 1) * 8], y[batch * 8:(batch + 1) * 8])))
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eager", action="store_true")
    parser.add_argument("--xla", action="store_true")
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--overflow-at", type=int, default=2)
    parser.add_argument("--crash-at", type=int)
    parser.add_argument("--overflow-target", type=float, default=3e38)
    parser.add_argument("--initial-scale", type=float)
    parser.add_argument("--fixed-scale", type=float)
    parser.add_argument("--restore-each-step", action="store_true")
    args = parser.parse_args()
    scale = None
    if args.initial_scale is not None:
        scale = {"initial_scale": args.initial_scale}
    if args.fixed_scale is not None:
        try:
            tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic=False, initial_scale=1.0)
        except (TypeError, ValueError):  # Keras 3's class has a dynamic scale only
            raise SystemExit(3)
        scale = {"dynamic": False, "initial_scale": args.fixed_scale}
    losses = train(args.eager, args.fit, args.steps, args.overflow_at, args.crash_at, xla=args.xla, scale=scale,
                   restore_each_step=args.restore_each_step, overflow_target=args.overflow_target)
    if losses is not None:
        print(json.dumps(losses))


if __name__ == "__main__":
    main()
