"""Behaviour equivalence: whether two loss-scale optimizers train identically, step by step.

Both optimizers train copies of the same variables on the same synthetic gradient stream, with inf and
NaN injected at chosen steps. The loss is `sum(g * v)`, so the gradient of each variable is exactly the
stream's `g`; each side scales that loss, takes gradients and applies them in its own idiom:

- TF 2.4 (ours, and Keras 2's class): `get_scaled_loss` -> tape -> `get_unscaled_gradients` -> `apply_gradients`;
- Keras 3 (its `LossScaleOptimizer`, or a plain optimizer with `loss_scale_factor`): `scale_loss` -> tape ->
  `apply_gradients` with the scaled gradients, which it unscales itself;
- a plain optimizer without loss scaling: tape -> `apply_gradients`.

After every step it records the loss scale, whether the step was skipped (no variable changed), `iterations`
and every variable, and reports the first step where the two sides differ.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from lossscale_compat import _flavour

NONFINITE = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan}
DEFAULT_SHAPES: tuple[tuple[int, ...], ...] = ((3,), (2, 2))
_NO_GROWTH_STEPS = 3  # growth steps assumed for a stream when neither side has a dynamic scale
_MAX_DEFAULT_STEPS = 100_000  # the default schedule's gradients are made up front: bound what it may ask for

_ITERATIONS_HINT = (
    "Keras 3's own LossScaleOptimizer does not count a skipped step in `iterations`; TF 2.4 did "
    "(and lossscale_compat's optimizers do), so schedules and Adam's bias correction drift."
)
_FROZEN_ITERATIONS_HINT = (
    "This Keras's own LossScaleOptimizer never advances its `iterations` (Keras 3.0-3.6 keep a counter of their own "
    "that no step touches; its `inner_optimizer.iterations` counts the applied steps); TF 2.4's counted every step, "
    "as lossscale_compat's optimizers do."
)
_FLOOR_HINT = "Keras 3's own LossScaleOptimizer halves the scale below 1; TF 2.4 never went below 1."
_INF_HINT = "Keras 3's own LossScaleOptimizer doubles the scale even into inf; TF 2.4 grew it only if finite."


@dataclasses.dataclass
class _Record:
    """What one side looked like after one step."""

    loss_scale: float
    skipped: bool
    iterations: int
    variables: list[np.ndarray]


def default_nonfinite(growth_steps: int) -> dict[int, str]:
    """Growth after `growth_steps` good steps, a skip, two good steps, two skips back to back."""
    g = growth_steps
    return {g: "inf", g + 3: "nan", g + 4: "inf"}


def default_steps(growth_steps: int) -> int:
    """Long enough for the default schedule's recovery to grow the scale once more."""
    return 2 * growth_steps + 5


def assert_behaviour_equivalent(
    old: Any,
    new: Any,
    *,
    steps: int | None = None,
    nonfinite: Mapping[int, str] | None = None,
    variables: Sequence[Any] = DEFAULT_SHAPES,
    seed: int = 0,
    rtol: float = 0.0,
    atol: float = 0.0,
    jit_compile: bool = False,
) -> None:
    """Raises AssertionError at the first step where two optimizers train differently.

    `old` and `new` are each an unused optimizer or a zero-argument function that builds one. `nonfinite`
    maps a step (0-based) to "inf", "nan" or "-inf", put into the first element of the first gradient; by
    default the schedule is `default_nonfinite(G)` over `default_steps(G)` steps, where G is the smaller
    `dynamic_growth_steps` of the two sides (3 if neither is dynamic). `variables` are shapes or initial
    values. Values are compared exactly unless `rtol`/`atol` are given.
    """
    difference = behaviour_difference(
        old,
        new,
        steps=steps,
        nonfinite=nonfinite,
        variables=variables,
        seed=seed,
        rtol=rtol,
        atol=atol,
        jit_compile=jit_compile,
    )
    if difference:
        raise AssertionError(difference)


def behaviour_difference(
    old: Any,
    new: Any,
    *,
    steps: int | None = None,
    nonfinite: Mapping[int, str] | None = None,
    variables: Sequence[Any] = DEFAULT_SHAPES,
    seed: int = 0,
    rtol: float = 0.0,
    atol: float = 0.0,
    jit_compile: bool = False,
) -> str:
    """The first step where two optimizers train differently, as a message; empty if they train alike."""
    if not (_tolerance(rtol) and _tolerance(atol)):
        raise ValueError(
            f"`rtol` and `atol` must be numbers of at least 0, but got: rtol={rtol!r}, atol={atol!r}; with NaN no "
            "difference is ever beyond them. Leave them out to compare exactly."
        )
    old_optimizer, new_optimizer = _optimizer(old, "old"), _optimizer(new, "new")
    if old_optimizer is new_optimizer:
        raise ValueError(
            "Both sides are the same optimizer object. Pass two optimizers, or two functions that each build one."
        )
    growth = [g for g in (_growth_steps(old_optimizer), _growth_steps(new_optimizer)) if g is not None]
    growth_steps = min(growth) if growth else _NO_GROWTH_STEPS
    if nonfinite is None:
        nonfinite = default_nonfinite(growth_steps)
    if steps is None:
        steps = max(default_steps(growth_steps), max(nonfinite, default=-1) + 1)
        if steps > _MAX_DEFAULT_STEPS:
            raise ValueError(
                f"dynamic_growth_steps={growth_steps} makes the default schedule {steps} steps long, over "
                f"{_MAX_DEFAULT_STEPS:,}. Pass `steps` and `nonfinite` for a shorter schedule, or build both "
                "sides with a smaller dynamic_growth_steps."
            )
    initial, stream = _inputs(steps, nonfinite, variables, seed)
    old_run = _run(old_optimizer, initial, stream, jit_compile)
    new_run = _run(new_optimizer, initial, stream, jit_compile)
    for step in range(steps):  # in lockstep, a chunk at a time: a difference at step 3 of 4005 costs one chunk
        a, b = next(old_run), next(new_run)
        lines = _differences(a, b, rtol, atol)
        if lines:
            keras3 = (_idiom(old_optimizer) == "keras3", _idiom(new_optimizer) == "keras3")
            frozen = (
                _flavour.iterations_never_advance(old_optimizer),
                _flavour.iterations_never_advance(new_optimizer),
            )
            return _message(step, steps, nonfinite.get(step), lines, a, b, keras3, frozen)
    return ""


def trajectory(
    optimizer: Any,
    *,
    steps: int,
    nonfinite: Mapping[int, str],
    variables: Sequence[Any] = DEFAULT_SHAPES,
    seed: int = 0,
    jit_compile: bool = False,
) -> list[dict[str, Any]]:
    """What `optimizer` did at each step of the stream the check would drive it with (for goldens)."""
    initial, stream = _inputs(steps, nonfinite, variables, seed)
    return [
        dataclasses.asdict(record) for record in _run(_optimizer(optimizer, "optimizer"), initial, stream, jit_compile)
    ]


def _inputs(
    steps: int, nonfinite: Mapping[int, str], variables: Sequence[Any], seed: int
) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    initial = [_initial_value(spec, rng) for spec in variables]
    return initial, _gradient_stream(initial, steps, nonfinite, rng)


def _optimizer(side: Any, label: str) -> Any:
    optimizer = side
    if not callable(getattr(side, "apply_gradients", None)) and callable(side):
        optimizer = side()
    if not callable(getattr(optimizer, "apply_gradients", None)):
        raise TypeError(f"Expected an optimizer or a function that builds one for `{label}`, but got: {side!r}.")
    if _is_built(optimizer):
        raise ValueError(
            f"The `{label}` optimizer has already been used, so its state would differ from the "
            "other's. Pass a new optimizer, or a function that builds one."
        )
    return optimizer


def _is_built(optimizer: Any) -> bool:
    inner = getattr(optimizer, "inner_optimizer", None)
    return _flavour.optimizer_is_built(optimizer) or (inner is not None and _flavour.optimizer_is_built(inner))


def _growth_steps(optimizer: Any) -> int | None:
    if not getattr(optimizer, "dynamic", True):
        return None
    growth = getattr(optimizer, "dynamic_growth_steps", None)
    return None if growth is None else int(growth)


def _initial_value(spec: Any, rng: np.random.Generator) -> np.ndarray:
    if isinstance(spec, (tuple, list)) and all(isinstance(n, int) for n in spec):
        return rng.standard_normal(spec).astype(np.float32)
    return np.asarray(spec, dtype=np.float32)


def _gradient_stream(
    initial: list[np.ndarray], steps: int, nonfinite: Mapping[int, str], rng: np.random.Generator
) -> list[list[np.ndarray]]:
    if not _whole(steps) or steps < 1:
        raise ValueError(
            f"`steps` must be a whole number of at least 1, but got: {steps!r}; with no step, any two optimizers "
            "would pass. Leave `steps` out for the default schedule, or pass the number of steps to train."
        )
    if steps > _MAX_DEFAULT_STEPS:
        raise ValueError(
            f"`steps` must be at most {_MAX_DEFAULT_STEPS:,}, but got: {steps:,}; every step's gradients are made up "
            "front. Pass fewer `steps`: the default schedule covers a dynamic_growth_steps up to about 50,000."
        )
    if not isinstance(nonfinite, Mapping):
        raise TypeError(
            f"`nonfinite` must map a step to 'inf', 'nan' or '-inf', but got: {nonfinite!r}. Pass a dict such as "
            "{3: 'nan'}, or {} for no non-finite gradient."
        )
    if not initial:
        raise ValueError("`variables` holds no variable, so there is nothing to train. Pass shapes such as [(4, 2)].")
    unknown = {kind for kind in nonfinite.values() if kind not in NONFINITE}
    if unknown:
        raise ValueError(f"`nonfinite` values must be one of {sorted(NONFINITE)}, but got: {sorted(unknown)}.")
    outside = sorted(repr(step) for step in nonfinite if not _whole(step) or not 0 <= step < steps)
    if outside:
        raise ValueError(
            f"`nonfinite` steps must be whole numbers from 0 to {steps - 1} (there are {steps} steps), but got: "
            f"{', '.join(outside)}, which would never be injected. Pass more `steps`, or leave `steps` out: by "
            "default it covers every step of `nonfinite`."
        )
    stream = [[(rng.standard_normal(v.shape) * 0.1).astype(np.float32) for v in initial] for _ in range(steps)]
    for step, kind in nonfinite.items():
        stream[step][0].flat[0] = NONFINITE[kind]
    return stream


def _tolerance(value: object) -> bool:
    """Whether `value` is a number of at least 0 (NaN is not)."""
    return isinstance(value, numbers.Real) and float(value) >= 0


def _whole(value: object) -> bool:
    """Whether `value` is a whole number (numpy's too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _idiom(optimizer: Any) -> str:
    """How code of this optimizer's era drives it: "tf24", "keras3" or "plain"."""
    if callable(getattr(optimizer, "get_unscaled_gradients", None)) and callable(
        getattr(optimizer, "get_scaled_loss", None)
    ):
        return "tf24"
    if callable(getattr(optimizer, "scale_loss", None)):
        return "keras3"
    return "plain"


def _scale(optimizer: Any, idiom: str, loss: tf.Tensor) -> tf.Tensor:
    if idiom == "tf24":
        return optimizer.get_scaled_loss(loss)
    if idiom == "keras3":
        return optimizer.scale_loss(loss)
    return loss


_CHUNK = 64  # steps per call: one call per step would cost more in Python than the step itself


def _make_chunk(optimizer: Any, variables: list[tf.Variable], jit_compile: bool) -> Callable:
    """Training steps `start` .. `start + count - 1` of the stream, in a graph loop; one packed record per step."""
    idiom = _idiom(optimizer)

    def step(index: tf.Tensor, stream: list[tf.Tensor]) -> tf.Tensor:
        gradients = [gradient[index] for gradient in stream]
        before = [tf.identity(v) for v in variables]
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(g * v) for g, v in zip(gradients, variables)])
            scaled_loss = _scale(optimizer, idiom, loss)
        grads = tape.gradient(scaled_loss, variables)
        if idiom == "tf24":
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables))
        after = [tf.identity(v) for v in variables]
        changed = tf.reduce_any(tf.stack([tf.reduce_any(tf.not_equal(b, a)) for b, a in zip(before, after)]))
        scale = _scale(optimizer, idiom, tf.constant(1.0))
        # One vector per step, so reading a chunk costs one device-to-host copy: float64 holds every field exactly.
        fields = [
            tf.cast(tf.reshape(value, [-1]), tf.float64)
            for value in (scale, tf.logical_not(changed), optimizer.iterations, *after)
        ]
        return tf.concat(fields, axis=0)

    def chunk(start: tf.Tensor, count: tf.Tensor, stream: list[tf.Tensor]) -> tf.Tensor:
        records = tf.TensorArray(tf.float64, size=count)
        for offset in tf.range(count):
            records = records.write(offset, step(start + offset, stream))
        return records.stack()

    return tf.function(chunk, jit_compile=True) if jit_compile else tf.function(chunk)


def _run(
    optimizer: Any, initial: list[np.ndarray], stream: list[list[np.ndarray]], jit_compile: bool
) -> Iterator[_Record]:
    """Trains a copy of the variables with `optimizer`, one step per `next` (computed a chunk at a time)."""
    variables = [tf.Variable(value) for value in initial]
    _build(optimizer, variables)
    chunk = _make_chunk(optimizer, variables, jit_compile)
    by_variable = [tf.constant(np.stack([gradients[i] for gradients in stream])) for i in range(len(initial))]
    sizes = np.cumsum([3] + [v.size for v in initial])
    for start in range(0, len(stream), _CHUNK):
        count = min(_CHUNK, len(stream) - start)
        for packed in chunk(tf.constant(start), tf.constant(count), by_variable).numpy():
            values = [
                packed[a:b].astype(np.float32).reshape(v.shape) for a, b, v in zip(sizes[:-1], sizes[1:], initial)
            ]
            yield _Record(float(packed[0]), bool(packed[1]), int(packed[2]), values)


def _build(optimizer: Any, variables: list[tf.Variable]) -> None:
    """Creates the optimizer's state before the step is traced, which otherwise traces twice."""
    build = getattr(optimizer, "build", None)
    if callable(build):
        build(variables)


def _differences(a: _Record, b: _Record, rtol: float, atol: float) -> list[str]:
    lines = []
    if not _close(np.float32(a.loss_scale), np.float32(b.loss_scale), rtol, atol):
        lines.append(f"loss scale: {a.loss_scale!r} (old) != {b.loss_scale!r} (new)")
    if a.skipped != b.skipped:
        lines.append(f"skipped: {a.skipped} (old) != {b.skipped} (new)")
    if a.iterations != b.iterations:
        lines.append(f"iterations: {a.iterations} (old) != {b.iterations} (new)")
    if len(a.variables) != len(b.variables):
        lines.append(f"number of variables: {len(a.variables)} (old) != {len(b.variables)} (new)")
        return lines
    for index, (x, y) in enumerate(zip(a.variables, b.variables)):
        if not _close(x, y, rtol, atol):
            with np.errstate(invalid="ignore"):
                where = np.unravel_index(
                    np.nanargmax(np.where(np.isnan(x) != np.isnan(y), np.inf, np.abs(x - y))), x.shape
                )
            lines.append(f"variables[{index}]{list(where)}: {x[where]!r} (old) != {y[where]!r} (new)")
    return lines


def _close(x: Any, y: Any, rtol: float, atol: float) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    if rtol == 0 and atol == 0:
        return bool(np.array_equal(x, y, equal_nan=True))
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def _message(
    step: int,
    steps: int,
    injected: str | None,
    lines: list[str],
    a: _Record,
    b: _Record,
    keras3: tuple[bool, bool],
    frozen: tuple[bool, bool] = (False, False),
) -> str:
    """The report of the first differing step.

    `keras3` says which sides follow Keras 3's own algorithm; `frozen`, which never advance their `iterations`.
    """
    gradients = f"{injected} injected into a gradient" if injected else "finite gradients"
    text = (
        f"The optimizers train differently: first at step {step} of {steps} (0-based; {gradients}):\n  "
        + "\n  ".join(lines)
    )
    records = (a, b)
    lagging = [i for i in (0, 1) if records[i].iterations < records[1 - i].iterations]
    below_one = [i for i in (0, 1) if records[i].loss_scale < 1 <= records[1 - i].loss_scale]
    infinite = [i for i in (0, 1) if np.isinf(records[i].loss_scale) and not np.isinf(records[1 - i].loss_scale)]
    hints = [
        hint
        for hint, sides in ((_ITERATIONS_HINT, lagging), (_FLOOR_HINT, below_one), (_INF_HINT, infinite))
        if any(keras3[i] for i in sides) and (hint is not _ITERATIONS_HINT or a.skipped or b.skipped)
    ]
    if any(frozen[i] for i in lagging):  # it lags for another reason than the skipped steps
        hints = [_FROZEN_ITERATIONS_HINT] + [hint for hint in hints if hint is not _ITERATIONS_HINT]
    return "\n".join([text, *hints])
