"""The learning rate of an optimizer given a schedule, read as TF 2.4 read it and as today's Keras reads it.

TF 2.4's `opt.learning_rate` was the schedule itself (`opt.learning_rate(step)`); today's Keras optimizers
return the current rate instead, which their own steps and callbacks use as a number. `ScheduledRate` is
both: called with a step it is the schedule's rate at that step; otherwise it is the rate Keras computed when
it was read (`float()`, `numpy()`, arithmetic, any TensorFlow op), so a step builds exactly the ops it built.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from lossscale_compat import _flavour


class ScheduledRate(tf.keras.optimizers.schedules.LearningRateSchedule):
    """A schedule (when called) that is also the optimizer's current rate (everywhere else)."""

    def __init__(self, schedule: Any, current: Any):
        self.schedule = schedule
        self.current = current

    def __call__(self, step: Any) -> Any:
        return self.schedule(step)

    def get_config(self) -> Any:
        return self.schedule.get_config()

    def numpy(self) -> Any:
        return tf.convert_to_tensor(self.current).numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return np.asarray(self.numpy(), dtype=dtype)

    def __float__(self) -> float:
        return float(self.numpy())

    def __getattr__(self, name: str) -> Any:
        # The schedule's own attributes (`initial_learning_rate`) first, then the rate's (`dtype`, `assign`).
        if name in ("schedule", "current"):
            raise AttributeError(name)
        try:
            return getattr(self.schedule, name)
        except AttributeError:
            return getattr(self.current, name)

    def __repr__(self) -> str:
        return f"<ScheduledRate of {type(self.schedule).__name__}: current rate {self.current!r}>"


def _forward(operation: Callable, reflected: bool) -> Callable:
    def method(self: ScheduledRate, other: Any) -> Any:
        rate = tf.convert_to_tensor(self.current)
        return operation(other, rate) if reflected else operation(rate, other)

    return method


for _name, _operation in {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "pow": operator.pow,
}.items():
    setattr(ScheduledRate, f"__{_name}__", _forward(_operation, reflected=False))
    setattr(ScheduledRate, f"__r{_name}__", _forward(_operation, reflected=True))
for _name in ("lt", "le", "gt", "ge"):
    setattr(ScheduledRate, f"__{_name}__", _forward(getattr(operator, _name), reflected=False))
ScheduledRate.__neg__ = lambda self: -tf.convert_to_tensor(self.current)

tf.register_tensor_conversion_function(
    ScheduledRate,
    lambda rate, dtype=None, name=None, as_ref=False: tf.convert_to_tensor(rate.current, dtype=dtype, name=name),
)


def scheduled(optimizer: Any, current: Any) -> Any:
    """`current`, Keras's learning-rate read of `optimizer`, as a `ScheduledRate` if it was given a schedule."""
    if isinstance(current, ScheduledRate):
        return current
    schedule = _flavour.learning_rate_schedule(optimizer)
    return current if schedule is None else ScheduledRate(schedule, current)


def learning_rate_property(original: property) -> property:
    """Keras's `learning_rate` property, returning a `ScheduledRate` where the optimizer has a schedule."""
    getter: Any = original.fget
    return property(
        lambda optimizer: scheduled(optimizer, getter(optimizer)),
        original.fset,
        original.fdel,
        "The learning rate: callable with a step when it is a schedule, as in TF 2.4.",
    )
