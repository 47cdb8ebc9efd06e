"""Running `lossscale-compat record` and `compare` from the tests, as a user runs them (Python 3.8 compatible).

On Python 3.9+ each run is a fork of a warm interpreter (tests/warm_python.py), as `python` would run it; on TF 2.4's
Python 3.8 each is its own process.
"""

import json
import os
import subprocess
import sys

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")


def lossscale_compat(*args, cwd=None):
    """Runs `python -m lossscale_compat ARGS`; returns its exit code and output (`returncode`, `stdout`, `stderr`)."""
    if sys.version_info >= (3, 9):
        from pathlib import Path

        from warm_python import warm_python

        return warm_python(ENV).run(["-m", "lossscale_compat", *map(str, args)], cwd=Path(cwd or os.getcwd()))
    return subprocess.run([sys.executable, "-m", "lossscale_compat", *map(str, args)], env=ENV, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def record(trace, *program, cwd=None):
    """Records a program into `trace`; returns the completed process."""
    return lossscale_compat("record", "-o", trace, *program, cwd=cwd)


def compare(old, new, *options):
    """Compares two traces with --format json; returns (exit code, the report or None, stderr)."""
    done = lossscale_compat("compare", "--format", "json", *options, old, new)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


def read_lines(path):
    with open(str(path)) as f:
        return [json.loads(line) for line in f]
