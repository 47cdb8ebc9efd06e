"""Running `lossscale-compat record` and `compare` from the tests, as a user runs them (Python 3.8 compatible)."""

import json
import os
import subprocess
import sys

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")


def lossscale_compat(*args, cwd=None):
    """Runs `python -m lossscale_compat ARGS`; returns the completed process (text output)."""
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
