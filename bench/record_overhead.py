"""Prints what `lossscale-compat record` adds to a training step: step time recorded / not recorded.

A 2x512 MLP (256 inputs, batch 256) in float32 (CPU float16 kernels are slow enough to hide any cost), trained
with the stack's own LossScaleOptimizer in its own idiom, eagerly and in tf.function; recorded into a trace file
(sum and L2 norm of the 6 variables before and after each step, one numpy_function call per traced step) or not.
Blocks of steps of each alternate in one process; the figure is the ratio of the fastest blocks (contention
from other jobs only ever slows a block). Target: at most 1.05. Run it
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
from lossscale_compat._trace import Trace, _Hooks

STEPS = {"eager": 10, "tf.function": 30}
REPEATS = int(os.environ.get("BENCH_REPEATS", "15"))


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


def block_seconds(step, optimizer, x, y, steps):
    start = time.perf_counter()
    for _ in range(steps):
        step(x, y)
    float(optimizer.iterations.numpy())
    return (time.perf_counter() - start) / steps


def measure(mode, directory):
    """Per-step seconds, not recorded and recorded: the fastest of REPEATS interleaved blocks of each."""
    trace = Trace(os.path.join(directory, f"{mode}.jsonl"), {"program": "bench"})
    hooks = _Hooks(trace)
    x, y = tf.random.normal([256, 256]), tf.random.normal([256, 1])
    runs = {}
    for recorded in (False, True):
        model, optimizer = build()
        step = step_function(model, optimizer, mode == "tf.function")
        if recorded:
            hooks.install()
        block_seconds(step, optimizer, x, y, 3)  # warm-up, and tracing (with the hooks in place or not)
        if recorded:
            hooks.uninstall()
        runs[recorded] = (step, optimizer)
    times = {False: [], True: []}
    for _ in range(REPEATS):
        for recorded, (step, optimizer) in runs.items():
            if recorded:
                hooks.install()  # eagerly the hooks record as they run; a traced step has its recording built in
            times[recorded].append(block_seconds(step, optimizer, x, y, STEPS[mode]))
            if recorded:
                hooks.uninstall()
    trace.finish("complete", 0)
    return times[False], times[True]


def main():
    print(
        f"TensorFlow {tf.__version__}, Python {sys.version.split()[0]}; a step recorded / not recorded: the fastest "
        f"of {REPEATS} interleaved blocks of each (the median's ratio beside it)"
    )
    with tempfile.TemporaryDirectory() as directory:
        for mode in STEPS:
            plain, recorded = measure(mode, directory)
            print(
                f"  {mode:<12} {min(recorded) / min(plain):.3f}  (a step: {min(plain) * 1e3:.2f} ms; medians' "
                f"ratio {statistics.median(recorded) / statistics.median(plain):.3f})"
            )


if __name__ == "__main__":
    main()
