"""TF 2.4's private layer dtype attributes on Keras 3: given back where Keras 3 holds the same value, else one error.

TF 2.4 mixed-precision code read `layer._compute_dtype`, `_compute_dtype_object` and `_dtype_policy`, set
`self._autocast = False`, and called `layer._set_dtype_policy(policy)`. Keras 3 layers have none of these: a read
failed with a bare AttributeError, a write was silently ignored. Legacy mode puts one descriptor per name on Keras 3's
`Layer` class, so only these names are answered and every other attribute lookup costs what it did. Which names are
given back is decided by TF 2.4.0's recorded values (tests/goldens/tf24_layer_attributes.json).
"""

from __future__ import annotations

from typing import Any, Callable

from lossscale_compat import _mapping

KERAS2 = "Or run the program on Keras 2: `pip install tf_keras` and set TF_USE_LEGACY_KERAS=1."
SET_POLICY = (
    "Keras 3 sets a layer's policy with `layer.dtype_policy = tf.keras.mixed_precision.Policy(name)`, or with "
    "`dtype=` when the layer is created."
)


class TF24LayerAttributeError(AttributeError):
    """A TF 2.4 layer attribute that Keras 3 has no equivalent of; the message names what to use instead."""


def _error(layer: Any, name: str, advice: str, setting: bool) -> TF24LayerAttributeError:
    if setting:
        problem = (
            f"{name!r} of a {type(layer).__name__!r} object cannot be set: it is TF 2.4's, and Keras 3 ignores it."
        )
    else:
        problem = (
            f"{type(layer).__name__!r} object has no attribute {name!r}: it is TF 2.4's, and Keras 3 layers lack it."
        )
    error = TF24LayerAttributeError(f"{problem} {advice} {KERAS2}")
    error.name, error.obj = name, layer  # as Python sets them on its own AttributeError (3.10+)
    return error


class _Refused:
    """A TF 2.4 name Keras 3 has no equivalent of: reading it raises the error naming the way out. A value the
    instance holds itself wins (Keras 3's `InputLayer` keeps its own `_dtype`)."""

    def __init__(self, name: str, advice: str):
        self.name, self.advice = name, advice

    def __get__(self, layer: Any, owner: Any = None) -> Any:
        if layer is None:
            return self
        raise _error(layer, self.name, self.advice, setting=False)


class _RefusedAlsoOnWrite(_Refused):
    """A TF 2.4 name that Keras 3 would silently ignore when set: setting it raises the error too."""

    def __set__(self, layer: Any, value: Any) -> None:
        raise _error(layer, self.name, self.advice, setting=True)


class _GivenBack(_RefusedAlsoOnWrite):
    """A TF 2.4 name whose value Keras 3 holds under its public name: reading it gives that value back; setting it
    raises the error, as TF 2.4's `_compute_dtype` was read-only and Keras 3 would ignore the others."""

    def __init__(self, name: str, read: Callable[[Any], Any]):
        super().__init__(name, f"Its value is `{_mapping.LAYER_ATTRIBUTES[name]}`. {SET_POLICY}")
        self.read = read

    def __get__(self, layer: Any, owner: Any = None) -> Any:
        return self if layer is None else self.read(layer)


def _compute_dtype_object(layer: Any) -> Any:
    import tensorflow as tf

    return None if layer.compute_dtype is None else tf.as_dtype(layer.compute_dtype)


def _descriptors(policy_is_plain_attribute: bool) -> list[_Refused]:
    descriptors = [
        _GivenBack("_compute_dtype", lambda layer: layer.compute_dtype),
        _GivenBack("_compute_dtype_object", _compute_dtype_object),
        _RefusedAlsoOnWrite(
            "_autocast",
            "Keras 3 has `layer.autocast`, set by `autocast=False` in the layer's constructor "
            "(`super().__init__(..., autocast=False)`), which leaves floating inputs uncast as `_autocast = False` "
            "did; unlike TF 2.4, inside a mixed-precision model it also reads the layer's variables in their own "
            "dtype, and Keras 3's models have `autocast=True` where TF 2.4's had `_autocast=False`.",
        ),
        _Refused("_set_dtype_policy", SET_POLICY),
        _Refused("_dtype", f"Read `{_mapping.LAYER_ATTRIBUTES['_dtype']}`, of which it was an alias. {SET_POLICY}"),
        _Refused(
            "_maybe_cast_inputs",
            "Keras 3 casts a layer's inputs in `__call__` (see `layer.autocast`); cast by hand with "
            "`tf.cast(x, layer.compute_dtype)`.",
        ),
    ]
    if policy_is_plain_attribute:  # Keras 3.0-3.2 keep `dtype_policy` itself; later ones have their own _dtype_policy
        descriptors.append(_GivenBack("_dtype_policy", lambda layer: layer.dtype_policy))
    return descriptors


def assignments(layer_class: Any, policy_is_plain_attribute: bool) -> list[tuple[Any, str, Any]]:
    """(Keras 3's Layer class, name, descriptor) for each TF 2.4 name that Keras 3's Layer lacks."""
    return [
        (layer_class, descriptor.name, descriptor)
        for descriptor in _descriptors(policy_is_plain_attribute)
        if not hasattr(layer_class, descriptor.name)
    ]
