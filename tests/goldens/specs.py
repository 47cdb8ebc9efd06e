"""Turns the JSON gradient specs stored in the goldens into TensorFlow values.

Shared by `record_tf24.py` (Python 3.8, TF 2.4.0) and the tests (modern TF), so both
sides feed the loss scale exactly the same inputs. Keep it Python 3.8 compatible.

A spec is one of:
  a number or "nan"/"inf"/"-inf"        -> [float32 tensor of shape [1]] (one good/bad step)
  {"tensor": [...], "dtype": "float32"}  -> a bare tensor
  {"product": [a, b], "dtype": "float16"} -> a * b computed in that dtype (overflow)
  {"slices": [[...]], "indices": [...], "dense_shape": [...]} -> tf.IndexedSlices
  {"list": [...]} / {"tuple": [...]} / {"dict": {...}} -> nested structures
  null                                   -> None
"""

import math


def number(value):
    """Decodes a JSON number or one of the strings 'nan', 'inf', '-inf'."""
    if isinstance(value, str):
        return float(value)
    return value


def is_step(spec):
    """Whether `spec` is the short form for one single-gradient step."""
    return isinstance(spec, (int, float)) or spec in ("nan", "inf", "-inf")


def step_is_finite(spec):
    """Whether a short-form step feeds a finite gradient."""
    return math.isfinite(number(spec))


def build(spec, tf):
    """Builds the gradient structure described by `spec` with the given `tf` module."""
    if spec is None:
        return None
    if is_step(spec):
        return [tf.constant([number(spec)], dtype=tf.float32)]
    if "tensor" in spec:
        return tf.constant([number(v) for v in spec["tensor"]], dtype=spec.get("dtype", "float32"))
    if "product" in spec:
        a, b = spec["product"]
        dtype = spec.get("dtype", "float32")
        return tf.constant(number(a), dtype=dtype) * tf.constant(number(b), dtype=dtype)
    if "slices" in spec:
        values = tf.constant([[number(v) for v in row] for row in spec["slices"]], tf.float32)
        return tf.IndexedSlices(values, tf.constant(spec["indices"], tf.int64),
                                tf.constant(spec["dense_shape"], tf.int64))
    if "list" in spec:
        return [build(s, tf) for s in spec["list"]]
    if "tuple" in spec:
        return tuple(build(s, tf) for s in spec["tuple"])
    if "dict" in spec:
        return {k: build(s, tf) for k, s in spec["dict"].items()}
    raise ValueError("Unknown gradient spec: %r" % (spec,))
