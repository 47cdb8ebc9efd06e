"""Prints the time of `migrate --check -j 1` on inputs where one name is bound again and again, to show the time is
linear in their size: notebooks of 500 to 5,000 cells, each cell importing TensorFlow again and building a
loss-scale optimizer (as notebooks do), and `.py` files that import `tensorflow as tf` again before each of as many
legacy sites.

Run with an interpreter that has libcst installed:
    python bench/notebook_cells.py [--only notebook|py] [SIZE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def notebook(cells: int) -> bytes:
    """A notebook of `cells` code cells (and as many markdown cells), laid out as Jupyter writes it."""
    out = []
    for i in range(cells):
        out.append({"cell_type": "markdown", "metadata": {}, "source": [f"## Step {i}"]})
        source = [
            "import tensorflow as tf\n",
            f"opt{i} = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
            f"o{i} = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, s)\n",
            f"%time y{i} = opt{i}.get_config()",
        ]
        out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source})
    data = {"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()


def reimports(sites: int) -> bytes:
    """A `.py` file that imports `tensorflow as tf` again before each of `sites` legacy sites."""
    lines = []
    for i in range(sites):
        lines.append("import tensorflow as tf\n")
        lines.append(f"opt{i} = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD())\n")
    return "".join(lines).encode()


INPUTS = {"notebook": ("nb.ipynb", notebook, "cells"), "py": ("reimports.py", reimports, "sites")}


def _cpu_seconds(kind: str, size: int) -> None:
    """Migrates one input in this process and prints the CPU seconds it took (the machine's load counts less)."""
    from lossscale_compat.codemods import migrate_notebook, migrate_source

    migrate = migrate_notebook if kind == "notebook" else migrate_source
    data = INPUTS[kind][1](size)
    started = time.process_time()
    migrate(data, "keras3")
    print(f"{time.process_time() - started:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(INPUTS), help="one kind of input")
    parser.add_argument("--cpu", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 1000, 2000, 5000])
    args = parser.parse_args()
    if args.cpu:
        _cpu_seconds(args.cpu[0], int(args.cpu[1]))
        return
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("wall: `migrate --check -j 1 --timeout 0`; CPU: the same input migrated in one process, parse included")
    print(f"{'input':>8} {'size':>6} {'wall s':>8} {'ms/unit':>8} {'exit':>4} {'CPU s':>7} {'ms/unit':>8}")
    with tempfile.TemporaryDirectory() as directory:
        for kind, (filename, make, _unit) in INPUTS.items():
            if args.only and kind != args.only:
                continue
            for size in args.sizes:
                path = os.path.join(directory, filename)
                with open(path, "wb") as handle:
                    handle.write(make(size))
                started = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "-j", "1", "--timeout", "0", path],
                    capture_output=True,
                    env=env,
                    check=False,
                )
                wall = time.perf_counter() - started
                cpu = float(
                    subprocess.run(
                        [sys.executable, __file__, "--cpu", kind, str(size)],
                        capture_output=True,
                        text=True,
                        env=env,
                        check=True,
                    ).stdout
                )
                print(
                    f"{kind:>8} {size:>6} {wall:8.2f} {1000 * wall / size:8.2f} {done.returncode:>4}"
                    f" {cpu:7.2f} {1000 * cpu / size:8.2f}",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.1f} (units: {', '.join(u for _, _, u in INPUTS.values())})")


if __name__ == "__main__":
    main()
