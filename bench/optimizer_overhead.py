"""Prints the step time of lossscale_compat's LossScaleOptimizer divided by the native Keras one.

Same model, data and inner optimizer, in one process, in eager mode, in tf.function and under XLA,
on two models: a 2x512 MLP, where the matmuls dominate, and 60 Dense(16) layers (120 small
variables), where the optimizer's own per-variable work dominates.
Ours runs TF 2.4's custom loop (get_scaled_loss -> get_unscaled_gradients -> apply_gradients); the
native class runs its own stack's idiom. Run it on each stack: `nox -s bench`. With BENCH_INNER=legacy (Keras 2
only) the inner optimizers are TF 2.4's `OptimizerV2` (`tf.keras.optimizers.legacy`), in both classes.

Then, for each form of ours (dynamic and fixed, in TF 2.4's loop and, on Keras 3, in Keras 3's loop), the time ratio
in tf.function beside the ops, conditionals and loops of one traced step, nested function bodies included
(lossscale_compat/_step_audit.py): on a GPU each conditional or loop is a host sync per step.

`--xla` (nox session `bench-xla`, one per Keras 3 stack) times only XLA-compiled steps (`jit_compile=True`), each
form of ours against the stack's own class in its own loop, on 120 and 480 small variables and the 2x512 MLP in
mixed float16: per form the median ratio and the spread of the paired runs, beside the traced step's
ops/conditionals/loops and the fusions of its optimized HLO. `--repeats N` sets the interleaved repeats. A second
instance of the stack's own class, timed like the others, is the control: its ratio to the first is the noise floor.
The steps are built native first, control last; `--reversed-build` builds them the other way round, since on a
loaded machine the build order alone moves a ratio. `--cpu-time` times process CPU time instead of wall time, and
`--models small` (any part of a model's name) picks models.
"""

import argparse
import os
import re
import statistics
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
warnings.simplefilter("ignore")

import tensorflow as tf  # noqa: E402

import lossscale_compat  # noqa: E402
from lossscale_compat import _flavour, _step_audit  # noqa: E402

KERAS3 = _flavour.has_keras3_loss_scaling()
STEPS = {"eager": 30, "function": 200, "xla": 200}
REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))
LEGACY_INNER = os.environ.get("BENCH_INNER", "current") == "legacy"


def mlp():
    return [
        tf.keras.layers.Input((256,)),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(1),
    ]


def small_variables(layers=60):
    return (
        [tf.keras.layers.Input((16,))]
        + [tf.keras.layers.Dense(16, activation="tanh") for _ in range(layers - 1)]
        + [tf.keras.layers.Dense(1)]
    )


MODELS = {"2x512 MLP": (mlp, 256), "120 small variables": (small_variables, 16)}


def make_model(layers):
    tf.keras.utils.set_random_seed(0)
    return tf.keras.Sequential(layers())


def make_step(model, optimizer, native, keras3_loop=None):
    """One batch of TF 2.4's loop, or of Keras 3's (`scale_loss`) when `keras3_loop` (default: native on Keras 3)."""
    variables = model.trainable_variables
    keras3_loop = (native and KERAS3) if keras3_loop is None else keras3_loop

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            if keras3_loop:
                scaled = optimizer.scale_loss(loss)
            else:
                scaled = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, variables)
        if not keras3_loop:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    return step


def counts(step, x, y):
    """'ops/conditionals/loops' of one traced step, those of its nested functions (the skip branches) included."""
    found = _step_audit.audit(step.get_concrete_function(x, y).graph.as_graph_def())
    return f"{found.ops}/{found.conditionals}/{found.loops}"


# Ours, each form and loop; the native class runs its own stack's idiom beside each.
FORMS = {
    "dynamic, TF 2.4 loop": (lambda inner: lossscale_compat.LossScaleOptimizer(inner, "dynamic"), False),
    "fixed, TF 2.4 loop": (lambda inner: lossscale_compat.LossScaleOptimizer(inner, 128), False),
}
if KERAS3:
    FORMS["dynamic, Keras 3 loop"] = (lambda inner: lossscale_compat.KerasLossScaleOptimizer(inner), True)
    FORMS["fixed, Keras 3 loop"] = (
        lambda inner: lossscale_compat.KerasLossScaleOptimizer(inner, dynamic=False, initial_scale=128),
        True,
    )


def timed(step, x, y, steps, clock=time.perf_counter):
    start = clock()
    for _ in range(steps):
        loss = step(x, y)
    float(loss)  # wait for the last step
    return (clock() - start) / steps


def counter_cost(iterations=20_000):
    """Seconds per step of the skipped-step count alone (cast, not, assign_add), measured in a graph loop.

    Ours adds exactly these ops to Keras 2's step; timing them in isolation bounds our overhead far more
    tightly than the noisy ratio of two whole steps on a shared machine.
    """
    counter = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def loop(count_too):
        def body(i, flag):
            if count_too:
                counter.assign_add(tf.cast(tf.logical_not(flag), tf.int64))
            return i + 1, tf.logical_not(flag)

        return tf.while_loop(lambda i, _: i < iterations, body, (tf.constant(0), tf.constant(True)))

    times = {}
    for count_too in (False, True):
        loop(count_too)
        samples = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            loop(count_too)
            samples.append(time.perf_counter() - start)
        times[count_too] = statistics.median(samples)
    return max(times[True] - times[False], 0.0) / iterations


def inner_optimizers():
    """`tf.keras.optimizers`, or with BENCH_INNER=legacy Keras 2's `OptimizerV2` family."""
    if not LEGACY_INNER:
        return tf.keras.optimizers
    legacy = _flavour.tf24_optimizers_module()
    if legacy is None:
        sys.exit("BENCH_INNER=legacy needs Keras 2 (TF 2.15, or tf_keras with TF_USE_LEGACY_KERAS=1): Keras 3 has none")
    return legacy


def forms(model_name, layers, width):
    """Each form of ours against native in tf.function: the time ratio beside ops/conditionals/loops per step."""
    x = tf.random.stateless_normal((256, width), seed=(1, 2))
    y = tf.random.stateless_normal((256, 1), seed=(3, 4))
    runs = {}
    for form, (make, keras3_loop) in {"native": (None, None), **FORMS}.items():
        model = make_model(layers)
        inner = inner_optimizers().SGD(0.01, momentum=0.9)
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(inner) if make is None else make(inner)
        runs[form] = tf.function(make_step(model, optimizer, make is None, keras3_loop))
        timed(runs[form], x, y, 5)
    samples = {form: [] for form in runs}
    for _ in range(REPEATS):
        for form, step in runs.items():
            samples[form].append(timed(step, x, y, STEPS["function"]))
    native = statistics.median(samples["native"])
    print(f"{model_name}, tf.function: ops/conditionals/loops per step, native {counts(runs['native'], x, y)}")
    for form in FORMS:
        print(
            f"  {form:22s} ratio {statistics.median(samples[form]) / native:6.3f}   "
            f"ops/conditionals/loops {counts(runs[form], x, y)}"
        )


def mixed_float16_mlp():
    """The 2x512 MLP with its layers in mixed_float16 (the output layer in float32, as Keras advises)."""
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        return [*mlp()[:-1], tf.keras.layers.Dense(1, dtype="float32")]
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


NATIVE_AGAIN = "native, second instance"

XLA_MODELS = {
    "120 small variables": (small_variables, 16),
    "480 small variables": (lambda: small_variables(240), 16),
    "2x512 MLP, mixed_float16": (mixed_float16_mlp, 256),
}


def fusions(step, x, y):
    """The fusions in the optimized HLO of an XLA-compiled step."""
    hlo = step.experimental_get_compiler_ir(x, y)(stage="optimized_hlo")
    return len(re.findall(r"= \S+ fusion\(", hlo))


def xla(repeats, models, reversed_build, clock):
    """Each form of ours against the stack's own class, both under XLA: median ratio, paired spread, counts."""
    if not KERAS3:
        sys.exit("--xla compares with Keras 3's own LossScaleOptimizer: run it on a Keras 3 stack (nox -s bench-xla)")
    for model_name, (layers, width) in XLA_MODELS.items():
        if models and not any(name in model_name for name in models):
            continue
        x = tf.random.stateless_normal((256, width), seed=(1, 2))
        y = tf.random.stateless_normal((256, 1), seed=(3, 4))
        runs = {}
        # A second instance of the stack's own class is the control: its ratio is what this machine resolves.
        contenders = {"native": (None, None), **FORMS, NATIVE_AGAIN: (None, None)}
        if reversed_build:  # built last to first; the timing order still rotates
            contenders = dict(reversed(contenders.items()))
        for form, (make, keras3_loop) in contenders.items():
            model = make_model(layers)
            inner = tf.keras.optimizers.SGD(0.01, momentum=0.9)
            optimizer = tf.keras.mixed_precision.LossScaleOptimizer(inner) if make is None else make(inner)
            runs[form] = tf.function(make_step(model, optimizer, make is None, keras3_loop), jit_compile=True)
            timed(runs[form], x, y, 5)  # trace, compile, build
        samples = {form: [] for form in runs}
        order = list(runs)
        for repeat in range(repeats):  # interleaved, and each repeat starts with the next form
            for form in order[repeat % len(order) :] + order[: repeat % len(order)]:
                samples[form].append(timed(runs[form], x, y, STEPS["xla"], clock))
        native = statistics.median(samples["native"])
        built = "built last to first" if reversed_build else "built first to last"
        print(
            f"{model_name}, XLA ({clock.__name__}, {built}): native {native * 1e3:.3f} ms/step, ops/conditionals/loops "
            f"{counts(runs['native'], x, y)}, HLO fusions {fusions(runs['native'], x, y)}"
        )
        for form in [*FORMS, NATIVE_AGAIN]:
            paired = sorted(ours / theirs for ours, theirs in zip(samples[form], samples["native"]))
            print(
                f"  {form:23s} ratio {statistics.median(samples[form]) / native:6.3f} "
                f"(paired {paired[0]:.3f}-{paired[-1]:.3f}, {repeats} repeats)   "
                f"ops/conditionals/loops {counts(runs[form], x, y)}   HLO fusions {fusions(runs[form], x, y)}"
            )


def main():
    global REPEATS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xla", action="store_true", help="time only XLA-compiled steps, every form (Keras 3)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="interleaved repeats per cell")
    parser.add_argument("--models", nargs="*", default=[], help="with --xla: only models whose name holds one of these")
    parser.add_argument(
        "--reversed-build", action="store_true", help="with --xla: build the control first, native last"
    )
    parser.add_argument("--cpu-time", action="store_true", help="with --xla: time process CPU time, not wall time")
    arguments = parser.parse_args()
    REPEATS = arguments.repeats
    if arguments.xla:
        print(f"TensorFlow {tf.__version__}, {tf.keras.mixed_precision.LossScaleOptimizer.__module__}")
        clock = time.process_time if arguments.cpu_time else time.perf_counter
        xla(REPEATS, arguments.models, arguments.reversed_build, clock)
        return 0
    optimizers = inner_optimizers()
    print(
        f"TensorFlow {tf.__version__}, Keras {'3' if KERAS3 else '2'} "
        f"({tf.keras.mixed_precision.LossScaleOptimizer.__module__}), inner optimizers from {optimizers.__name__}"
    )
    for model_name, (layers, width) in MODELS.items():
        x = tf.random.stateless_normal((256, width), seed=(1, 2))
        y = tf.random.stateless_normal((256, 1), seed=(3, 4))
        for mode, steps in STEPS.items():
            runs = {}
            for native in (True, False):
                model = make_model(layers)
                inner = optimizers.SGD(0.01, momentum=0.9)
                optimizer = (
                    tf.keras.mixed_precision.LossScaleOptimizer(inner)
                    if native
                    else lossscale_compat.LossScaleOptimizer(inner, "dynamic")
                )
                step = make_step(model, optimizer, native)
                if mode != "eager":
                    step = tf.function(step, jit_compile=(mode == "xla"))
                timed(step, x, y, 5)  # trace, compile, build
                runs[native] = step
            samples = {True: [], False: []}
            for _ in range(REPEATS):  # interleaved, so drift hits both alike
                for native in (True, False):
                    samples[native].append(timed(runs[native], x, y, steps))
            native_time, ours_time = statistics.median(samples[True]), statistics.median(samples[False])
            ratios = sorted(ours / native for ours, native in zip(samples[False], samples[True]))
            ops = (
                f"   ops/conditionals/loops native {counts(runs[True], x, y)}, ours {counts(runs[False], x, y)}"
                if (mode == "function")
                else ""
            )
            print(
                f"{model_name:20s} {mode:9s} native {native_time * 1e3:8.3f} ms/step   "
                f"ours {ours_time * 1e3:8.3f} ms/step   ratio {ours_time / native_time:6.3f} "
                f"(paired runs {ratios[0]:.3f}-{ratios[-1]:.3f}){ops}"
            )
    for model_name, (layers, width) in MODELS.items():
        forms(model_name, layers, width)
    extra = counter_cost()
    print(f"skipped-step count alone: {extra * 1e6:.2f} us per step (Keras 2 stacks add only this to the native step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
