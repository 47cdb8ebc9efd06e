"""`lossscale-compat record`: a trace of every loss-scaled step a program takes, on today's TensorFlow or TF 2.4.0.

This module runs on Python 3.8 with TensorFlow 2.4.0 as well (the old stack a user records on), so it imports
nothing of the package that needs Python 3.9 or a modern Keras, and uses no newer syntax.

A trace is JSON lines: a header, one line per optimizer when it takes its first step, one per recorded step, and
an end line holding the run's status and a SHA-256 of every line before it (docs/equivalence.md).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import platform
import random
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Callable

FORMAT = "lossscale-compat-trace"
VERSION = 1
# Exit codes of `record`, besides the program's own: 2 for a usage error or a program that took no loss-scaled step.
EXIT_USAGE = 2
EXIT_NOTHING_RECORDED = 2
USAGE = (
    "usage: lossscale-compat record -o TRACE [--legacy] [--steps N] [--every K] [--full] [--seed S] "
    "SCRIPT|-m MODULE [ARGS...]"
)

# Where each stack keeps its loss-scale optimizer classes: TF 2.4 and Keras 2 (tf.keras, standalone, tf_keras),
# then Keras 3. Every class of these modules whose name holds "LossScaleOptimizer" is hooked.
_STACK_MODULES = (
    "tensorflow.python.keras.mixed_precision.loss_scale_optimizer",
    "keras.src.mixed_precision.loss_scale_optimizer",
    "keras.mixed_precision.loss_scale_optimizer",
    "tf_keras.src.mixed_precision.loss_scale_optimizer",
    "keras.src.optimizers.loss_scale_optimizer",
)
# lossscale_compat's own classes (Python 3.9+ and TF 2.15+ only).
_OWN_MODULES = ("lossscale_compat._optimizer",)
# A step: `apply_gradients(grads_and_vars)` (TF 2.4, Keras 2, Keras 3) or Keras 3's `apply(grads, variables)`.
_STEP_METHODS = ("apply_gradients", "apply")
# Where the loss enters: TF 2.4 / Keras 2's `get_scaled_loss`, Keras 3's `scale_loss`.
_LOSS_METHODS = ("get_scaled_loss", "scale_loss")
XLA_REFUSAL = (
    "lossscale-compat record cannot record a step compiled with XLA: the compiled step cannot call back to Python "
    "to write the trace. Record it uncompiled: `tf.function(..., jit_compile=False)`, or "
    "`model.compile(..., jit_compile=False)` for `fit` (Keras 3 compiles it with XLA on a GPU unless told not to)"
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
        before: Any,
        after: Any,
        values: Sequence[Any] = (),
    ) -> None:
        """Writes step `n` of optimizer `index` (a number `reserve` gave)."""
        import numpy as np

        with self._lock:
            self.recorded += 1
            digest = np.asarray(after, dtype=np.float64).reshape(-1, 2)
            record = {
                "step": self.recorded - 1,
                "optimizer": index,
                "n": int(n),
                "scale_before": float(scale_before),
                "scale_after": float(scale_after),
                "iterations": int(iterations),
                "skipped": bool(np.array_equal(np.asarray(before), np.asarray(after), equal_nan=True)),
                "loss": None if loss is None else float(loss),
                "sum": [float(s) for s in digest[:, 0]],
                "norm": [float(s) for s in digest[:, 1]],
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
# The hooks: each loss-scale optimizer class's step and loss methods, wrapped at the class level while recording.


class _Hooks:
    """Wraps the loss-scale optimizer classes' methods for the duration of a recording."""

    def __init__(self, trace: Trace) -> None:
        import tensorflow as tf

        self.tf = tf
        self.trace = trace
        self.replaced: list[tuple[type, str, Any]] = []
        self.losses: dict[int, Any] = {}  # id(optimizer) -> the loss last passed to get_scaled_loss / scale_loss
        self.local = threading.local()  # ids of the optimizers inside a hooked step on this thread
        self.probes: dict[tuple[Any, ...], Any] = {}  # (optimizer, variables) ids -> its eager state function

    def classes(self) -> list[type]:
        found = []
        for name in _STACK_MODULES + (() if sys.version_info < (3, 9) else _OWN_MODULES):
            module = _import_if_present(name)
            for value in vars(module).values() if module else ():
                if isinstance(value, type) and "LossScaleOptimizer" in value.__name__:
                    found += [c for c in value.__mro__ if "LossScaleOptimizer" in c.__name__ and c not in found]
        return found

    def install(self) -> None:
        for cls in self.classes():
            for name in _STEP_METHODS + _LOSS_METHODS:
                original = cls.__dict__.get(name)
                if original is None or not callable(original):
                    continue
                wrapper = self._step_hook(original) if name in _STEP_METHODS else self._loss_hook(original)
                setattr(cls, name, wrapper)
                self.replaced.append((cls, name, original))

    def uninstall(self) -> None:
        for cls, name, original in reversed(self.replaced):
            setattr(cls, name, original)
        self.replaced = []

    def _loss_hook(self, original: Callable[..., Any]) -> Callable[..., Any]:
        hooks = self

        @functools.wraps(original)
        def loss_hook(optimizer: Any, loss: Any, *args: Any, **kwargs: Any) -> Any:
            if not callable(loss):
                hooks.losses[id(optimizer)] = loss
            return original(optimizer, loss, *args, **kwargs)

        return loss_hook

    def _step_hook(self, original: Callable[..., Any]) -> Callable[..., Any]:
        hooks = self

        @functools.wraps(original)
        def step_hook(optimizer: Any, *args: Any, **kwargs: Any) -> Any:
            busy = hooks.local.__dict__.setdefault("busy", set())
            if id(optimizer) in busy:  # a step already being recorded (a subclass calling its parent's method)
                return original(optimizer, *args, **kwargs)
            busy.add(id(optimizer))
            try:
                return hooks._recorded_step(original, optimizer, args, kwargs)
            finally:
                busy.discard(id(optimizer))

        return step_hook

    def _recorded_step(
        self, original: Callable[..., Any], optimizer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        args, variables = _step_variables(original.__name__, optimizer, args, kwargs)
        index = self.trace.optimizer_index(optimizer, variables)
        loss = self.losses.pop(id(optimizer), None)
        if self.tf.executing_eagerly():
            return self._eager_step(original, optimizer, args, kwargs, index, variables, loss)
        return self._graph_step(original, optimizer, args, kwargs, index, variables, loss)

    def _eager_step(
        self,
        original: Callable[..., Any],
        optimizer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        index: int,
        variables: list[Any],
        loss: Any,
    ) -> Any:
        """An eager step: the state before and after, read by one traced function each and fetched at once."""
        trace = self.trace
        n = trace.reserve(index)
        try:
            return self._eager_kept_step(original, optimizer, args, kwargs, index, variables, loss, n)
        except BaseException:
            trace.cancel(index, n)
            raise

    def _eager_kept_step(
        self,
        original: Callable[..., Any],
        optimizer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        index: int,
        variables: list[Any],
        loss: Any,
        n: int | None,
    ) -> Any:
        tf, trace = self.tf, self.trace
        if n is None:  # a step the trace does not keep: no digest
            return original(optimizer, *args, **kwargs)
        key = (id(optimizer), tuple(id(v) for v in variables))
        probe = None if trace.full else self.probes.get(key)
        if probe is None:  # the optimizer's first step (Keras 3 builds its scale there), or --full: op by op
            scale_before, before = _scale(tf, optimizer), _digest(tf, variables)
            result = original(optimizer, *args, **kwargs)
            values = [_value(tf, v) for v in variables] if trace.full else []
            trace.step(
                index,
                n,
                scale_before.numpy(),
                _scale(tf, optimizer).numpy(),
                optimizer.iterations.numpy(),
                _eager_loss(tf, loss),
                before.numpy(),
                _digest(tf, variables).numpy(),
                [v.numpy() for v in values],
            )
            if not trace.full:
                self.probes[key] = _probe(tf, optimizer, variables)
            return result
        before = probe()
        result = original(optimizer, *args, **kwargs)
        after = probe().numpy()  # the step's one wait for the device
        before = before.numpy()
        trace.step(index, n, before[0], after[0], after[1], _eager_loss(tf, loss), before[2:], after[2:])
        return result

    def _graph_step(
        self,
        original: Callable[..., Any],
        optimizer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        index: int,
        variables: list[Any],
        loss: Any,
    ) -> Any:
        """A traced step: its digests are ops of the step's graph, written by one `numpy_function` after the update.

        With `--every` or `--steps`, a host call first asks the trace whether it keeps the step, and the digests
        and the write run only if it does.
        """
        tf, trace = self.tf, self.trace
        if _in_xla(tf):
            raise ValueError(XLA_REFUSAL)
        thinned = trace.every > 1 or trace.max_steps is not None
        if thinned:
            n = tf.numpy_function(lambda: _numpy_int64(trace.reserve(index)), [], tf.int64)
            n.set_shape([])
            keep = n >= 0
            before = tf.cond(
                keep,
                lambda: _scale_and_digest(tf, optimizer, variables),
                lambda: tf.zeros([1 + 2 * len(variables)], tf.float64),
            )
        else:
            before = _scale_and_digest(tf, optimizer, variables)
        result = original(optimizer, *args, **kwargs)
        dependencies = [t for t in tf.nest.flatten(result) if isinstance(t, (tf.Tensor, tf.Operation))]
        loss = _graph_loss(tf, loss)
        known = loss is not None  # whether this graph's step has a loss, decided once, when it is traced

        width = 2 * len(variables)

        def write_step(n: Any, state: Any, *values: Any) -> Any:
            # state: scale before, digest before, scale after, iterations, loss, digest after
            kept = trace.reserve(index) if n is None else int(n)
            if kept is not None:
                scale_after, iterations, loss_value = state[1 + width : 4 + width]
                trace.step(
                    index,
                    kept,
                    state[0],
                    scale_after,
                    iterations,
                    loss_value if known else None,
                    state[1 : 1 + width],
                    state[4 + width :],
                    values,
                )
            return True

        def write() -> Any:
            after = [
                tf.reshape(_scale(tf, optimizer), [1]),
                tf.reshape(tf.cast(_tensor(optimizer.iterations), tf.float64), [1]),
                tf.reshape(loss if known else tf.zeros([], tf.float64), [1]),
                _digest(tf, variables),
            ]
            values = [tf.cast(_value(tf, v), tf.float64) for v in variables] if trace.full else []
            state = tf.concat([before, *after], 0)
            if thinned:
                return tf.numpy_function(write_step, [n, state, *values], tf.bool)
            return tf.numpy_function(lambda *inputs: write_step(None, *inputs), [state, *values], tf.bool)

        with tf.control_dependencies(dependencies):  # after the update; stateful, so kept and run in order
            if thinned:
                tf.cond(keep, write, lambda: tf.constant(False))
            else:
                write()
        return result


def _in_xla(tf: Any) -> bool:
    """Whether the step is being traced for XLA (`jit_compile=True`); False where TensorFlow cannot say."""
    control_flow_util = _import_if_present("tensorflow.python.ops.control_flow_util")
    in_xla = getattr(control_flow_util, "GraphOrParentsInXlaContext", None)
    return in_xla is not None and bool(in_xla(tf.compat.v1.get_default_graph()))


def _numpy_int64(n: int | None) -> Any:
    import numpy as np

    return np.int64(-1 if n is None else n)


def _probe(tf: Any, optimizer: Any, variables: Sequence[Any]) -> Any:
    """A traced function of no arguments: [scale, iterations, digest...] as one float64 tensor, for eager steps."""
    variables = list(variables)

    def state() -> Any:
        iterations = tf.reshape(tf.cast(_tensor(optimizer.iterations), tf.float64), [1])
        return tf.concat([tf.reshape(_scale(tf, optimizer), [1]), iterations, _digest(tf, variables)], 0)

    return tf.function(state, autograph=False)


def _scale_and_digest(tf: Any, optimizer: Any, variables: Sequence[Any]) -> Any:
    return tf.concat([tf.reshape(_scale(tf, optimizer), [1]), _digest(tf, variables)], 0)


def _import_if_present(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module this stack does not have, or cannot import: nothing to hook there
        return None


def _step_variables(
    method: str, optimizer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], list[Any]]:
    """The variables a step trains, and its arguments with a one-pass iterable (`zip`) made a list."""
    if method == "apply_gradients":
        pairs = list(args[0] if args else kwargs.pop("grads_and_vars"))
        return (pairs, *args[1:]), [v for _, v in pairs]
    grads = list(args[0] if args else kwargs.pop("grads"))
    variables = args[1] if len(args) > 1 else kwargs.get("trainable_variables")
    if variables is None:  # Keras 3's apply(grads) trains the variables it was built with
        variables = getattr(getattr(optimizer, "inner_optimizer", optimizer), "_trainable_variables", [])
    return (grads, *args[1:]), list(variables)


def _tensor(value: Any) -> Any:
    """A Keras 3 variable's TensorFlow variable; anything else as it is."""
    inner = getattr(value, "value", None)
    return value if inner is None or callable(inner) else inner


def _value(tf: Any, variable: Any) -> Any:
    return tf.convert_to_tensor(_tensor(variable))


def _scale(tf: Any, optimizer: Any) -> Any:
    """The current loss scale as a float64 tensor: `loss_scale` (TF 2.4, Keras 2, ours), Keras 3's `dynamic_scale`."""
    for attribute in ("loss_scale", "dynamic_scale", "initial_scale"):
        try:
            value = getattr(optimizer, attribute)
        except (AttributeError, ValueError):  # Keras 3's scale variable exists once the optimizer is built
            continue
        if value is None:
            continue
        if callable(value) and not tf.is_tensor(value) and not hasattr(value, "numpy"):  # TF 2.4's LossScale object
            value = value()
        return tf.cast(tf.convert_to_tensor(_tensor(value)), tf.float64)
    return tf.constant(1.0, tf.float64)


def _digest(tf: Any, variables: Sequence[Any]) -> Any:
    """Each variable's sum and L2 norm as one flat float64 tensor [sum0, norm0, sum1, norm1, ...].

    Reduced in the variable's own dtype (float32: a pass over each variable, no float64 copy of it), so that the
    cost stays small beside the step; float32 rounding is far below the tolerances `compare` applies. Eagerly the
    reductions run as one traced function rather than op by op.
    """
    if not variables:
        return tf.zeros([0], tf.float64)
    if tf.executing_eagerly():
        return _eager_digest(tf)([_tensor(v) for v in variables])
    return _digest_ops(tf, [_value(tf, v) for v in variables])


def _digest_ops(tf: Any, values: Sequence[Any]) -> Any:
    """Each value's sum and L2 norm, interleaved, as float64: the ops of `tf.norm`, without its reshapes.

    The square root is taken of each scalar (TF 2.4's vectorised float32 square root rounds differently).
    """
    if len({value.dtype for value in values}) > 1:  # one float64 cast per value
        return tf.concat([_digest_ops(tf, [value]) for value in values], 0)
    sums = tf.stack([tf.reduce_sum(value) for value in values])
    norms = tf.stack([tf.sqrt(tf.reduce_sum(value * value)) for value in values])
    return tf.cast(tf.reshape(tf.stack([sums, norms], 1), [-1]), tf.float64)


_EAGER_DIGEST: list[Any] = []


def _eager_digest(tf: Any) -> Any:
    """`_digest_ops` as a tf.function, made once (it traces once per list of variables)."""
    if not _EAGER_DIGEST:
        digest = tf.function(lambda values: _digest_ops(tf, [tf.convert_to_tensor(v) for v in values]), autograph=False)
        _EAGER_DIGEST.append(digest)
    return _EAGER_DIGEST[0]


def _graph_loss(tf: Any, loss: Any) -> Any:
    """The step's loss as a float64 scalar of this graph; None when it is not known here."""
    if loss is None or (tf.is_tensor(loss) and getattr(loss, "graph", None) is not tf.compat.v1.get_default_graph()):
        return None
    return tf.reduce_mean(tf.cast(loss, tf.float64))


def _eager_loss(tf: Any, loss: Any) -> float | None:
    if loss is None or (tf.is_tensor(loss) and not hasattr(loss, "numpy")):
        return None
    if tf.is_tensor(loss) and loss.shape.rank == 0 and loss.dtype.is_floating:  # its mean is itself, exactly
        return float(loss.numpy())
    return float(tf.reduce_mean(tf.cast(loss, tf.float64)).numpy())


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
