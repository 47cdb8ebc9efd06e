"""`lossscale-compat record`'s hooks: the loss-scale optimizer classes' step and loss methods, wrapped while recording.

Like `_trace`, it runs on Python 3.8 with TensorFlow 2.4.0 too, and imports nothing of the package.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple

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


class _Hooks:
    """Wraps the loss-scale optimizer classes' methods for the duration of a recording."""

    def __init__(self, trace: Any) -> None:  # a `_trace.Trace`, which imports this module
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
        args, grads, variables = _step_variables(original.__name__, optimizer, args, kwargs)
        index = self.trace.optimizer_index(optimizer, variables)
        loss = self.losses.pop(id(optimizer), None)
        step = _Step(original, optimizer, args, kwargs, index, grads, variables, loss)
        return self._eager_step(step) if self.tf.executing_eagerly() else self._graph_step(step)

    def _eager_step(self, step: _Step) -> Any:
        """An eager step: the scale read before it; after it, the state by one traced function, fetched at once."""
        trace = self.trace
        n = trace.reserve(step.position)
        try:
            return self._eager_kept_step(step, n)
        except BaseException:
            trace.cancel(step.position, n)
            raise

    def _eager_kept_step(self, step: _Step, n: int | None) -> Any:
        tf, trace = self.tf, self.trace
        original, optimizer, args, kwargs, index, grads, variables, loss = step
        if n is None:  # a step the trace does not keep: no digest
            return original(optimizer, *args, **kwargs)
        scale_before = _scale(tf, optimizer)
        result = original(optimizer, *args, **kwargs)
        key = (id(optimizer), tuple(id(v) for v in variables))
        probe = self.probes.get(key)
        if probe is None:  # made after the optimizer's first step (Keras 3 builds its scale there)
            probe = self.probes[key] = _probe(tf, optimizer, variables)
        after = probe().numpy()  # the step's one wait for the device
        before = float(scale_before.numpy())
        # A skip lowers a dynamic scale, except at TF 2.4's and Keras 2's floor of 1: there the gradients tell.
        at_floor = before <= 1.0 and after[0] >= before and _dynamic(optimizer)
        skipped = after[0] < before or (at_floor and not bool(_all_finite(tf, grads).numpy()))
        values = [_value(tf, v).numpy() for v in variables] if trace.full else []
        trace.step(index, n, before, after[0], after[1], _eager_loss(tf, loss), skipped, after[2:], values)
        return result

    def _graph_step(self, step: _Step) -> Any:
        """A traced step: its scale before, and after the update its state, as ops of the step's graph, written by
        one `numpy_function` call.

        With `--every` or `--steps`, a host call first asks the trace whether it keeps the step, and the digest
        and the write run only if it does.
        """
        tf, trace = self.tf, self.trace
        original, optimizer, args, kwargs, index, grads, variables, loss = step
        if _in_xla(tf):
            raise ValueError(XLA_REFUSAL)
        thinned = trace.every > 1 or trace.max_steps is not None
        if thinned:
            n = tf.numpy_function(lambda: _numpy_int64(trace.reserve(index)), [], tf.int64)
            n.set_shape([])
            keep = n >= 0
        before = tf.reshape(_scale(tf, optimizer), [1])  # read before the update (ordered by the variable)
        result = original(optimizer, *args, **kwargs)
        dependencies = [t for t in tf.nest.flatten(result) if isinstance(t, (tf.Tensor, tf.Operation))]
        loss = _graph_loss(tf, loss)
        known = loss is not None  # whether this graph's step has a loss, decided once, when it is traced

        def write_step(n: Any, state: Any, *values: Any) -> Any:
            # state: scale before, scale after, iterations, loss, gradients not finite at the floor, digest
            kept = trace.reserve(index) if n is None else int(n)
            if kept is not None:
                scale_before, scale_after, iterations, loss_value, not_finite = state[:5]
                skipped = scale_after < scale_before or bool(not_finite)
                loss_value = loss_value if known else None
                trace.step(index, kept, scale_before, scale_after, iterations, loss_value, skipped, state[5:], values)
            return True

        def write() -> Any:
            if _dynamic(optimizer):  # the gradients' finiteness is read only where the scale cannot drop
                not_finite = tf.cond(
                    before[0] <= 1.0,
                    lambda: tf.reshape(tf.cast(tf.logical_not(_all_finite(tf, grads)), tf.float64), [1]),
                    lambda: tf.zeros([1], tf.float64),
                )
            else:
                not_finite = tf.zeros([1], tf.float64)
            after = [
                before,
                tf.reshape(_scale(tf, optimizer), [1]),
                tf.reshape(tf.cast(_tensor(optimizer.iterations), tf.float64), [1]),
                tf.reshape(loss if known else tf.zeros([], tf.float64), [1]),
                not_finite,
                _digest(tf, variables),
            ]
            values = [tf.cast(_value(tf, v), tf.float64) for v in variables] if trace.full else []
            state = tf.concat(after, 0)
            if thinned:
                return tf.numpy_function(write_step, [n, state, *values], tf.bool)
            return tf.numpy_function(lambda *inputs: write_step(None, *inputs), [state, *values], tf.bool)

        with tf.control_dependencies(dependencies):  # after the update; stateful, so kept and run in order
            if thinned:
                tf.cond(keep, write, lambda: tf.constant(False))
            else:
                write()
        return result


def _dynamic(optimizer: Any) -> bool:
    """Whether the optimizer's scale is dynamic (Keras 3's class has only a dynamic one): a fixed one never skips."""
    return getattr(optimizer, "dynamic", True) is not False


def _all_finite(tf: Any, grads: Sequence[Any]) -> Any:
    """Whether every gradient of the step is finite, as the loss-scale optimizer checks before applying them."""
    checks = [tf.reduce_all(tf.math.is_finite(getattr(g, "values", g))) for g in grads if g is not None]
    return tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)


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


class _Step(NamedTuple):
    """One hooked step call: the original method, its optimizer and arguments, and what the trace knows of it."""

    original: Callable[..., Any]
    optimizer: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    position: int  # the optimizer's index in the trace
    grads: list[Any]
    variables: list[Any]
    loss: Any  # the loss passed to get_scaled_loss / scale_loss before the step, or None


def _import_if_present(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module this stack does not have, or cannot import: nothing to hook there
        return None


def _step_variables(
    method: str, optimizer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], list[Any], list[Any]]:
    """A step's arguments with a one-pass iterable (`zip`) made a list, its gradients, and the variables it trains."""
    if method == "apply_gradients":
        pairs = list(args[0] if args else kwargs.pop("grads_and_vars"))
        return (pairs, *args[1:]), [g for g, _ in pairs], [v for _, v in pairs]
    grads = list(args[0] if args else kwargs.pop("grads"))
    variables = args[1] if len(args) > 1 else kwargs.get("trainable_variables")
    if variables is None:  # Keras 3's apply(grads) trains the variables it was built with
        variables = getattr(getattr(optimizer, "inner_optimizer", optimizer), "_trainable_variables", [])
    return (grads, *args[1:]), grads, list(variables)


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
    """Each variable's sum and half its sum of squares as one flat float64 tensor [sum0, half0, sum1, half1, ...].

    Two reductions per variable, each one pass over it in its own dtype (float32: no float64 copy, no squared copy;
    `tf.nn.l2_loss` is half the sum of squares), so that the cost stays small beside the step; float32 rounding is
    far below the tolerances `compare` applies. `Trace.step` takes the L2 norms from them, in float64 on the host.
    Traced: eagerly it runs inside `_probe`'s function.
    """
    if not variables:
        return tf.zeros([0], tf.float64)
    return _digest_ops(tf, [_value(tf, v) for v in variables])


def _digest_ops(tf: Any, values: Sequence[Any]) -> Any:
    if len({value.dtype for value in values}) > 1:  # one float64 cast per value
        return tf.concat([_digest_ops(tf, [value]) for value in values], 0)
    reductions = [r for value in values for r in (tf.reduce_sum(value), tf.nn.l2_loss(value))]
    return tf.cast(tf.stack(reductions), tf.float64)


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
