"""Prints the time of `migrate --check -j 1` on notebooks of 500 to 5,000 cells, each cell importing TensorFlow again
and building a loss-scale optimizer (as notebooks do), to show the time is linear in the number of cells.

Run with an interpreter that has libcst installed:
    python bench/notebook_cells.py [CELLS ...]
"""

from __future__ import annotations

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


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or [500, 1000, 2000, 5000]
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print(f"{'cells':>6} {'seconds':>8} {'ms/cell':>8} {'exit':>4}")
    with tempfile.TemporaryDirectory() as directory:
        for cells in sizes:
            path = os.path.join(directory, "nb.ipynb")
            with open(path, "wb") as handle:
                handle.write(notebook(cells))
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "-j", "1", "--timeout", "0", path],
                capture_output=True,
                env=env,
                check=False,
            )
            seconds = time.perf_counter() - started
            print(f"{cells:>6} {seconds:8.2f} {1000 * seconds / cells:8.2f} {done.returncode:>4}")


if __name__ == "__main__":
    main()
