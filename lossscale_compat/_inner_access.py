"""TF 2.4's pass-through from a loss-scale optimizer to its inner optimizer, and the OptimizerV2 methods it kept."""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from lossscale_compat import _flavour, _scheduled_rate, _slots

# TF 2.4's hyperparameters (OptimizerV2._hyper) per optimizer. Reads and writes of these names on the
# loss-scale optimizer went to the inner optimizer; any other attribute stayed on the wrapper.
HYPERPARAMETERS: dict[str, tuple[str, ...]] = {
    "SGD": ("learning_rate", "decay", "momentum"),
    "Adam": ("learning_rate", "decay", "beta_1", "beta_2"),
    "Adamax": ("learning_rate", "decay", "beta_1", "beta_2"),
    "Nadam": ("learning_rate", "decay", "beta_1", "beta_2"),
    "RMSprop": ("learning_rate", "decay", "rho", "momentum"),
    "Adagrad": ("learning_rate", "decay"),
    "Adadelta": ("learning_rate", "decay", "rho"),
}


def hyperparameter_names(optimizer: Any) -> tuple[str, ...]:
    """TF 2.4's hyperparameter names for `optimizer`'s class or its nearest known base class."""
    for cls in type(optimizer).__mro__:
        if cls.__name__ in HYPERPARAMETERS:
            return HYPERPARAMETERS[cls.__name__]
    return ("learning_rate",)


def _clipping_property(name: str) -> property:
    def getter(self: Any) -> Any:
        inner = _flavour.wrapped_optimizer(self)
        return self.__dict__.get("_own_" + name) if inner is None else getattr(inner, name)

    def setter(self: Any, value: Any) -> None:
        inner = _flavour.wrapped_optimizer(self)
        if inner is None:  # the Keras base class sets these during its own __init__
            self.__dict__["_own_" + name] = value
        else:
            setattr(inner, name, value)

    return property(getter, setter, doc=f"The inner optimizer's `{name}`.")


def _shapes_match(variables: list, values: list) -> bool:
    return len(variables) == len(values) and all(
        tuple(variable.shape) == tuple(np.shape(value)) for variable, value in zip(variables, values)
    )


def tf24_class_name(optimizer: Any) -> str:
    """The class name TF 2.4's messages gave `optimizer`: `LossScaleOptimizer` for our `KerasLossScaleOptimizer`."""
    cls = type(optimizer)
    return str(cls.__dict__.get("_tf24_name", cls.__name__))


class VariableList(list):
    """Today's `optimizer.variables` list that can also be called, as TF 2.4's `variables()` method was.

    Calling it returns TF 2.4's contents: the inner optimizer's `iterations`, then its slots.
    """

    def __init__(self, variables: Any = (), tf24_weights: Any = None):
        super().__init__(variables)
        self._tf24_weights = tf24_weights

    def __call__(self) -> list:
        if self._tf24_weights is None:
            raise TypeError(
                "This copy of `optimizer.variables` is a plain list; call `optimizer.variables()` "
                "on the optimizer itself for TF 2.4's variables."
            )
        return self._tf24_weights()


class InnerOptimizerAccess:
    """Mixin: TF 2.4's reads and writes through a loss-scale optimizer to its inner optimizer.

    `get_slot_names`/`get_slot` are served by `__getattr__` and kept out of `dir()` on purpose:
    TensorFlow's checkpoint saver treats any object whose `dir()` lists `get_slot_names` as the owner
    of slot variables, while today's optimizers already checkpoint their slots as ordinary dependencies.
    """

    clipnorm = _clipping_property("clipnorm")
    global_clipnorm = _clipping_property("global_clipnorm")
    clipvalue = _clipping_property("clipvalue")

    @property
    def learning_rate(self) -> Any:
        """The inner optimizer's learning rate; where it has a schedule, a `ScheduledRate`, which takes a step too."""
        inner = _flavour.wrapped_optimizer(self)
        if inner is None:  # the Keras base class's own, while it constructs
            return super().learning_rate  # type: ignore[misc]
        return _scheduled_rate.scheduled(inner, inner.learning_rate)

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        inner = _flavour.wrapped_optimizer(self)
        if inner is None:
            super(InnerOptimizerAccess, type(self)).learning_rate.__set__(self, value)  # type: ignore[misc]
        else:
            inner.learning_rate = value

    @property
    def lr(self) -> Any:
        """TF 2.4's alias of `learning_rate`: the same variable, or the schedule itself, as in TF 2.4."""
        schedule = _flavour.learning_rate_schedule(self.inner_optimizer)
        return self.learning_rate if schedule is None else schedule

    @lr.setter
    def lr(self, value: Any) -> None:
        self.inner_optimizer.learning_rate = value

    @property
    def weights(self) -> list:
        """TF 2.4's optimizer weights: the inner optimizer's `iterations`, then its slots."""
        return _slots.tf24_weights(self.inner_optimizer)

    @property
    def variables(self) -> VariableList:
        """Today's optimizer variables; `variables()` gives TF 2.4's, the same as `weights`."""
        return VariableList(self._todays_variables(), lambda: self.weights)

    def _todays_variables(self) -> list:
        return super().variables  # type: ignore[misc]  # the Keras optimizer after this mixin in the MRO has it

    def get_weights(self) -> list:
        """The values of `weights`, as numpy arrays."""
        return [np.asarray(w.numpy()) for w in self.weights]

    def set_weights(self, weights: list) -> None:
        """Sets `weights` from values in TF 2.4's order, or in the order of today's `variables` (Keras 2's H5 files)."""
        targets = self.weights
        todays = list(self._todays_variables())
        if not _shapes_match(targets, weights) and _shapes_match(todays, weights):
            targets = todays  # an H5 file Keras 2 wrote today (when both orders fit, TF 2.4's is taken)
        if len(weights) != len(targets):
            raise ValueError(
                f"You called `set_weights(weights)` on optimizer {self.inner_optimizer.name} with a weight list of "
                f"length {len(weights)}, but the optimizer was expecting {len(targets)} weights (iterations, then "
                "each slot for every variable). Build the optimizer on the model's variables first."
            )
        for target, value in zip(targets, weights):
            if tuple(target.shape) != tuple(np.shape(value)):
                raise ValueError(
                    f"Optimizer weight shape {tuple(target.shape)} is not compatible with "
                    f"provided weight shape {tuple(np.shape(value))}."
                )
            target.assign(np.asarray(value, dtype=np.dtype(getattr(target.dtype, "name", target.dtype))))

    def get_gradients(self, loss: Any, params: Any) -> list:
        """TF1 graph mode: the gradients of the scaled `loss` with respect to `params`, unscaled.

        An inner optimizer with a `get_gradients` (its own, or TF 2.4's OptimizerV2's) computes them, as in TF 2.4.
        """
        inner_get_gradients = getattr(self.inner_optimizer, "get_gradients", None)
        if inner_get_gradients is not None:
            return self.get_unscaled_gradients(inner_get_gradients(self.get_scaled_loss(loss), params))
        if tf.executing_eagerly():
            raise ValueError(
                "`get_gradients()` works only while building a graph (TF1 graph mode or inside a "
                "`tf.function`). In eager mode use a `tf.GradientTape`: `get_scaled_loss(loss)`, then "
                "`tape.gradient`, then `get_unscaled_gradients`."
            )
        params = tf.nest.flatten(params)
        grads = tf.gradients(self.get_scaled_loss(loss), params)
        for grad, param in zip(grads, params):
            if grad is None:
                raise ValueError(
                    f"Variable {param} has `None` for gradient. Please make sure that all of your ops have a "
                    "gradient defined (i.e. are differentiable), or leave this variable out of `params`."
                )
        return self.get_unscaled_gradients(grads)

    def _aggregate_gradients(self, grads_and_vars: Any) -> Any:
        """TF 2.4's: the inner optimizer sums `grads_and_vars` across replicas."""
        return _flavour.aggregate_gradients(self.inner_optimizer, grads_and_vars)

    def __getattr__(self, name: str) -> Any:
        inner = _flavour.wrapped_optimizer(self)
        if inner is not None:
            if name == "get_slot_names":
                return lambda: _slots.slot_names(inner)
            if name == "get_slot":
                return lambda var, slot_name: _slots.slot_variable(inner, var, slot_name)
            if name in hyperparameter_names(inner):
                return getattr(inner, name)
        raise AttributeError(f"{tf24_class_name(self)!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        inner = _flavour.wrapped_optimizer(self)
        if (
            inner is not None
            and name in hyperparameter_names(inner)
            and name not in self.__dict__
            and not hasattr(type(self), name)
        ):
            setattr(inner, name, value)
        else:
            super().__setattr__(name, value)

    def __dir__(self) -> list:
        names = set(super().__dir__())
        inner = _flavour.wrapped_optimizer(self)
        if inner is not None:
            names.update(n for n in hyperparameter_names(inner) if hasattr(inner, n))
            if "learning_rate" in names:
                names.add("lr")
        return sorted(names)
