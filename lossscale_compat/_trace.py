"""`lossscale-compat record`: a trace of every loss-scaled step a program takes, on today's TensorFlow or TF 2.4.0.

This module runs on Python 3.8 with TensorFlow 2.4.0 as well (the old stack a user records on), so it imports
nothing of the package that needs Python 3.9 or a modern Keras, and uses no newer syntax.

The hooks that read each step live in `_trace_hooks`. A trace is JSON lines: a header, one line per optimizer when it
takes its first step, one per recorded step, and an end line holding the run's status and a SHA-256 of every line
before it (docs/equivalence.md).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import random
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from lossscale_compat._trace_hooks import _Hooks, _import_if_present

FORMAT = "lossscale-compat-trace"
VERSION = 1
# Exit codes of `record`, besides the program's own: 2 for a usage error or a program that took no loss-scaled step.
EXIT_USAGE = 2
EXIT_NOTHING_RECORDED = 2
USAGE = (
    "usage: lossscale-compat record -o TRACE [--legacy] [--steps N] [--every K] [--full] [--seed S] "
    "SCRIPT|-m MODULE [ARGS...]"
)


class Trace:
    """Writes one trace file: the header at once, then each optimizer and step as it comes, the end last."""

    def __init__(
        self, path: str, header: dict[str, Any], steps: int | None = None, every: int = 1, full: bool = False
    ) -> None:
        if every < 1 or (steps is not None and steps < 1):
            raise ValueError("--steps and --every take a whole number of at least 1")
        self.path, self.max_steps, self.every, self.full = path, steps, every, full
        self.seen = 0  # loss-scaled steps taken, recorded or not
        self.recorded = 0  # steps written
        self._kept = 0  # steps `reserve` kept (written, or being digested)
        self.optimizers: dict[int, int] = {}  # id(optimizer) -> its index in the trace
        self._alive: list[Any] = []  # the optimizers themselves, so that no id is reused while recording
        self._counts: list[int] = []  # steps taken by each optimizer
        self._hash = hashlib.sha256()
        self._lock = threading.Lock()
        self._file = open(path, "w")
        self._write(dict(header, format=FORMAT, version=VERSION))

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=True) + "\n"
        self._hash.update(line.encode())
        self._file.write(line)

    def optimizer_index(self, optimizer: Any, variables: Sequence[Any]) -> int:
        """The optimizer's index in the trace; its first use writes what it is and which variables it trains."""
        with self._lock:
            index = self.optimizers.get(id(optimizer))
            if index is None:
                index = self.optimizers[id(optimizer)] = len(self._alive)
                self._alive.append(optimizer)
                self._counts.append(0)
                cls = type(optimizer)
                self._write(
                    {
                        "optimizer": index,
                        "class": f"{cls.__module__}.{cls.__qualname__}",
                        "variables": [_variable_name(v) for v in variables],
                        "shapes": [[int(d) for d in v.shape] for v in variables],
                    }
                )
            return index

    def reserve(self, index: int) -> int | None:
        """Counts a step of optimizer `index` as it starts; returns its number if the trace keeps it, else None.

        Only kept steps are digested: `--steps` and `--every` thin the work, not only the writing.
        """
        with self._lock:
            n = self._counts[index]
            self._counts[index] += 1
            self.seen += 1
            if (self.max_steps is not None and self._kept >= self.max_steps) or n % self.every:
                return None
            self._kept += 1
            return n

    def cancel(self, index: int, n: int | None) -> None:
        """Takes back the last `reserve` of optimizer `index`: its step raised, so it was not taken."""
        with self._lock:
            self._counts[index] -= 1
            self.seen -= 1
            self._kept -= n is not None

    def step(
        self,
        index: int,
        n: int,
        scale_before: float,
        scale_after: float,
        iterations: int,
        loss: float | None,
        skipped: bool,
        digest: Any,
        values: Sequence[Any] = (),
    ) -> None:
        """Writes step `n` of optimizer `index` (a number `reserve` gave); `digest` is each variable's sum and half
        its sum of squares after the step."""
        import numpy as np

        with self._lock:
            self.recorded += 1
            sums = np.asarray(digest, dtype=np.float64).reshape(-1, 2)
            record = {
                "step": self.recorded - 1,
                "optimizer": index,
                "n": int(n),
                "scale_before": float(scale_before),
                "scale_after": float(scale_after),
                "iterations": int(iterations),
                "skipped": bool(skipped),
                "loss": None if loss is None else float(loss),
                "sum": [float(s) for s in sums[:, 0]],
                "norm": [float(s) for s in np.sqrt(2 * sums[:, 1])],
            }
            if self.full:
                record["values"] = [np.asarray(v, dtype=np.float64).tolist() for v in values]
            self._write(record)

    def finish(self, status: str, exit_code: int, error: str | None = None) -> None:
        """Writes the end line (status, counts, the SHA-256 of all lines before it) and closes the file."""
        with self._lock:
            if self._file.closed:
                return
            end = {
                "end": status,
                "exit_code": exit_code,
                "error": error,
                "steps": self.recorded,
                "steps_taken": self.seen,
                "sha256": self._hash.hexdigest(),
            }
            self._file.write(json.dumps(end, sort_keys=True) + "\n")
            self._file.close()


def _variable_name(variable: Any) -> str:
    name = getattr(variable, "path", None) or variable.name
    return name[:-2] if name.endswith(":0") else name


# ---------------------------------------------------------------------------------------------------------------
# Determinism and the stack.


def make_deterministic(seed: int) -> dict[str, Any]:
    """Seeds Python, NumPy and TensorFlow and turns on op determinism where this stack has it; says what it did."""
    import numpy as np
    import tensorflow as tf

    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    seeded = ["python random", "numpy", "tensorflow"]
    not_deterministic: list[str] = []
    done: dict[str, Any] = {"seed": seed, "seeded": seeded, "not_deterministic": not_deterministic}
    set_keras_seed = getattr(tf.keras.utils, "set_random_seed", None)
    if set_keras_seed is not None:  # Keras 3 keeps a seed generator of its own
        set_keras_seed(seed)
        seeded.append("keras")
    enable = getattr(tf.config.experimental, "enable_op_determinism", None)
    if enable is not None:
        done["op_determinism_was_on"] = _op_determinism_on()
        enable()
        done["op_determinism"] = "tf.config.experimental.enable_op_determinism()"
    else:  # TF < 2.9: only the environment variable, read by some GPU kernels when TensorFlow starts
        done["op_determinism"] = "TF_DETERMINISTIC_OPS=1" if os.environ.get("TF_DETERMINISTIC_OPS") == "1" else None
        not_deterministic.append(
            "op determinism: this TensorFlow has no tf.config.experimental.enable_op_determinism; CPU kernels are "
            "deterministic, GPU kernels only with TF_DETERMINISTIC_OPS=1 set before the run (record sets it)"
        )
    if os.environ.get("PYTHONHASHSEED") is None:
        not_deterministic.append("PYTHONHASHSEED is not set: set iteration order is not (set it to 0)")
    return done


def _op_determinism_on() -> bool | None:
    """Whether op determinism is on already (None where TensorFlow cannot say)."""
    config = _import_if_present("tensorflow.python.framework.config")
    is_on = getattr(config, "is_op_determinism_enabled", None)
    return None if is_on is None else bool(is_on())


def _restore_op_determinism(determinism: dict[str, Any]) -> None:
    """Turns op determinism off again after a recording in the caller's own process, if it was off before."""
    if determinism.get("op_determinism_was_on") is False:
        config = _import_if_present("tensorflow.python.framework.config")
        disable = getattr(config, "disable_op_determinism", None)
        if disable is not None:
            disable()


def stack() -> dict[str, Any]:
    """What the run ran on: Python, TensorFlow, Keras, and the devices."""
    import tensorflow as tf

    keras = tf.keras  # TF 2.4's own, or whichever Keras tf.keras is on this stack
    name = {"tensorflow": "tf.keras", "tensorflow.keras": "tf.keras"}.get(keras.__name__, keras.__name__.split(".")[0])
    keras_version = f"{name} {getattr(keras, '__version__', tf.__version__)}"
    devices = sorted({d.device_type for d in tf.config.list_physical_devices()})
    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras_version,
        "devices": devices,
        "gpu": "GPU" in devices,
        "machine": platform.machine(),
        "tf_use_legacy_keras": os.environ.get("TF_USE_LEGACY_KERAS"),
    }


# ---------------------------------------------------------------------------------------------------------------
# Recording from code (the pytest fixture, `testing.record_training`) and from the command line.


@contextlib.contextmanager
def recording(
    path: str,
    program: str = "",
    *,
    steps: int | None = None,
    every: int = 1,
    full: bool = False,
    seed: int | None = 0,
) -> Iterator[Trace]:
    """Records every loss-scaled step taken inside the block into the trace file `path`.

    The trace ends `complete`, `crashed` (an exception left the block), or `no-steps` (no loss-scaled step).
    """
    import tensorflow as tf  # noqa: F401 - the classes to hook must be importable

    ran_on = stack()
    determinism = make_deterministic(seed) if seed is not None else {"seed": None}
    header = {
        "program": program,
        "stack": ran_on,
        "determinism": determinism,
        "options": {"steps": steps, "every": every, "full": full},
    }
    trace = Trace(os.fspath(path), header, steps=steps, every=every, full=full)
    hooks = _Hooks(trace)
    hooks.install()
    try:
        yield trace
    except BaseException as error:
        trace.finish("interrupted" if isinstance(error, KeyboardInterrupt) else "crashed", 1, _one_line(error))
        raise
    finally:
        hooks.uninstall()
        trace.finish("complete" if trace.seen else "no-steps", 0)
        _restore_op_determinism(determinism)


def record_training(
    path: Any,
    function: Callable[..., Any],
    *args: Any,
    steps: int | None = None,
    every: int = 1,
    full: bool = False,
    seed: int | None = 0,
    **kwargs: Any,
) -> str:
    """Calls `function(*args, **kwargs)`, tracing every loss-scaled step it takes into `path`; returns the path.

    Seeds Python, NumPy and TensorFlow first (`seed=None` does not) and turns op determinism on for the call. An
    exception from `function` propagates, after the trace is written and marked crashed. A call that takes no
    loss-scaled step raises `ValueError`.
    """
    name = getattr(function, "__qualname__", repr(function))
    with recording(path, name, steps=steps, every=every, full=full, seed=seed) as trace:
        function(*args, **kwargs)
    if not trace.seen:
        raise ValueError(
            f"{name} took no step of a loss-scale optimizer, so there is nothing to compare; record "
            "the function that trains with one (TF 2.4's, lossscale_compat's or Keras's)"
        )
    return os.fspath(path)


def _one_line(error: BaseException) -> str:
    text = [line.strip() for line in str(error).splitlines() if line.strip()]
    name = type(error).__name__
    if not text:
        return name
    return text[-1] if text[-1].startswith(f"{name}: ") else f"{name}: {text[-1]}"  # TF puts the cause last


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lossscale-compat record",
        usage=USAGE,
        description="Runs a program and traces every loss-scaled step it takes.",
    )
    parser.add_argument("-o", "--output", required=True, metavar="TRACE", help="the trace file to write")
    parser.add_argument("--legacy", action="store_true", help="run in legacy mode, as `lossscale-compat run` does")
    parser.add_argument("--steps", type=int, metavar="N", help="stop recording after N steps")
    parser.add_argument("--every", type=int, default=1, metavar="K", help="record every K-th step of each optimizer")
    parser.add_argument("--full", action="store_true", help="record every variable's values too (small models)")
    parser.add_argument("--seed", type=int, default=0, help="the seed for Python, NumPy and TensorFlow (default 0)")
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as `python -m` does")
    return parser


def main(argv: Sequence[str]) -> int:
    """`lossscale-compat record`: runs the program, writes the trace; returns the exit code (docs/equivalence.md)."""
    args = list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else EXIT_USAGE
    own, program = _split(args)
    try:
        options = _parser().parse_args(own)
    except SystemExit as stop:  # argparse has printed its one-line error
        return EXIT_USAGE if stop.code else 0
    problem = _check(options, program)
    if problem:
        print(f"lossscale-compat record: {problem}", file=sys.stderr)
        return EXIT_USAGE
    target = options.module or program[0]
    program_args = program if options.module else program[1:]
    os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")  # read once by TF < 2.9's GPU kernels when TensorFlow starts
    if options.legacy:
        os.environ["LOSSSCALE_COMPAT_LEGACY"] = "1"
        from lossscale_compat.legacy import install

        install()
    from lossscale_compat._program import run_as_main

    errors: list[BaseException] = []
    shown = " ".join([("-m " + target) if options.module else os.path.basename(target), *program_args])
    with _recording_for_cli(options, shown) as trace:
        code = run_as_main(target, bool(options.module), program_args, "record", errors.append)
        if errors or code:
            status = "interrupted" if code == 130 else "crashed" if errors else "exited"
            trace.finish(status, code, _one_line(errors[0]) if errors else f"the program exited with code {code}")
    if code:
        print(
            f"lossscale-compat record: the program stopped (exit {code}) after {trace.seen} loss-scaled step(s); "
            f"{options.output} holds them, marked incomplete",
            file=sys.stderr,
        )
        return code
    if not trace.seen:
        print(
            f"lossscale-compat record: {shown} took no step of a loss-scale optimizer, so there is nothing to "
            "compare; record the program that trains with one (TF 2.4's, lossscale_compat's or Keras's)",
            file=sys.stderr,
        )
        return EXIT_NOTHING_RECORDED
    return 0


@contextlib.contextmanager
def _recording_for_cli(options: argparse.Namespace, shown: str) -> Iterator[Trace]:
    with recording(
        options.output, shown, steps=options.steps, every=options.every, full=options.full, seed=options.seed
    ) as trace:
        yield trace


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    """Record's own options, and the program with its arguments (from SCRIPT, or from -m MODULE on)."""
    takes_value = {"-o", "--output", "--steps", "--every", "--seed"}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m":
            return args[: i + 2], args[i + 2 :]
        if arg == "--":
            return args[:i], args[i + 1 :]
        if not arg.startswith("-"):
            return args[:i], args[i:]
        i += 2 if arg in takes_value else 1
    return args, []


def _check(options: argparse.Namespace, program: list[str]) -> str | None:
    if not options.module and not program:
        return "name the program to record: a SCRIPT, or -m MODULE; " + USAGE
    if not options.module and not os.path.exists(program[0]):
        return f"no such script: {program[0]}"
    if (options.steps is not None and options.steps < 1) or options.every < 1:
        return "--steps and --every take a whole number of at least 1"
    if os.path.isdir(options.output):
        return f"{options.output} is a directory; -o takes the trace file to write"
    if options.legacy and sys.version_info < (3, 9):
        return "--legacy is for today's TensorFlow: on TF 2.4 the program's names exist already; record without it"
    return None
