"""Records what `migrate --diff --report` prints, so that a refactor can be held to byte-identical output.

Runs the CLI of the checkout it belongs to (through this interpreter's `lossscale_compat`) over the examples, the
codemod's corpus, the given trees (an installed keras and tf_keras) and three generated big files (each alone,
with `-j 1` and `-j 2`, as one big file was once migrated in halves with two jobs), for both targets; writes each
run's stdout, stderr, report and exit code under OUT. A second call with `--compare` says which files differ:

    python bench/codemod_outputs.py OUT_BEFORE --tree .../site-packages/keras --tree .../site-packages/tf_keras
    (change the code)
    python bench/codemod_outputs.py OUT_AFTER --tree ... --tree ...
    python bench/codemod_outputs.py --compare OUT_BEFORE OUT_AFTER
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("keras3", "tf_keras")
IN_REPO = {"examples": ["examples/tf24", "examples/project"], "corpus": ["tests/migrate/corpus"]}

SITE_PAIR = (
    b"opts.append(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n"
    b"ok = isinstance(o, tf.keras.mixed_precision.experimental.LossScaleOptimizer)\n"
)
ONE_SITE = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"


def _big_files(folder: str) -> list[str]:
    """Writes the big files into `folder` and returns their names: each is over 256 KB (the halves' threshold)."""
    files = {
        "many_sites.py": b"import tensorflow as tf\n" + SITE_PAIR * 2000,
        "many_names.py": ONE_SITE + b"".join(b"name_%d = %d\n" % (i, i) for i in range(20_000)),
        "reads_across.py": b"import tensorflow as tf\n"
        + b"".join(b"def f_%d(opt):\n    return opt\n" % i for i in range(4000))
        + SITE_PAIR * 1000
        + b"".join(b"g_%d = f_%d(None)\n" % (i, i) for i in range(4000)),
    }
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(data)
    return sorted(files)


def _run(out: str, label: str, paths: list[str], cwd: str, extra: list[str]) -> None:
    """Runs `migrate --diff --report` over `paths` from `cwd` and writes what it printed under `out`."""
    report = os.path.join(out, f"{label}.report.json")
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--diff", "--report", report, *extra, *paths],
        cwd=cwd,
        capture_output=True,
        check=False,  # the exit code is recorded
    )
    for suffix, data in (("stdout", done.stdout), ("stderr", done.stderr), ("rc", b"%d\n" % done.returncode)):
        with open(os.path.join(out, f"{label}.{suffix}"), "wb") as handle:
            handle.write(data)
    print(f"{label}: exit {done.returncode}, {len(done.stdout):,} bytes of diff")


def capture(out: str, trees: list[str]) -> None:
    """Writes every run's output under `out`."""
    os.makedirs(out, exist_ok=True)
    inputs = os.path.join(out, "inputs")
    big = _big_files(inputs)
    for target in TARGETS:
        for name, paths in IN_REPO.items():
            _run(out, f"{name}-{target}", paths, REPO, ["--target", target])
        if trees:
            _run(out, f"trees-{target}", trees, REPO, ["--target", target])
        for name in big:
            for jobs in ("1", "2"):
                stem = os.path.splitext(name)[0]
                _run(out, f"{stem}-j{jobs}-{target}", [name], inputs, ["--target", target, "-j", jobs])


def compare(before: str, after: str) -> int:
    """Prints each recorded output that differs or is missing; returns 1 if any, else 0."""
    names = sorted({name for folder in (before, after) for name in os.listdir(folder) if not name.startswith("inputs")})
    differ = [
        name
        for name in names
        if not (os.path.exists(os.path.join(before, name)) and os.path.exists(os.path.join(after, name)))
        or not filecmp.cmp(os.path.join(before, name), os.path.join(after, name), shallow=False)
    ]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)} of {len(names)} outputs byte-identical")
    return 1 if differ else 0


def main() -> int:
    """Captures, or compares two captures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="the folder to write the outputs to")
    parser.add_argument("--tree", action="append", default=[], help="a tree to migrate too (an installed keras)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two captures")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        parser.error("name a folder to write the outputs to, or pass --compare BEFORE AFTER")
    capture(os.path.abspath(args.out), [os.path.abspath(tree) for tree in args.tree])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
