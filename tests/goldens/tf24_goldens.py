"""Access to the goldens recorded from TF 2.4.0 by tests/recorders/record_tf24.py."""

import json
import math
import pathlib

import tensorflow as tf

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent
import specs  # noqa: E402  (shared with the recorders, so both sides build identical inputs)

GOLDENS = json.loads((GOLDEN_DIR / "loss_scale.json").read_text())
OPTIMIZER_GOLDENS = json.loads((GOLDEN_DIR / "optimizer.json").read_text())


def dynamic_loss_scale(kwargs):
    """Builds our DynamicLossScale, expecting the warning for settings TF 2.4 accepted that defeat loss scaling."""
    import pytest

    import lossscale_compat

    initial, multiplier = float(kwargs.get("initial_loss_scale", 2**15)), float(kwargs.get("multiplier", 2))
    period = kwargs.get("increment_period", 2000)
    if math.isfinite(initial) and multiplier >= 1 and not (isinstance(period, float) and not period.is_integer()):
        return lossscale_compat.DynamicLossScale(**kwargs)
    with pytest.warns(UserWarning, match=r"DynamicLossScale\((initial_loss_scale|multiplier|increment_period)="):
        return lossscale_compat.DynamicLossScale(**kwargs)


def by_name(cases, name):
    """Returns the case called `name` from a list of golden cases."""
    matches = [case for case in cases if case["name"] == name]
    assert len(matches) == 1, f"no single golden case named {name!r}"
    return matches[0]


state = specs.loss_scale_state


def same(expected, actual):
    """Deep equality in which NaN equals NaN (TF 2.4 produced NaN scales in some cases)."""
    if isinstance(expected, float) and isinstance(actual, float):
        return (math.isnan(expected) and math.isnan(actual)) or expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual))
    return type(expected) is type(actual) and expected == actual


def run_steps(loss_scale, steps, mode):
    """Feeds golden `steps` to `loss_scale.update` in 'eager', 'function' or 'jit' mode."""
    return specs.run_loss_scale_steps(tf, loss_scale, steps, mode)


def decode(encoded):
    """Rebuilds an identifier that the recorder described with `encode`."""
    import numpy as np

    import lossscale_compat

    kind, value = encoded["py"], encoded.get("value")
    if kind == "None":
        return None
    if kind.startswith("np."):
        return getattr(np, kind[3:])(value)
    if kind == "tensor":
        return tf.constant(value)
    if kind in ("FixedLossScale", "DynamicLossScale"):
        return getattr(lossscale_compat, kind).from_config(value)
    return value


# --- Optimizer goldens (record_tf24_optimizer.py) --------------------------------------------------

def keras3():
    """Whether the stack's modern LossScaleOptimizer follows Keras 3 (no fixed mode, `scale_loss`)."""
    from lossscale_compat import _flavour

    return _flavour.has_keras3_loss_scaling()


def our_class(tf24_class_name):
    """Our class that stands in for TF 2.4's class of this name: in legacy mode, the class TF 2.4's name gives
    (on Keras 2, with TF 2.4's optimizers, the form over them); else the package's own."""
    import lossscale_compat
    from lossscale_compat.legacy import is_installed

    if is_installed():
        mixed_precision = tf.keras.mixed_precision
        experimental, keras = mixed_precision.experimental.LossScaleOptimizer, mixed_precision.LossScaleOptimizer
    else:
        experimental, keras = lossscale_compat.LossScaleOptimizer, lossscale_compat.KerasLossScaleOptimizer
    return {"LossScaleOptimizerV1": experimental, "experimental": experimental,
            "LossScaleOptimizer": keras}[tf24_class_name]


def build_our_lso(form, inner_spec, **inner_overrides):
    """Builds our optimizer for a golden LSO form around a golden inner-optimizer spec, with `our_class`'s classes."""
    import lossscale_compat

    spec = {"class_name": inner_spec["class_name"], "config": dict(inner_spec["config"], **inner_overrides)}
    inner = specs.inner_optimizer(spec, tf.keras.optimizers)
    return specs.lso(form, inner, our_class("experimental"), our_class("LossScaleOptimizer"),
                     lossscale_compat.FixedLossScale, lossscale_compat.DynamicLossScale)


def registered_name(cls):
    """The name under which `lossscale_compat` registers `cls` with Keras serialization."""
    return tf.keras.utils.get_registered_name(cls)


def keras_serialize(optimizer):
    """The stack's Keras serialization of an optimizer."""
    if keras3():
        import keras

        return keras.saving.serialize_keras_object(optimizer)
    return tf.keras.optimizers.serialize(optimizer)


def keras_deserialize(config, custom_objects=None):
    """The stack's Keras deserialization of an optimizer config."""
    if keras3():
        import keras

        return keras.saving.deserialize_keras_object(config, custom_objects=custom_objects)
    return tf.keras.optimizers.deserialize(config, custom_objects=custom_objects, use_legacy_optimizer=False)


counter_of = specs.counter_of


def one_step_after(optimizer):
    """One minimize of var*1 from 5.0, as the recorder did."""
    return specs.one_step_after(tf, optimizer)


def float32(value):
    """A number at float32 precision, the precision optimizer hyperparameters are stored in."""
    import numpy as np

    return np.float32(value)


def same_numbers(expected, actual):
    """Equality of two config values; numbers are compared as the float32s the optimizer holds."""
    if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
        return expected == actual
    if isinstance(expected, (int, float)) and not isinstance(actual, str):
        return float32(expected) == float32(actual)
    return expected == actual


def common_config_keys(expected, actual, skip=()):
    """Keys of TF 2.4's config that the stack's config still has (Keras 3 dropped e.g. `decay`)."""
    return [key for key in expected if key in actual and key not in skip]


def normalise_addresses(message):
    """Replaces object addresses with '0x?', as the recorder did with TF 2.4.0's messages."""
    import re

    return re.sub(r"0x[0-9a-fA-F]+", "0x?", message)
