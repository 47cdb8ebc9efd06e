"""Trains the project's model as a TF 2.4 program did: a custom loop with a checkpoint, then `fit`.

Prints a JSON summary of what loss scaling did, or writes it to --json PATH.
"""

import argparse
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import model as project  # noqa: E402


def weights(variables):
    return [v.numpy().copy() for v in variables]


def final_loss(model):
    """Mean squared error on clean held-out data."""
    x, y = project.dataset(seed=2, batches=2)
    return float(tf.reduce_mean(tf.square(tf.cast(model(x), tf.float32) - y)))


def custom_loop(steps, checkpoint_dir):
    """TF 2.4's documented loop: get_scaled_loss, tape, get_unscaled_gradients, apply_gradients."""
    model = project.build_model()
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        loss_scale=tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=2 ** 15, increment_period=4))
    x, y = project.dataset(seed=0, batches=steps, overflow_at=(3, 9))

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    log = {"loss_scale": [], "skipped": [], "loss": []}
    for step in range(steps):
        if step == steps // 2:  # save, then carry on from a fresh model and optimizer restored from it
            path = checkpoint.save(os.path.join(checkpoint_dir, "ckpt"))
            model = project.build_model()
            optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
                loss_scale=tf.mixed_precision.experimental.DynamicLossScale(
                    initial_loss_scale=2 ** 15, increment_period=4))
            checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
            checkpoint.restore(path)
            train_step = tf.function(train_step.python_function)
        batch = slice(step * 16, (step + 1) * 16)
        before = weights(model.trainable_variables)
        loss = train_step(tf.constant(x[batch]), tf.constant(y[batch]))
        after = weights(model.trainable_variables)
        if all(np.array_equal(a, b) for a, b in zip(before, after)):
            log["skipped"].append(step)
        log["loss_scale"].append(float(optimizer.loss_scale))
        log["loss"].append(float(loss))
    log["iterations"] = int(optimizer.iterations.numpy())
    log["final_loss"] = final_loss(model)
    return log


class LossScaleLog(tf.keras.callbacks.Callback):
    """Records the loss scale and skipped steps of `fit`, per batch."""

    def __init__(self):
        super().__init__()
        self.log = {"loss_scale": [], "skipped": []}
        self.step = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.before = weights(self.model.trainable_variables)

    def on_train_batch_end(self, batch, logs=None):
        after = weights(self.model.trainable_variables)
        if all(np.array_equal(a, b) for a, b in zip(self.before, after)):
            self.log["skipped"].append(self.step)
        self.log["loss_scale"].append(float(self.model.optimizer.loss_scale))
        self.step += 1


def fit(epochs):
    """`compile` wraps the optimizer in a dynamic loss-scale optimizer because of the mixed_float16 policy."""
    model = project.build_model()
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse")
    x, y = project.dataset(seed=1, batches=6, overflow_at=(2,))
    recorder = LossScaleLog()
    history = model.fit(x, y, batch_size=16, epochs=epochs, shuffle=False, verbose=0, callbacks=[recorder])
    del history  # an epoch's mean loss is inf once one of its batches overflowed
    recorder.log["iterations"] = int(model.optimizer.iterations.numpy())
    recorder.log["final_loss"] = final_loss(model)
    return recorder.log


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the summary here (default: stdout)")
    args = parser.parse_args()
    project.use_mixed_precision()
    with tempfile.TemporaryDirectory() as checkpoint_dir:
        summary = {"custom_loop": custom_loop(12, checkpoint_dir), "fit": fit(2), "tensorflow": tf.__version__}
    text = json.dumps(summary, indent=1, sort_keys=True) + "\n"
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
