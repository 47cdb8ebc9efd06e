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


# --- Optimizer goldens (record_tf24_optimizer.py) -------------------------------------------------
#
# A loss-scale argument (the V1 `loss_scale=`, or anything fed to a constructor) is described as
#   {"py": "str"|"int"|"float"|"bool"|"None"|"dict"|"np.float32"|"np.float64", "value": ...}
#   {"py": "FixedLossScale", "value": <FixedLossScale config>}
#   {"py": "DynamicLossScale", "value": <DynamicLossScale config>}
# An inner optimizer is {"class_name": "SGD"|"Adam"|..., "config": {constructor kwargs}}.
# An LSO form is either
#   {"class": "experimental", "loss_scale": <loss-scale argument>}   (LossScaleOptimizerV1)
#   {"class": "LossScaleOptimizer", "kwargs": {...}}                 (the non-experimental class)


def array(nested, np, dtype="float32"):
    """A numpy array from nested lists whose leaves are numbers or 'nan'/'inf'/'-inf'."""
    def walk(value):
        if isinstance(value, list):
            return [walk(v) for v in value]
        return number(value)
    return np.array(walk(nested), dtype=dtype)


def value(spec, fixed_cls=None, dynamic_cls=None):
    """Decodes a {"py": ..., "value": ...} argument description."""
    kind = spec["py"]
    if kind == "None":
        return None
    if kind in ("str", "dict", "list"):
        return spec["value"]
    if kind == "int":
        return int(spec["value"])
    if kind == "float":
        return float(number(spec["value"]))
    if kind == "bool":
        return bool(spec["value"])
    if kind.startswith("np."):
        import numpy as np
        return getattr(np, kind[3:])(spec["value"])
    if kind == "FixedLossScale":
        return fixed_cls(**spec["value"])
    if kind == "DynamicLossScale":
        return dynamic_cls(**spec["value"])
    raise ValueError("Unknown argument spec: %r" % (spec,))


def inner_optimizer(spec, optimizers_module):
    """Builds an inner optimizer from {"class_name": ..., "config": {kwargs}}."""
    return getattr(optimizers_module, spec["class_name"])(**spec["config"])


def lso(form, inner, experimental_cls, cls, fixed_cls=None, dynamic_cls=None):
    """Builds a loss-scale optimizer around `inner` from an LSO form (see above)."""
    if form["class"] == "experimental":
        return experimental_cls(inner, value(form["loss_scale"], fixed_cls, dynamic_cls))
    if form["class"] == "LossScaleOptimizer":
        return cls(inner, **form.get("kwargs", {}))
    raise ValueError("Unknown LSO form: %r" % (form,))


def get_gradients_in_graph_mode(tf, lso_class, sgd_class):
    """TF 2.4's test item 24: TF1 graph-mode `get_gradients` at a fixed scale of 10, and the upstream gradient."""
    with tf.Graph().as_default():
        var = tf.compat.v1.Variable(5.0)
        opt = lso_class(sgd_class(2.0), dynamic=False, initial_scale=10)
        seen = []

        @tf.custom_gradient
        def identity(x):
            def grad(dy):
                seen.append(tf.identity(dy))
                return dy
            return tf.identity(x), grad
        grads = opt.get_gradients(identity(var), [var])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            gradient, upstream = sess.run([grads[0], seen[0]])
    return {"gradient": float(gradient), "upstream_grad": float(upstream)}


def minimize_then_manual_loop(tf, lso_class, sgd_class):
    """TF 2.4's docstring (test items 71-72): minimize var**2, then the same step by tape on the same optimizer."""
    opt = lso_class(sgd_class(0.25))
    var = tf.Variable(1.0)
    opt.minimize(lambda: var ** 2, [var])
    out = {"minimize": float(var.numpy())}
    with tf.GradientTape() as tape:
        loss = var ** 2
        scaled = opt.get_scaled_loss(loss)
    scaled_grad = tape.gradient(scaled, var)
    grad, = opt.get_unscaled_gradients([scaled_grad])
    opt.apply_gradients([(grad, var)])
    out["manual"] = {"var": float(var.numpy()), "scaled_grad": float(scaled_grad), "grad": float(grad)}
    return out
