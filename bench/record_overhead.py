"""Prints what `lossscale-compat record` adds to a training step: step time recorded / not recorded.

By default a 2x512 MLP (256 inputs, batch 256) in float32 (CPU float16 kernels are slow enough to hide any cost),
trained with the stack's own LossScaleOptimizer in its own idiom, eagerly and in tf.function; recorded into a trace
file (the loss scale before each step; after it the scale, iterations, and the sum and sum of squares of the 6
variables; eagerly one traced function call after the step, in tf.function ops of the step and one numpy_function
call) or not. `--width` and `--batch` change the model (the digest's cost grows with the weights, the step's with
weights times batch); `--every K` records every K-th step, as `record --every K` does; `--parts` also times the
recording without the digest, and in tf.function without the digest and the host call, to show what each costs.
Blocks of steps of each alternate in one process; the figures are the ratio of the fastest blocks (contention from
other jobs only ever slows a block) and of the medians, of wall time and of this process's CPU time (which other
jobs on the machine do not inflate). Target: at most 1.05. Run it on each stack (`nox -s bench`); it runs on TF
2.4.0 too, with Python 3.8 and TensorFlow 2.4.0's own class.
"""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lossscale_compat import _trace_hooks
from lossscale_compat._trace import Trace
from lossscale_compat._trace_hooks import _Hooks

STEPS = {"eager": 10, "tf.function": 30}


def build(width=512):
    model = tf.keras.Sequential(
        [
            tf.keras.Input((256,)),
            tf.keras.layers.Dense(width, activation="relu"),
            tf.keras.layers.Dense(width, activation="relu"),
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
    """Seconds per step of one block: (wall, this process's CPU)."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step(x, y)
    float(optimizer.iterations.numpy())
    return (time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps


def no_digest(tf_, variables):
    return tf_.zeros([2 * len(variables)], tf_.float64)


def no_host_call(function, inputs, dtype):
    return tf.reduce_any(tf.concat([tf.reshape(tf.cast(t, tf.float64), [-1]) for t in inputs], 0) > 0)


@contextlib.contextmanager
def part_left_out(part):
    """Records with one part of the recording left out (`--parts`): the digest, or the digest and the host call."""
    digest, numpy_function = _trace_hooks._digest, tf.numpy_function
    if part:
        _trace_hooks._digest = no_digest
    if part == "digest and host call":
        tf.numpy_function = no_host_call  # a traced step only: eagerly the hooks call no numpy_function
    try:
        yield
    finally:
        _trace_hooks._digest, tf.numpy_function = digest, numpy_function


def measure(mode, directory, options):
    """Per-step (wall, CPU) seconds of each block of each variant (not recorded first), in interleaved blocks."""
    x, y = tf.random.normal([options.batch, 256]), tf.random.normal([options.batch, 1])
    variants = ["not recorded", "recorded"]
    if options.parts:
        variants += ["without the digest"] + (["without the digest and host call"] if mode == "tf.function" else [])
    runs = {}
    for name in variants:
        trace = Trace(os.path.join(directory, f"{mode} {name}.jsonl"), {"program": "bench"}, every=options.every)
        hooks = None if name == "not recorded" else _Hooks(trace)
        model, optimizer = build(options.width)
        runs[name] = (step_function(model, optimizer, mode == "tf.function"), optimizer, hooks, trace)
    times = {name: [] for name in variants}
    for repeat in range(options.repeats + 1):  # the first round warms up, and traces (with the hooks or not)
        for name, (step, optimizer, hooks, _) in runs.items():
            if hooks:
                hooks.install()  # eagerly the hooks record as they run; a traced step has its recording built in
            with part_left_out(name.partition("without the ")[2]):
                seconds = block_seconds(step, optimizer, x, y, STEPS[mode] if repeat else 3)
            if hooks:
                hooks.uninstall()
            if repeat:
                times[name].append(seconds)
    for _, _, _, trace in runs.values():
        trace.finish("complete", 0)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512, help="units of each hidden layer (default 512)")
    parser.add_argument("--batch", type=int, default=256, help="batch size (default 256)")
    parser.add_argument("--every", type=int, default=1, help="record every K-th step (default 1)")
    parser.add_argument(
        "--parts", action="store_true", help="also record without the digest, and in tf.function without the host call"
    )
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("BENCH_REPEATS", "15")))
    options = parser.parse_args()
    print(
        f"TensorFlow {tf.__version__}, Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}; "
        f"2x{options.width} MLP, batch {options.batch}, every {options.every}; a step recorded / not recorded, "
        f"{options.repeats} interleaved blocks of each: the fastest blocks' ratio and the medians', of wall time "
        "and of CPU time"
    )
    with tempfile.TemporaryDirectory() as directory:
        for mode in STEPS:
            times = measure(mode, directory, options)
            plain = times.pop("not recorded")
            for name, recorded in times.items():
                ratios = []
                for kind in (0, 1):  # wall, CPU
                    a, b = [t[kind] for t in plain], [t[kind] for t in recorded]
                    ratios += [min(b) / min(a), statistics.median(b) / statistics.median(a)]
                shown = mode if name == "recorded" else f"  {name}"
                print(
                    f"  {shown:<12} wall {ratios[0]:.3f} (medians {ratios[1]:.3f}), CPU {ratios[2]:.3f} (medians "
                    f"{ratios[3]:.3f}); a step: {min(t[0] for t in plain) * 1e3:.2f} ms"
                )
    print(f"  load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
