"""Prints the time of an eager `apply_gradients` of lossscale_compat's loss-scale optimizer over TF 2.4's `OptimizerV2`
divided by that of Keras 2's own `OptimizerV2` loss-scale optimizer, over 120 small variables (Keras 2 stacks only).

The whole-step bench (optimizer_overhead.py, BENCH_INNER=legacy) hides a cost of this size in its spread; this one
times the optimizer's part alone, in interleaved pairs: `nox -s bench` does not run it, run it with a stack's python.
"""

import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour

PAIRS = int(os.environ.get("BENCH_REPEATS", "15"))
STEPS = 200


def per_step(optimizer, grads, variables, steps=STEPS):
    start = time.perf_counter()
    for _ in range(steps):
        optimizer.apply_gradients(zip(grads, variables))
    return (time.perf_counter() - start) / steps


def main():
    legacy = _flavour.tf24_optimizers_module()
    if legacy is None:
        sys.exit("Keras 3 has no OptimizerV2: run this on a Keras 2 stack (TF 2.15, or tf_keras)")
    variables = [tf.Variable(tf.ones([16, 16])) for _ in range(120)]
    grads = [tf.ones([16, 16]) * 1e-3 for _ in variables]
    ours = lossscale_compat.KerasLossScaleOptimizer(legacy.SGD(0.01))
    native = _flavour.keras2_loss_scale_optimizer_for_legacy_optimizers()(legacy.SGD(0.01))
    for optimizer in (ours, native):
        per_step(optimizer, grads, variables, 20)  # builds the slots and warms the eager caches
    ratios, native_times = [], []
    for _ in range(PAIRS):
        native_times.append(per_step(native, grads, variables))
        ratios.append(per_step(ours, grads, variables) / native_times[-1])
    print(
        f"TensorFlow {tf.__version__}: eager apply_gradients, 120 variables, native "
        f"{statistics.median(native_times) * 1e3:.3f} ms, ours / native median {statistics.median(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f}, {PAIRS} pairs)"
    )


if __name__ == "__main__":
    main()
