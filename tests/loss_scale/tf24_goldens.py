"""Access to the goldens recorded from TF 2.4.0 by tests/goldens/record_tf24.py."""

import json
import math
import pathlib
import sys

import tensorflow as tf

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent.parent / "goldens"
sys.path.insert(0, str(GOLDEN_DIR))
import specs  # noqa: E402  (shared with the recorder, so both sides build identical inputs)

GOLDENS = json.loads((GOLDEN_DIR / "loss_scale.json").read_text())


def by_name(cases, name):
    """Returns the case called `name` from a list of golden cases."""
    matches = [case for case in cases if case["name"] == name]
    assert len(matches) == 1, f"no single golden case named {name!r}"
    return matches[0]


def state(loss_scale):
    """The observable state of a DynamicLossScale, in the goldens' shape."""
    return {"scale": float(loss_scale()), "good_steps": int(loss_scale._num_good_steps.numpy())}


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
    def update(grads):
        _, should_apply = loss_scale.update(grads)
        return tf.convert_to_tensor(should_apply)

    if mode == "function":
        update = tf.function(update)
    elif mode == "jit":
        update = tf.function(update, jit_compile=True)
    out = []
    for step in steps:
        should_apply = update(specs.build(step, tf))
        out.append(dict(should_apply=bool(should_apply.numpy()), **state(loss_scale)))
    return out


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
