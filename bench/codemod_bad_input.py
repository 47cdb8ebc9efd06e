"""Prints the time and peak memory of `migrate --check -j 1` on hostile files (issue #31): a 50 MB file, a 4 MB
one-line file, 100,000 nested brackets, a 100,000-long attribute chain, `1 + 1 + ...` with 100,000 terms, and a
file just under the default --max-file-size (1 MB) that is parsed; each with its exit code and first error line.

Run with an interpreter that has libcst installed:
    python bench/codemod_bad_input.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
CASES = {
    "50 MB file": lambda: LEGACY + b"x = 1\n" * (50 * (1 << 20) // 6),
    "4 MB one-line list": lambda: LEGACY + b"x = [" + b"1, " * (4 * (1 << 20) // 3) + b"]\n",
    "100,000 nested brackets": lambda: LEGACY + b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "100,000-long attribute chain": lambda: LEGACY + b"x = a" + b".b" * 100_000 + b"\n",
    "1 + 1 + ... (100,000 terms)": lambda: LEGACY + b"x = " + b" + ".join([b"1"] * 100_000) + b"\n",
    "0.95 MB of statements (parsed)": lambda: LEGACY + b"x = 1\n" * (95 * (1 << 20) // 600),
}


def _measure(path: str) -> None:
    """Runs the command on `path` in this process's child; prints seconds, peak MB of it and its workers, code."""
    import resource

    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "-j", "1", path],
        capture_output=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KB on Linux
    said = next((line for line in done.stderr.decode(errors="replace").splitlines() if ": error: " in line), "")
    print(f"{seconds:.2f}\t{peak:.0f}\t{done.returncode}\t{said.split(': error: ', 1)[-1][:110]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="names of the cases to run (a prefix is enough)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        _measure(args.measure)
        return
    print(f"{'case':32} {'seconds':>8} {'peak MB':>8} {'exit':>4}  message")
    with tempfile.TemporaryDirectory() as directory:
        for name, make in CASES.items():
            if args.only and not any(name.startswith(prefix) for prefix in args.only):
                continue
            path = os.path.join(directory, "case.py")
            with open(path, "wb") as handle:
                handle.write(make())
            # A fresh process for each case, so that the peak is this case's alone.
            out = subprocess.run(
                [sys.executable, __file__, "--measure", path], capture_output=True, text=True, check=True
            ).stdout
            seconds, peak, code, message = out.rstrip("\n").split("\t", 3)
            print(f"{name:32} {float(seconds):8.2f} {float(peak):8.0f} {code:>4}  {message}")


if __name__ == "__main__":
    main()
