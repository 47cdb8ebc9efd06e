"""The whole journey on a bundled TF 2.4-era project: run it unmodified, migrate it, compare with TF 2.4.0.

    python examples/demo.py            # on today's TensorFlow, with lossscale_compat installed
    python examples/demo.py --record   # on TensorFlow 2.4.0: re-records examples/project/golden.json

It runs examples/project/train.py three ways and prints the loss-scale trajectories, skipped steps and
final losses side by side, then a one-line verdict (exit code 0 when all three agree):
  1. unmodified, through `lossscale-compat run`;
  2. migrated: a copy rewritten by `lossscale-compat migrate --write`, run with plain Python;
  3. as TF 2.4.0 ran it, from the recorded golden (examples/project/golden.json: recorded, not run live).
It also writes the three loss-scale trajectories, skipped steps marked, as a PNG (needs matplotlib) and prints its path.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "project")
GOLDEN = os.path.join(PROJECT, "golden.json")
PARTS = ("custom_loop", "fit")
# Migrated to Keras 3, the custom loop keeps lossscale_compat's class (the codemod cannot trace the optimizer the
# loop uses: LSC120), which counts skipped steps in `iterations` as TF 2.4 did; `fit` gets Keras 3's own
# LossScaleOptimizer from `compile`, which does not.
KERAS3_PARTS_WITHOUT_SKIPS = ("fit",)
# Float16 machine epsilon. Final losses went through float16 kernels, which round differently by CPU and
# TensorFlow version: after n steps they may differ by n + 1 epsilons (docs/goldens.md says why).
FLOAT16_EPSILON = 2.0 ** -10
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
# The columns and the plot's lines: what each one is.
RECORDED, UNMODIFIED, MIGRATED = "TF 2.4.0 (recorded)", "unmodified (lossscale-compat run)", "migrated"


def run_python(args, what, cwd=None):
    """Runs `python ARGS`; exits with its output when it fails."""
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"demo: {what} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def run_unmodified(out_dir):
    """The project as it is, with TF 2.4's names put back by `lossscale-compat run`."""
    result = os.path.join(out_dir, "unmodified.json")
    run_python(["-m", "lossscale_compat", "run", os.path.join(PROJECT, "train.py"), "--json", result],
               "lossscale-compat run train.py")
    return load(result)


def run_migrated(out_dir, target="keras3"):
    """A copy of the project rewritten to the modern API, run with plain Python."""
    copy = os.path.join(out_dir, "project")
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("golden.json", "__pycache__"))
    migrate = subprocess.run([sys.executable, "-m", "lossscale_compat", "migrate", "--write", "--target", target, copy],
                             env=ENV, capture_output=True, text=True)
    if migrate.returncode == 2:
        sys.exit(f"demo: lossscale-compat migrate failed:\n{migrate.stdout}{migrate.stderr}")
    print(f"migrated a copy of examples/project ({migrate.stderr.strip().splitlines()[-1]})")
    result = os.path.join(out_dir, "migrated.json")
    run_python([os.path.join(copy, "train.py"), "--json", result], "the migrated train.py")
    return load(result)


def load(path):
    with open(path) as f:
        return json.load(f)


def differences(golden, other, parts_without_skips=()):
    """What `other` did differently from TF 2.4.0, as short sentences; empty when it matches.

    In `parts_without_skips`, `iterations` is expected to leave out the skipped steps, as Keras 3's own
    LossScaleOptimizer does (docs/codemod.md, LSC118).
    """
    found = []
    for part in PARTS:
        want, got = golden[part], other[part]
        for key in ("loss_scale", "skipped"):
            if got[key] != want[key]:
                found.append(f"{part}: {key} {got[key]} != TF 2.4.0's {want[key]}")
        iterations = want["iterations"] - (len(want["skipped"]) if part in parts_without_skips else 0)
        if got["iterations"] != iterations:
            found.append(f"{part}: iterations {got['iterations']} != {iterations}")
        bound = (len(want["loss_scale"]) + 1) * FLOAT16_EPSILON
        if abs(got["final_loss"] - want["final_loss"]) > bound * max(1.0, abs(want["final_loss"])):
            found.append(f"{part}: final loss {got['final_loss']:.6g} != TF 2.4.0's {want['final_loss']:.6g}")
    return found


def show(results):
    """Prints the runs side by side."""
    names = list(results)
    width = max(len(name) for name in names) + 2
    for part in PARTS:
        print(f"\n{part.replace('_', ' ')}: loss scale after each step (* = step skipped)")
        print("step " + "".join(f"{name:>{width}}" for name in names))
        for step in range(len(results[names[0]][part]["loss_scale"])):
            cells = []
            for name in names:
                run = results[name][part]
                mark = "*" if step in run["skipped"] else " "
                cells.append(f"{run['loss_scale'][step]:>{width - 1}g}{mark}")
            print(f"{step:>4} " + "".join(cells))
        for key in ("iterations", "final_loss"):
            print(f"{key}: " + "  ".join(f"{name}={results[name][part][key]:.6g}" for name in names))


def plot(results, path):
    """Writes the trajectories as a PNG, skipped steps marked; returns the path, or None without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from lossscale_compat._plot import plot_loss_scales  # the drawing `lossscale-compat compare --plot` does too

    runs = {name: {part.replace("_", " "): (run[part]["loss_scale"], run[part]["skipped"]) for part in PARTS}
            for name, run in results.items()}  # TF 2.4.0's first: its skips are the ones marked
    return plot_loss_scales(runs, path, "examples/project on today's TensorFlow, against TF 2.4.0: the three lines "
                            "coincide")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="record the golden (TensorFlow 2.4.0 only)")
    parser.add_argument("--plot", default="demo_loss_scale.png", help="where to write the PNG plot")
    parser.add_argument("--target", choices=("keras3", "tf_keras"), default="keras3",
                        help="the API to migrate to (tf_keras for TF 2.15 or TF_USE_LEGACY_KERAS=1)")
    args = parser.parse_args()
    if args.record:
        import tensorflow as tf
        if tf.__version__ != "2.4.0":
            sys.exit(f"demo --record must run on TensorFlow 2.4.0, not {tf.__version__}")
        run_python([os.path.join(PROJECT, "train.py"), "--json", GOLDEN], "train.py on TF 2.4.0")
        print("wrote", os.path.relpath(GOLDEN))
        return 0
    with tempfile.TemporaryDirectory() as out_dir:
        results = {RECORDED: load(GOLDEN), UNMODIFIED: run_unmodified(out_dir),
                   MIGRATED: run_migrated(out_dir, args.target)}
    print(f"\n{RECORDED}: {os.path.relpath(GOLDEN)}, recorded on TensorFlow 2.4.0 by `examples/demo.py --record`, "
          "not run live")
    show(results)
    where = plot(results, args.plot)
    if where:
        print(f"\nplot of the loss-scale trajectories: {os.path.abspath(where)}")
    else:
        print("\nno plot written: matplotlib is not installed (pip install matplotlib, or run `nox -s example`)")
    problems = [f"unmodified: {p}" for p in differences(results[RECORDED], results[UNMODIFIED])]
    keras3 = args.target == "keras3"
    without_skips = KERAS3_PARTS_WITHOUT_SKIPS if keras3 else ()
    problems += [f"migrated: {p}" for p in differences(results[RECORDED], results[MIGRATED], without_skips)]
    if problems:
        print("\nverdict: DIFFERENT from TF 2.4.0\n  " + "\n  ".join(problems))
        return 1
    print("\nverdict: unmodified and migrated, the project trains as on TF 2.4.0: the same loss scales and "
          "skipped steps, final losses within float16 precision" +
          (", and Keras 3's own optimizer under `fit` leaves the skipped steps out of `iterations` "
           "(docs/codemod.md)." if keras3 else "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
