"""TF 2.4's `LossScale`, `FixedLossScale` and `DynamicLossScale`, with `get`/`serialize`/`deserialize`."""

from __future__ import annotations

import abc
import math
import warnings
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour, _mapping
from lossscale_compat._deprecation import _first_frame_outside_package, dynamic_difference, warn_deprecated


class LossScale(_flavour.Trackable, metaclass=abc.ABCMeta):
    """Base class of TF 2.4 loss scales: `__call__` gives the scale, `update(grads)` adjusts it."""

    _warns_on_construction = True  # False for the optimizer's internal state, which users never make

    @abc.abstractmethod
    def __call__(self) -> tf.Tensor:
        """Returns the current loss scale as a scalar float32 tensor."""

    @abc.abstractmethod
    def update(self, grads: Any) -> tuple[Any, Any]:
        """Updates the scale from `grads`; returns `(update_op, should_apply_gradients)`."""

    @abc.abstractmethod
    def get_config(self) -> dict[str, Any]:
        """Returns the constructor arguments as a dict."""

    @classmethod
    def from_config(cls, config: Any) -> LossScale:
        """Creates a loss scale from `get_config()` output."""
        if not isinstance(config, dict):
            keys = _mapping.PARAMETERS.get(cls.__name__)
            raise TypeError(
                f"A {cls.__name__} config is a dict of its constructor arguments"
                + (f" ({', '.join(keys)})" if keys else "")
                + f", but got {config!r} of type {type(config).__name__}. Pass what `lossscale_compat.serialize` "
                f"returned for a {cls.__name__} (its 'config' is that dict)."
            )
        return cls(**config)

    def _add_weight(self, name: str, initial_value: Any, dtype: tf.DType) -> tf.Variable:
        """Creates a non-trainable state variable, checkpointed under `name` as in TF 2.4."""
        variable = tf.Variable(
            initial_value,
            name=name,
            dtype=dtype,
            trainable=False,
            synchronization=tf.VariableSynchronization.AUTO,
            aggregation=tf.VariableAggregation.NONE,
        )
        self._track_trackable(variable, name=name)
        self.__dict__.setdefault("_weights", {})[name] = variable  # for `get_loss_scale_weights`, in creation order
        return variable


def get_loss_scale_weights(loss_scale: LossScale) -> Any:
    """TF 2.3's `get_loss_scale_weights` (gone in 2.4): the loss scale's state variables, in creation order."""
    if not isinstance(loss_scale, LossScale):
        raise AttributeError(  # TF 2.3 raised AttributeError (no `_weights`) too
            f"get_loss_scale_weights() takes a loss scale (lossscale_compat.DynamicLossScale, FixedLossScale, or "
            f"TensorFlow's own), but got {loss_scale!r} of type {type(loss_scale).__name__}. Instead, pass the "
            "LossScale object itself, e.g. `lossscale_compat.DynamicLossScale()`."
        )
    return getattr(loss_scale, "_weights", {}).values()


class FixedLossScale(LossScale):
    """A loss scale that never changes."""

    def __init__(self, loss_scale_value: int | float):
        super().__init__()
        check_fixed_loss_scale_value(loss_scale_value)
        self._loss_scale_value = float(loss_scale_value)
        if not math.isfinite(self._loss_scale_value) or self._loss_scale_value > FLOAT32_MAX:
            over = ""
            if math.isfinite(self._loss_scale_value):
                over = " (over float32's largest number, about 3.4e38: it becomes inf; TF 2.4 raised on reading it)"
            warnings.warn(
                f"FixedLossScale({self._loss_scale_value}) makes every scaled loss and gradient non-finite{over}, "
                "and a fixed scale skips no step, so the weights become NaN at the first step. TF 2.4 accepted it "
                "and so does this class; instead, pass a finite scale such as 128.",
                UserWarning,
                stacklevel=_first_frame_outside_package(),
            )
        if self._warns_on_construction:
            warn_deprecated(_fixed_replacement(self._loss_scale_value), "FixedLossScale")

    def __call__(self) -> tf.Tensor:
        return tf.constant(self._loss_scale_value, dtype=tf.float32)

    def update(self, grads: Any) -> tuple[Any, bool]:
        """Ignores `grads`; returns `(no_op, True)` so callers can skip building a cond."""
        del grads
        return tf.no_op(), True

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"

    def get_config(self) -> dict[str, Any]:
        return {"loss_scale_value": self._loss_scale_value}


def check_fixed_loss_scale_value(value: Any) -> None:
    """Raises ValueError, as TF 2.4 did, unless `value` is a Python int or float of at least 1."""
    # bool and numpy.float64 pass this check, as they did in TF 2.4.
    if not isinstance(value, (int, float)):
        raise ValueError(
            f"loss_scale_value must be a Python int or float, but got {value!r} of type "
            f"{type(value).__name__}. Pass a Python number instead, e.g. `float(value)`."
        )
    if value < 1:
        raise ValueError(
            f"loss_scale_value must be at least 1, but got {value!r}. A scale below 1 shrinks "
            "gradients towards underflow; use `FixedLossScale(1)` for no scaling."
        )


# The largest float32: a scale over it is inf once training reads it.
FLOAT32_MAX = 3.4028234663852886e38


def _warn_unsound(initial_loss_scale: float, multiplier: float) -> None:
    """Warns (once per call site) about a NaN, infinite or non-positive initial scale, or a multiplier below 1."""
    if math.isfinite(initial_loss_scale) and initial_loss_scale <= 0:
        warnings.warn(
            f"DynamicLossScale(initial_loss_scale={initial_loss_scale}) is not positive: a scale of 0 zeroes every "
            "gradient and a negative one flips its sign, and growing it keeps it so until the first non-finite step "
            "sets it to 1. TF 2.4 accepted it and so does this class; instead, pass a positive initial_loss_scale "
            "such as 2 ** 15.",
            UserWarning,
            stacklevel=_first_frame_outside_package(),
        )
    if not math.isfinite(initial_loss_scale):
        warnings.warn(
            f"DynamicLossScale(initial_loss_scale={initial_loss_scale}) never recovers: the scale stays "
            f"{initial_loss_scale} and every step is skipped. TF 2.4 accepted it and so does this class; "
            "instead, pass a finite initial_loss_scale such as 2 ** 15.",
            UserWarning,
            stacklevel=_first_frame_outside_package(),
        )
    if not multiplier >= 1:
        warnings.warn(
            f"DynamicLossScale(multiplier={multiplier}) runs backwards: good steps shrink the scale and "
            "overflows grow it. TF 2.4 accepted it and so does this class; instead, pass multiplier=2.",
            UserWarning,
            stacklevel=_first_frame_outside_package(),
        )


def _coerced(kind: type, name: str, value: Any, example: str) -> Any:
    """`kind(value)`, as TF 2.4 coerced it; what it cannot convert raises TF 2.4's error type, saying which argument."""
    try:
        return kind(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise type(error)(
            f"DynamicLossScale's {name} must be {'a whole number' if kind is int else 'a number'}, but got "
            f"{value!r} ({error}). Instead, pass a number such as {example}."
        ) from None


class DynamicLossScale(LossScale):
    """A loss scale that shrinks on non-finite gradients and grows after a run of finite ones.

    On each `update(grads)`, with `good_steps` counting consecutive finite steps:

        if all gradients are finite:
            if good_steps + 1 >= increment_period:
                new = scale * multiplier          # in float32
                if new is finite: scale = new     # never clamped: an overflowing growth is dropped
                good_steps = 0
            else:
                good_steps += 1
        else:
            scale = max(scale / multiplier, 1)    # the only floor, so a scale below 1 rises to 1
            good_steps = 0

    Under a `tf.distribute` strategy, `update` runs in cross-replica context and a
    non-finite gradient on any replica counts as a non-finite step for all of them.
    """

    def __init__(
        self,
        initial_loss_scale: int | float = 2**15,
        increment_period: int = 2000,
        multiplier: int | float = 2.0,
    ):
        super().__init__()
        # Coerced, never validated, exactly as TF 2.4 did; settings that defeat loss scaling are warned about.
        self._initial_loss_scale = _coerced(float, "initial_loss_scale", initial_loss_scale, "2 ** 15")
        self._increment_period = _coerced(int, "increment_period", increment_period, "2000")
        self._multiplier = _coerced(float, "multiplier", multiplier, "2.0")
        if isinstance(increment_period, float) and increment_period != self._increment_period:
            warnings.warn(
                f"DynamicLossScale(increment_period={increment_period}) is truncated to {self._increment_period} "
                "good steps, as TF 2.4 did; instead, pass a whole number of steps.",
                UserWarning,
                stacklevel=_first_frame_outside_package(),
            )
        _warn_unsound(self._initial_loss_scale, self._multiplier)
        self._current_loss_scale = self._add_weight("current_loss_scale", self._initial_loss_scale, tf.float32)
        self._num_good_steps = self._add_weight("good_steps", 0, tf.int64)
        if self._warns_on_construction:
            warn_deprecated(_dynamic_replacement(self), "DynamicLossScale")

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self) -> tf.Tensor:
        return tf.convert_to_tensor(self._current_loss_scale)

    def update(self, grads: Any) -> tuple[Any, tf.Tensor]:
        """Adjusts the scale from `grads`; returns `(update_op, should_apply)` with a bool tensor."""
        is_finite = all_replicas_finite(grads)
        return self._apply(is_finite), is_finite

    def _assignable_state(self) -> tuple[Any, Any]:
        """(scale, good steps) as variables whose `assign` returns the assignment."""
        return self._current_loss_scale, self._num_good_steps

    def _apply(self, is_finite: tf.Tensor) -> Any:
        return tf.cond(is_finite, self._update_finite, self._update_non_finite)

    def _update_finite(self) -> Any:
        """The update of a finite step: grow after `increment_period` good steps, else count one more."""
        scale, good_steps = self._assignable_state()

        def grow() -> Any:
            grown = scale * self._multiplier
            # An overflowing growth keeps the scale: selected, not branched on, so it costs no conditional.
            return tf.group(scale.assign(tf.where(tf.math.is_finite(grown), grown, scale)), good_steps.assign(0))

        def count() -> Any:
            counted = good_steps.assign_add(1)
            # In eager, TF 2.4 returned the counter's assign result here and None on the other paths.
            return counted if tf.executing_eagerly() else tf.group(counted)

        return tf.cond(good_steps + 1 >= self._increment_period, grow, count)

    def _update_non_finite(self) -> Any:
        """The update of a non-finite step: halve the scale (never below 1) and restart the count."""
        scale, good_steps = self._assignable_state()
        return tf.group(good_steps.assign(0), scale.assign(tf.maximum(scale / self._multiplier, 1.0)))

    def __repr__(self) -> str:
        settings = (
            f"initial_loss_scale={self._initial_loss_scale}, "
            f"increment_period={self._increment_period}, multiplier={self._multiplier}"
        )
        if tf.executing_eagerly():
            return (
                f"DynamicLossScale(current_loss_scale={self._current_loss_scale.numpy()}, "
                f"num_good_steps={self._num_good_steps.numpy()}, {settings})"
            )
        return f"DynamicLossScale({settings})"

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_loss_scale": self._initial_loss_scale,
            "increment_period": self._increment_period,
            "multiplier": self._multiplier,
        }


# TensorFlow still ships its own TF 2.4 classes under `tf.compat.v1.mixed_precision`; legacy
# code makes them, so they count as ours in every isinstance check (ours and users').
for _name, _tf_class in _flavour.TF_LOSS_SCALE_CLASSES.items():
    globals()[_name].register(_tf_class)


def _is_finite(grads: Any) -> tf.Tensor:
    """Whether every non-None tensor in the nested structure `grads` is finite."""
    tensors = [g for g in tf.nest.flatten(grads) if g is not None]
    if not tensors:
        return tf.constant(True)
    # IndexedSlices are densified first, as TF 2.4 did, so duplicate indices that
    # overflow when summed are caught too.
    return tf.reduce_all([tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g))) for g in tensors])


def all_replicas_finite(grads: Any) -> tf.Tensor:
    """The finiteness vote: on every replica, when a strategy is active."""
    has_strategy, cross_replica = _flavour.distribution_context()
    if not has_strategy:
        return _is_finite(grads)
    if not cross_replica:
        # TF 2.4 died here with an AttributeError on None; keep the type, say what to do.
        raise AttributeError(
            "DynamicLossScale.update() must be called in a cross-replica context, but was called "
            "inside `strategy.run`. Call it outside `strategy.run`, or from "
            "`tf.distribute.get_replica_context().merge_call(...)`."
        )
    strategy = tf.distribute.get_strategy()
    per_replica = strategy.run(lambda g: tf.cast(_is_finite(g), tf.float32), args=(grads,))
    finite_replicas = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
    return tf.equal(finite_replicas, strategy.num_replicas_in_sync)


def _fixed_replacement(value: float) -> str:
    if _flavour.has_keras3_loss_scaling():
        modern = f"`loss_scale_factor={value}` on the inner Keras optimizer"
    else:
        modern = (
            f"`{_flavour.keras_public_prefix()}.LossScaleOptimizer(inner_optimizer, "
            f"dynamic=False, initial_scale={value})`"
        )
    return f"`FixedLossScale` was removed from TensorFlow after 2.4; the modern equivalent is {modern}."


def _dynamic_replacement(loss_scale: DynamicLossScale) -> str:
    prefix = "`DynamicLossScale` was removed from TensorFlow after 2.4;"
    if loss_scale.multiplier != 2:
        return (
            f"{prefix} modern Keras always uses a multiplier of 2, so `multiplier="
            f"{loss_scale.multiplier}` has no modern equivalent: keep this class for it."
        )
    return (
        f"{prefix} the modern equivalent is `{_flavour.keras_public_prefix()}.LossScaleOptimizer("
        f"inner_optimizer, initial_scale={loss_scale.initial_loss_scale}, "
        f"dynamic_growth_steps={loss_scale.increment_period})`."
    ) + dynamic_difference(_flavour.has_keras3_loss_scaling())


# --- get / serialize / deserialize (TF 2.4's Keras loss-scale helpers) -----------------------------

_BUILT_IN: dict[str, type[LossScale]] = {"FixedLossScale": FixedLossScale, "DynamicLossScale": DynamicLossScale}


def serialize(loss_scale: LossScale) -> dict[str, Any]:
    """Returns `{'class_name': ..., 'config': ...}` for a loss scale."""
    return {"class_name": type(loss_scale).__name__, "config": loss_scale.get_config()}


def deserialize(config: str | dict[str, Any], custom_objects: dict[str, Any] | None = None) -> LossScale:
    """Rebuilds a loss scale from `serialize` output, or from a bare class name."""
    if isinstance(config, dict):
        if "class_name" not in config or "config" not in config:
            raise ValueError(
                f"Improper config format: {config}. Expected a dict with keys 'class_name' and "
                "'config', as returned by `lossscale_compat.serialize`."
            )
        class_name, class_config = config["class_name"], config["config"]
    elif isinstance(config, str):
        class_name, class_config = config, None
    else:
        raise ValueError(
            f"Could not interpret serialized loss scale: {config!r}. Pass the dict returned by "
            "`lossscale_compat.serialize` or a class name such as 'DynamicLossScale'."
        )
    cls = _lookup(class_name, custom_objects)
    return cls() if isinstance(config, str) else cls.from_config(class_config)


def _lookup(class_name: str, custom_objects: dict[str, Any] | None) -> type[LossScale]:
    for objects in (custom_objects or {}, _flavour.keras_custom_objects(), _BUILT_IN):
        if class_name in objects:
            found = objects[class_name]
            if not (isinstance(found, type) and issubclass(found, LossScale)):
                raise ValueError(
                    f"{class_name!r} names {found!r}, which is not a loss scale, so it is not built from a loss-scale "
                    "config. Pass the dict returned by `lossscale_compat.serialize` of a FixedLossScale or a "
                    "DynamicLossScale, or a LossScale subclass in `custom_objects`."
                )
            return found
    raise ValueError(
        f"Unknown loss scale: {class_name}. Built-in loss scales are FixedLossScale and "
        "DynamicLossScale; pass a custom class as `custom_objects={'"
        f"{class_name}': {class_name}}}`."
    )


def get(identifier: object) -> LossScale | None:
    """Returns a loss scale from 'dynamic', a number, a serialized dict, a LossScale, or None."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if isinstance(identifier, str) and identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale) or identifier is None:
        return identifier
    raise ValueError(
        f"Could not interpret loss scale identifier: {identifier}. Expected 'dynamic', a Python "
        "int or float, a LossScale, a dict from `lossscale_compat.serialize`, or None."
    )
