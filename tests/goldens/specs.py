"""The inputs and scenarios shared by the recorders (tests/recorders/, Python 3.8, TF 2.4.0) and the tests.

It turns the JSON specs stored in the goldens into TensorFlow values, and runs the scenarios whose
outcome TF 2.4.0 recorded, so both sides feed the same inputs through the same steps and cannot drift.
Keep it Python 3.8 compatible, and free of imports of TensorFlow: callers pass the `tf` to run on.

A spec is one of:
  a number or "nan"/"inf"/"-inf"        -> [float32 tensor of shape [1]] (one good/bad step)
  {"tensor": [...], "dtype": "float32"}  -> a bare tensor
  {"product": [a, b], "dtype": "float16"} -> a * b computed in that dtype (overflow)
  {"slices": [[...]], "indices": [...], "dense_shape": [...]} -> tf.IndexedSlices
  {"list": [...]} / {"tuple": [...]} / {"dict": {...}} -> nested structures
  null                                   -> None
"""

import inspect
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
    """TF1 graph-mode `get_gradients` at a fixed scale of 10, and the upstream gradient.

    TF 2.4's loss_scale_optimizer_test.py: testFixedLossScaleAppliedToLossWithGetGradients.
    """
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
    """TF 2.4's LossScaleOptimizer doctest: minimize var**2, then the same step by tape on the same optimizer."""
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


# --- Scenarios: what the recorders run on TF 2.4.0 and the tests replay on today's stack ------------
#
# Each takes the `tf` module (and the classes) to run on, so both sides run the very same steps.


def compiled(tf, fn, mode):
    """`fn` as run in `mode`: 'eager' as it is, 'function' under tf.function, 'jit' compiled by XLA."""
    if mode == "function":
        return tf.function(fn)
    if mode == "jit":
        # TF 2.4 calls the flag `experimental_compile`; later versions call it `jit_compile`.
        flag = "jit_compile" if "jit_compile" in inspect.signature(tf.function).parameters else "experimental_compile"
        return tf.function(fn, **{flag: True})
    if mode == "eager":
        return fn
    raise ValueError("Unknown mode %r: use 'eager', 'function' or 'jit'." % (mode,))


def loss_scale_state(loss_scale):
    """The observable state of a DynamicLossScale, in the goldens' shape."""
    return {"scale": float(loss_scale()), "good_steps": int(loss_scale._num_good_steps.numpy())}


def run_loss_scale_steps(tf, loss_scale, steps, mode):
    """Feeds the step specs `steps` to `loss_scale.update` in `mode`; the state after each step."""
    def update(grads):
        _, should_apply = loss_scale.update(grads)
        return tf.convert_to_tensor(should_apply)

    update = compiled(tf, update, mode)
    out = []
    for step in steps:
        should_apply = update(build(step, tf))
        out.append(dict(should_apply=bool(should_apply.numpy()), **loss_scale_state(loss_scale)))
    return out


def type_name(tf, value):
    """A short description of a value's type: 'None', 'bool', 'Tensor[float32]' or the class name."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if tf.is_tensor(value):
        return "Tensor[%s]" % value.dtype.name
    return type(value).__name__


def update_types_in_function(tf, dynamic, fixed):
    """What `update` returns inside a tf.function, for a dynamic and a fixed loss scale made outside it."""
    out = {}

    @tf.function
    def step():
        update_op, should_apply = dynamic.update([tf.constant(1.0)])
        fixed_op, fixed_apply = fixed.update([tf.constant(1.0)])
        out["dynamic_function"] = {"update_op_is_none": update_op is None,
                                   "should_apply": type_name(tf, should_apply)}
        out["fixed_function"] = {"update_op_is_none": fixed_op is None, "should_apply": type_name(tf, fixed_apply)}
        return should_apply

    step()
    return out


def custom_loop_step(tf, optimizer, variables, forward):
    """TF 2.4's documented custom loop as one function of (x, y): scaled loss, tape, unscaled gradients, apply."""
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = forward(x, y)
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        optimizer.apply_gradients(zip(grads, variables))
        return loss
    return step


def linear_model(tf, np, kernel, bias):
    """Sequential([Input((3,)), Dense(1, name='dense')]) starting from the given kernel and bias."""
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1, name="dense")])
    model.set_weights([np.array(kernel, np.float32), np.array(bias, np.float32)])
    return model


def batch_states(tf, optimizer, state_of):
    """A Keras callback whose `batches` collects `state_of(optimizer, weights)` and the logged loss per batch."""
    class BatchStates(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.batches = []

        def on_train_batch_end(self, batch, logs=None):
            record = state_of(optimizer, self.model.trainable_variables)
            record["logs_loss"] = float(logs["loss"])
            self.batches.append(record)

    return BatchStates()


def counter_of(optimizer):
    """The dynamic counter as an int, or None for a fixed scale."""
    return None if optimizer.dynamic_counter is None else int(optimizer.dynamic_counter.numpy())


def one_step_after(tf, optimizer):
    """One minimize of var*1 from 5.0 (TF 2.4's config tests checked var 5 -> 3 with lr 2)."""
    var = tf.Variable(5.0)
    optimizer.minimize(lambda: var * 1.0, [var])
    return {"var": float(var.numpy()), "loss_scale": float(optimizer.loss_scale.numpy()),
            "dynamic_counter": counter_of(optimizer), "iterations": int(optimizer.iterations.numpy())}


def upstream_gradient_probe(tf):
    """An identity whose gradient records the upstream gradient it sees (the loss scale, for loss = identity(var))."""
    seen = []

    @tf.custom_gradient
    def identity(x):
        def grad(dy):
            seen.append(float(dy.numpy()) if hasattr(dy, "numpy") else None)
            return dy
        return tf.identity(x), grad
    return identity, seen


def two_steps_with_growth_every_step(tf, lso_class, sgd_class):
    """Initial scale 2 and growth every step, two minimize steps of var from 5.0.

    TF 2.4's loss_scale_optimizer_test.py: testDynamicLossScale.
    """
    opt = lso_class(sgd_class(2.0), initial_scale=2, dynamic_growth_steps=1)
    out = {"initial_scale": opt.initial_scale, "initial_scale_type": type(opt.initial_scale).__name__,
           "dynamic_growth_steps": opt.dynamic_growth_steps,
           "dynamic_growth_steps_type": type(opt.dynamic_growth_steps).__name__, "steps": []}
    var = tf.Variable(5.0)
    identity, seen = upstream_gradient_probe(tf)
    for _ in range(2):
        opt.minimize(lambda: identity(var), [var])
        out["steps"].append({"var": float(var.numpy()), "loss_scale": float(opt.loss_scale)})
    out["upstream_grads"] = seen
    return out


def floats(np, value):
    """A tensor, variable or array as nested Python floats."""
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64).tolist()


def momentum_slots_after_two_steps(tf, np, lso_class, sgd_class):
    """SGD(1, momentum 1), initial scale 2, growth every step: two steps of sum(var) from [1, 2], and the slots.

    TF 2.4's loss_scale_optimizer_test.py: testDynamicLossScaleWithSlots.
    """
    opt = lso_class(sgd_class(1.0, momentum=1.0), initial_scale=2, dynamic_growth_steps=1)
    var = tf.Variable([1.0, 2.0])
    out = {"steps": []}
    for _ in range(2):
        opt.minimize(lambda: tf.reduce_sum(var), [var])
        out["steps"].append({"var": floats(np, var), "loss_scale": float(opt.loss_scale)})
    out["slot_names"] = opt.get_slot_names()
    return out


def iterations_writes(tf, lso_class, sgd_class, attempt):
    """`lso.iterations = 7` on a fresh optimizer, then on one that has stepped once, then `.assign(9)`.

    `attempt(fn)` gives {"ok": result} or {"error": ...}. TF 2.4's loss_scale_optimizer_test.py: testIterations.
    """
    def read(value):
        return {"type": type(value).__name__, "value": value.numpy().item() if hasattr(value, "numpy") else value}

    inner = sgd_class()
    opt = lso_class(inner)
    opt.iterations = 7
    out = {"before_training": {"lso": read(opt.iterations), "inner": read(inner.iterations)}}
    inner2 = sgd_class(1.0)
    opt2 = lso_class(inner2)
    var = tf.Variable(1.0)
    opt2.minimize(lambda: var * 1.0, [var])
    out["after_one_step_assign_7"] = attempt(lambda: setattr(opt2, "iterations", 7))
    out["after_one_step"] = {"lso": read(opt2.iterations), "inner": read(inner2.iterations)}
    opt2.iterations.assign(9)
    out["after_iterations.assign(9)"] = {"lso": read(opt2.iterations), "inner": read(inner2.iterations)}
    return out


def repr_in_function(tf, loss_scale):
    """`repr(loss_scale)` as seen while a tf.function traces a call of it."""
    seen = {}

    @tf.function
    def traced():
        seen["repr"] = repr(loss_scale)
        return loss_scale()

    traced()
    return seen["repr"]


def custom_loss_scale_class(tf, base, module):
    """A `base` subclass named CustomLossScale that is neither fixed nor dynamic: scale 2, every step applied.

    It reads as defined in `module`, since TF 2.4.0's recorded error messages show its repr.
    """
    class CustomLossScale(base):
        def __call__(self):
            return tf.constant(2.0)

        def update(self, grads):
            return tf.no_op(), True

        def get_config(self):
            return {}

    CustomLossScale.__module__, CustomLossScale.__qualname__ = module, "CustomLossScale"
    return CustomLossScale


# A TF 2.4 custom loop on an optimizer it does not build (issue 9): the codemod rewrites it for Keras 3.
UNTRACED_LOOP = """\
import tensorflow as tf

def train(optimizer, w, batches):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y))
            scaled = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, [w])
        grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, [w]))

    for x, y in batches:
        step(x, y)
"""
UNTRACED_LOOP_OPTIMIZER = {"learning_rate": 0.05, "initial_scale": 8, "dynamic_growth_steps": 2}
UNTRACED_LOOP_WEIGHTS = [[1.0], [-2.0]]
# Two finite batches (the scale grows), a non-finite one (skipped, the scale halves), two more finite ones.
UNTRACED_LOOP_BATCHES = [
    ([[1.0, 2.0]], [[0.5]]),
    ([[0.5, -1.0]], [[1.0]]),
    ([[float("inf"), 1.0]], [[0.0]]),
    ([[2.0, 1.0]], [[-1.0]]),
    ([[1.0, 1.0]], [[3.0]]),
]


def run_untraced_loop(tf, train, optimizer, w):
    """Feeds `train` (UNTRACED_LOOP's, or its migration) one batch at a time; returns the weights and scale after each."""
    history = []
    for x, y in UNTRACED_LOOP_BATCHES:
        train(optimizer, w, [(tf.constant(x), tf.constant(y))])
        scale = optimizer.dynamic_scale if hasattr(optimizer, "dynamic_scale") else optimizer.loss_scale
        history.append({"weights": w.numpy().ravel().tolist(), "loss_scale": float(tf.convert_to_tensor(scale))})
    return history
