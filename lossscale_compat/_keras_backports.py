"""What TF 2.4 code does with Keras 3's variables that Keras 3 lacks, added where it is missing.

Keras 3.0-3.4's variables take neither `float()` nor `int()` (Keras 3.5 added both), and no Keras 3's
`tf.keras.backend.set_value` takes a Keras variable (it reads `dtype.name` of a string dtype). TF 2.4 code
does both to `opt.lr` and `opt.iterations`. Each backport only adds: nothing that worked changes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from lossscale_compat import _flavour


def _float(variable: Any) -> float:
    return float(variable.numpy())


def _int(variable: Any) -> int:
    return int(variable.numpy())


def _set_value_taking_keras_variables(original: Callable) -> Callable:
    @functools.wraps(original)
    def set_value(x: Any, value: Any) -> Any:
        return original(_flavour.tf24_hyperparameter(x), value)

    set_value.takes_keras_variables = True  # type: ignore[attr-defined]
    return set_value


def backports() -> list[tuple[Any, str, Any]]:
    """(target, attribute, value) for each backport the installed Keras still needs."""
    needed: list[tuple[Any, str, Any]] = []
    variable = _flavour.keras_variable_class_without_float()
    if variable is not None:
        needed += [(variable, "__float__", _float), (variable, "__int__", _int)]
    backend = _flavour.keras3_legacy_backend()
    if backend is not None and not getattr(backend.set_value, "takes_keras_variables", False):
        needed.append((backend, "set_value", _set_value_taking_keras_variables(backend.set_value)))
    return needed


def apply() -> None:
    """Adds the backports the installed Keras needs (our optimizers' constructors call this)."""
    for target, attribute, value in backports():
        setattr(target, attribute, value)
