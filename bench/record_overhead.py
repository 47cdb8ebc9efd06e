"""Prints what `lossscale-compat record` adds to a training step: step time recorded / not recorded.

A 2x512 MLP (256 inputs, batch 256) in float32 (CPU float16 kernels are slow enough to hide any cost), trained
with the stack's own LossScaleOptimizer in its own idiom, eagerly and in tf.function; recorded into a trace file
(sum and L2 norm of the 6 variables before and after each step, one numpy_function call per traced step) or not.
Each repeat times both, interleaved, in one process; the figure is the median ratio. Target: at most 1.05. Run it
on each stack (`nox -s bench`); it runs on TF 2.4.0 too, with Python 3.8 and TensorFlow 2.4.0's own class.
"""

import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lossscale_compat._trace import recording

STEPS = {"eager": 40, "tf.function": 200}
REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))


def build():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((256,)),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.01))
    return model, optimizer


def step_function(model, optimizer, traced):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled = (
                optimizer.get_scaled_loss(loss)
                if hasattr(optimizer, "get_scaled_loss")
                else (optimizer.scale_loss(loss))
            )
        grads = tape.gradient(scaled, model.trainable_variables)
        if hasattr(optimizer, "get_unscaled_gradients"):
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step) if traced else step


def seconds_per_step(mode, recorded, directory):
    model, optimizer = build()
    step = step_function(model, optimizer, mode == "tf.function")
    x, y = tf.random.normal([256, 256]), tf.random.normal([256, 1])

    def run():
        for _ in range(3):  # warm-up (and tracing)
            step(x, y)
        start = time.perf_counter()
        for _ in range(STEPS[mode]):
            step(x, y)
        float(optimizer.iterations.numpy())
        return (time.perf_counter() - start) / STEPS[mode]

    if not recorded:
        return run()
    with recording(os.path.join(directory, "trace.jsonl"), "bench", seed=None):
        return run()


def main():
    print(
        f"TensorFlow {tf.__version__}, Python {sys.version.split()[0]}; recorded / not recorded, median of "
        f"{REPEATS} interleaved pairs"
    )
    with tempfile.TemporaryDirectory() as directory:
        for mode in STEPS:
            ratios, plain = [], []
            for _ in range(REPEATS):
                base = seconds_per_step(mode, False, directory)
                ratios.append(seconds_per_step(mode, True, directory) / base)
                plain.append(base)
            print(
                f"  {mode:<12} {statistics.median(ratios):.3f}  (a step: {statistics.median(plain) * 1e3:.2f} ms; "
                f"ratios {min(ratios):.3f}-{max(ratios):.3f})"
            )


if __name__ == "__main__":
    main()
