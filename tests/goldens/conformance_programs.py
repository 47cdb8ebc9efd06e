"""TF 2.4 programs for the conformance suite: each does what one of TF 2.4.0's own tests does, through TF 2.4's
public API only, and returns what it saw as plain JSON data.

tests/recorders/record_tf24_conformance.py runs every program on TF 2.4.0 and stores the results in
tests/goldens/conformance.json; tests/conformance/ runs the same programs in legacy mode on today's
TensorFlow and compares. `PROGRAMS` maps a case name to (TF 2.4 test file, TF 2.4 test, program).
Keep it Python 3.8 compatible and free of TensorFlow imports: callers pass `tf`.
"""

import math
import os

V1_LSO_TEST = "training/experimental/loss_scale_optimizer_test.py"
POLICY_TEST = "keras/mixed_precision/policy_test.py"
KERAS_TEST = "keras/mixed_precision/keras_test.py"


def attempt(fn):
    """{"ok": value} or {"error": [type name, message]}: errors are results too."""
    try:
        return {"ok": fn()}
    except Exception as exc:  # noqa: BLE001 - a TF 2.4 error is a recorded outcome
        return {"error": [type(exc).__name__, str(exc).split("\n")[0]]}


def _floats(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return "nan" if isinstance(value, float) and math.isnan(value) else float(value)


class _Session:
    """Runs ops as a TF 2.4 test did: `evaluate` in eager, a TF1 session in graph mode."""

    def __init__(self, tf, graph):
        self.tf, self.graph = tf, graph
        self.session = tf.compat.v1.Session() if graph else None

    def __call__(self, value):
        if self.session is None:
            return value() if callable(value) and not hasattr(value, "numpy") else value
        return self.session.run(value)

    def init(self):
        if self.session is not None:
            self.session.run(self.tf.compat.v1.global_variables_initializer())


def _in_mode(tf, mode, program):
    if mode == "graph":
        with tf.Graph().as_default():
            session = _Session(tf, True)
            with session.session:
                return program(session)
    return program(_Session(tf, False))


def _seen_upstream(tf):
    """An identity whose gradient stores the upstream gradient (the loss scale) into a variable."""
    seen = tf.Variable([0.0], trainable=False)

    @tf.custom_gradient
    def identity(x):
        def grad(dy):
            with tf.control_dependencies([seen.assign(dy)]):
                return tf.identity(dy)

        return tf.identity(x), grad

    return identity, seen


def _v1_step(tf, session, opt, loss, var):
    """One `minimize`: built once in graph mode and run, or run at once in eager."""
    if session.session is None:
        opt.minimize(loss, var_list=[var])
        return None
    op = opt.minimize(loss(), var_list=[var])
    return op


def v1_fixed_minimize(tf, mode):
    def program(run):
        var = tf.Variable([5.0])
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(2.0), 10.0)
        identity, seen = _seen_upstream(tf)
        op = _v1_step(tf, run, opt, lambda: identity(var), var)
        run.init()
        if op is not None:
            run(op)
        return {"var": _floats(run(var)), "upstream": _floats(run(seen))}
    return _in_mode(tf, mode, program)


def v1_fixed_get_gradients(tf, mode):
    def program(run):
        var = tf.Variable([2.0])
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0), 10.0)
        identity, seen = _seen_upstream(tf)
        grads = [g for g, _ in opt.compute_gradients(identity(var), [var])]
        run.init()
        return {"gradient": _floats(run(grads)[0]), "upstream": _floats(run(seen))}
    return _in_mode(tf, mode, program)


def v1_dynamic(tf, mode):
    def program(run):
        var = tf.Variable([5.0])
        loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
            initial_loss_scale=2, increment_period=1, multiplier=2)
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(2.0), loss_scale)
        identity, seen = _seen_upstream(tf)
        op = _v1_step(tf, run, opt, lambda: identity(var), var)
        run.init()
        steps = []
        for _ in range(2):
            if op is not None:
                run(op)
            elif steps:
                _v1_step(tf, run, opt, lambda: identity(var), var)
            steps.append({"var": _floats(run(var)), "upstream": _floats(run(seen)),
                          "scale": _floats(run(loss_scale()))})
        return steps
    return _in_mode(tf, mode, program)


def v1_dynamic_update(tf, mode):
    def program(run):
        var = tf.Variable([1.0, 2.0])
        loss_scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2, increment_period=1, multiplier=2)
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0), loss_scale)
        finite = _v1_step(tf, run, opt, lambda: var * 2.0, var)
        nan = None if finite is None else _v1_step(tf, run, opt, lambda: var * float("nan"), var)
        run.init()
        if finite is not None:
            run(finite)
        steps = [{"var": _floats(run(var)), "scale": _floats(run(loss_scale()))}]
        if nan is not None:
            run(nan)
        else:
            _v1_step(tf, run, opt, lambda: var * float("nan"), var)
        steps.append({"var": _floats(run(var)), "scale": _floats(run(loss_scale()))})
        return steps
    return _in_mode(tf, mode, program)


def v1_dynamic_with_slots(tf, mode):
    def program(run):
        var = tf.Variable([1.0, 2.0])
        loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
            initial_loss_scale=2.0, increment_period=1, multiplier=4)
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.compat.v1.train.MomentumOptimizer(1.0, momentum=1.0), loss_scale)
        op = _v1_step(tf, run, opt, lambda: var * 1.0, var)
        run.init()
        steps = []
        for _ in range(2):
            if op is not None:
                run(op)
            elif steps:
                _v1_step(tf, run, opt, lambda: var * 1.0, var)
            steps.append({"var": _floats(run(var)), "scale": _floats(run(loss_scale()))})
        return steps
    return _in_mode(tf, mode, program)


def v1_checkpoint(tf, mode, directory):
    var = tf.Variable([2.0])
    loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
        initial_loss_scale=1.0, increment_period=2, multiplier=2.0)
    opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.compat.v1.train.MomentumOptimizer(1.0, momentum=1.0), loss_scale)

    def state():
        return {"scale": _floats(loss_scale()), "good_steps": int(loss_scale._num_good_steps.numpy())}

    opt.minimize(lambda: var + 1.0, var_list=[var])
    seen = [state()]
    checkpoint = tf.train.Checkpoint(optimizer=opt)
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    opt.minimize(lambda: var + 1.0, var_list=[var])
    seen.append(state())
    checkpoint.restore(path).assert_consumed()
    seen.append(state())
    return seen


def v1_none_loss_scale(tf, mode):
    return tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0), None)


def policy_v1_repr(tf):
    Policy = tf.keras.mixed_precision.experimental.Policy
    reprs = {name: repr(Policy(name)) for name in ("float32", "int8", "mixed_bfloat16", "_infer")}
    reprs["float16, loss_scale=2"] = repr(Policy("float16", loss_scale=2))
    reprs["mixed_float16"] = repr(Policy("mixed_float16")).split("(")[0]
    return reprs


def policy_v1_loss_scale(tf):
    Policy = tf.keras.mixed_precision.experimental.Policy
    DynamicLossScale = tf.mixed_precision.experimental.DynamicLossScale
    loss_scale = DynamicLossScale()
    return {
        "float32": Policy("float32").loss_scale is None,
        "float32, None": Policy("float32", loss_scale=None).loss_scale is None,
        "float32, object": Policy("float32", loss_scale=loss_scale).loss_scale is loss_scale,
        "float32, dynamic": isinstance(Policy("float32", loss_scale="dynamic").loss_scale, DynamicLossScale),
        "mixed_float16": isinstance(Policy("mixed_float16").loss_scale, DynamicLossScale),
        "mixed_float16, None": Policy("mixed_float16", loss_scale=None).loss_scale is None,
        "mixed_bfloat16": Policy("mixed_bfloat16").loss_scale is None,
    }


def policy_loss_scale_warning(tf):
    """What TensorFlow's logger says when a Policy gets a loss scale, per policy (each made twice)."""
    import logging

    class Collect(logging.Handler):
        def __init__(self):
            logging.Handler.__init__(self)
            self.messages = []

        def emit(self, record):
            if "loss scale" in record.getMessage() or "loss_scale" in record.getMessage():
                self.messages.append(record.getMessage())

    Policy = tf.keras.mixed_precision.experimental.Policy
    seen = {}
    for name in ("float32", "float16", "mixed_float16"):
        handler = Collect()
        tf.get_logger().addHandler(handler)
        try:
            Policy(name, loss_scale=2.0)
            Policy(name, loss_scale=2.0)
        finally:
            tf.get_logger().removeHandler(handler)
        seen[name] = handler.messages
    return seen


def set_policy_global(tf):
    experimental = tf.keras.mixed_precision.experimental
    seen = {"default": experimental.global_policy().name}
    try:
        experimental.set_policy("mixed_float16")
        seen["mixed_float16"] = experimental.global_policy().name
        with tf.Graph().as_default():
            seen["in a graph"] = experimental.global_policy().name
        experimental.set_policy("_infer")
        seen["_infer"] = experimental.global_policy().name
        policy = experimental.Policy("mixed_bfloat16")
        experimental.set_policy(policy)
        seen["policy object is kept"] = experimental.global_policy() is policy
    finally:
        experimental.set_policy(None)
    seen["after None"] = experimental.global_policy().name
    return seen


def set_policy_dtype_errors(tf):
    experimental = tf.keras.mixed_precision.experimental
    try:
        return {"int32": attempt(lambda: experimental.set_policy("int32")),
                "complex64": attempt(lambda: experimental.set_policy(experimental.Policy("complex64")))}
    finally:
        experimental.set_policy(None)


def policy_v1_serialization(tf):
    Policy = tf.keras.mixed_precision.experimental.Policy
    configs = {}
    for name in ("float32", "mixed_float16", "mixed_bfloat16"):
        for loss_scale in (2.0, None):
            layer = tf.keras.layers.Dense(1, dtype=Policy(name, loss_scale=loss_scale))
            configs["%s, %s" % (name, loss_scale)] = layer.get_config()["dtype"]
    return configs


def set_policy_after_graph_rewrite(tf):
    experimental = tf.keras.mixed_precision.experimental
    try:
        tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(1.0))
        error = attempt(lambda: experimental.set_policy("mixed_float16"))
        float64 = attempt(lambda: experimental.set_policy("float64"))
    finally:
        tf.train.experimental.disable_mixed_precision_graph_rewrite()
        experimental.set_policy(None)
    return {"mixed_float16": error, "float64": float64}


def _multiply_model(tf, policy=None, dtype="float32", nan_gradients=None, batch_size=4, width=1):
    """A model y = v * x with one scalar weight v = 1, built under `policy` (set globally while building)."""
    class Multiply(tf.keras.layers.Layer):
        def build(self, _):
            self.v = self.add_weight(name="v", shape=(), initializer="ones")

        def call(self, x):
            return x * tf.cast(self.v, x.dtype)

    @tf.custom_gradient
    def maybe_nan(x):
        def grad(dy):
            return dy * float("nan") if nan_gradients is not None and nan_gradients[0] else dy
        return tf.identity(x), grad

    experimental = tf.keras.mixed_precision.experimental
    if policy is not None:
        experimental.set_policy(policy)
    try:
        x = tf.keras.layers.Input(shape=(width,), batch_size=batch_size, dtype=dtype)
        layer = Multiply()
        y = layer(x)
        if nan_gradients is not None:
            y = tf.keras.layers.Lambda(maybe_nan)(y)
        return tf.keras.Model(x, y), layer
    finally:
        if policy is not None:
            experimental.set_policy(None)


def _mean_loss(tf):
    return lambda y_true, y_pred: tf.reduce_mean(y_pred)


def keras_fixed_loss_scaling(tf):
    import numpy as np

    model, layer = _multiply_model(tf)
    model.compile(tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), dynamic=False,
                                                               initial_scale=8.0), loss=_mean_loss(tf))
    model.fit(np.ones((4, 1)), np.ones((4, 1)), batch_size=4, verbose=0)
    return {"v": _floats(layer.v), "scale": _floats(model.optimizer.loss_scale)}


def keras_dynamic_loss_scaling(tf, form):
    import numpy as np

    mp = tf.keras.mixed_precision
    nan = [False]
    policy = "mixed_float16"
    opt = tf.keras.optimizers.SGD(1.0)
    if form == "policy_v1":
        policy = mp.experimental.Policy("mixed_float16", loss_scale=tf.mixed_precision.experimental.DynamicLossScale(
            initial_loss_scale=2.0, increment_period=2))
    elif form == "v1_lso":
        opt = mp.experimental.LossScaleOptimizer(opt, tf.mixed_precision.experimental.DynamicLossScale(
            initial_loss_scale=2.0, increment_period=2))
    else:
        opt = mp.LossScaleOptimizer(opt, initial_scale=2.0, dynamic_growth_steps=2)
    model, layer = _multiply_model(tf, policy=policy, dtype="float16", nan_gradients=nan)
    model.compile(opt, loss=_mean_loss(tf), run_eagerly=True)
    seen = []
    for step_is_nan in (False, False, False, True, False):
        nan[0] = step_is_nan
        model.fit(np.ones((4, 1)), np.ones((4, 1)), batch_size=4, verbose=0)
        seen.append({"v": _floats(layer.v), "scale": _floats(model.optimizer.loss_scale)})
    return seen


def keras_lso_overrides_policy_loss_scale(tf):
    mp = tf.keras.mixed_precision
    experimental = mp.experimental
    experimental.set_policy(experimental.Policy("float32", loss_scale=10.0))
    try:
        model, _ = _multiply_model(tf)
        model.compile(mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), dynamic=False, initial_scale=5.0),
                      loss="mse")
        return _floats(model.optimizer.loss_scale)
    finally:
        experimental.set_policy(None)


def keras_policy_v1_without_loss_scale(tf):
    experimental = tf.keras.mixed_precision.experimental
    experimental.set_policy(experimental.Policy("mixed_float16", loss_scale=None))
    try:
        model, _ = _multiply_model(tf)
        model.compile(tf.keras.optimizers.SGD(1.0), loss="mse")
        return isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    finally:
        experimental.set_policy(None)


def _scale_and_counter(opt):
    return {"scale": _floats(opt.loss_scale), "counter": int(opt.dynamic_counter.numpy())}


def keras_save_weights_with_dynamic_loss_scaling(tf, directory):
    import numpy as np

    model, _ = _multiply_model(tf, batch_size=2, width=2)
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=1.0,
                                                      dynamic_growth_steps=2)
    model.compile(opt, loss="mse")
    model.fit(np.zeros((6, 2)), np.zeros((6, 2)), batch_size=2, verbose=0)
    saved = _scale_and_counter(opt)
    path = os.path.join(directory, "ckpt")
    model.save_weights(path)
    model.fit(np.zeros((2, 2)), np.zeros((2, 2)), batch_size=2, verbose=0)
    changed = _scale_and_counter(opt)
    model.load_weights(path)
    return {"saved": saved, "changed": changed, "restored": _scale_and_counter(opt)}


def keras_save_slot_variables(tf, directory):
    import numpy as np

    model, layer = _multiply_model(tf, policy="mixed_float16", batch_size=2, width=2)
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0, 1.0), dynamic=False,
                                                      initial_scale=1)
    model.compile(optimizer=opt, loss="mse")
    model.fit(np.ones((2, 2)), np.zeros((2, 2)), batch_size=2, verbose=0)
    path = os.path.join(directory, "weights")
    model.save_weights(path)
    saved = _floats(opt.get_slot(layer.v, "momentum"))
    model.fit(np.ones((2, 2)), np.zeros((2, 2)), batch_size=2, verbose=0)
    changed = _floats(opt.get_slot(layer.v, "momentum"))
    model.load_weights(path)
    return {"saved": saved, "changed": changed, "restored": _floats(opt.get_slot(layer.v, "momentum"))}


def keras_save_model_with_dynamic_loss_scaling(tf, directory, save_format, experimental):
    import numpy as np

    model, layer = _multiply_model(tf, batch_size=2, width=2)
    mp = tf.keras.mixed_precision
    if experimental:
        opt = mp.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), tf.mixed_precision.experimental.
                                                 DynamicLossScale(initial_loss_scale=1.0, increment_period=2))
    else:
        opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=1.0, dynamic_growth_steps=2)
    model.compile(optimizer=opt, loss="mse")
    model.fit(np.ones((6, 2)), np.zeros((6, 2)), batch_size=2, verbose=0)
    saved = dict(_scale_and_counter(opt), v=_floats(layer.v))
    path = os.path.join(directory, "model.h5" if save_format == "h5" else "model")
    model.save(path, save_format=save_format)
    model.fit(np.ones((2, 2)), np.zeros((2, 2)), batch_size=2, verbose=0)
    loaded = tf.keras.models.load_model(path, custom_objects={"Multiply": type(layer)})
    optimizer = loaded.optimizer
    return {"saved": saved, "loaded_v": _floats(loaded.trainable_weights[0]),
            "loaded": {"scale_in_saved_or_initial": _floats(optimizer.loss_scale) in (1.0, saved["scale"]),
                       "class": type(optimizer).__name__ in ("LossScaleOptimizer", "KerasLossScaleOptimizer"),
                       "initial_scale": _floats(optimizer.initial_scale),
                       "dynamic_growth_steps": int(optimizer.dynamic_growth_steps)}}


def keras_lso_inner_apply_gradients_gets_tensors(tf):
    """What an inner optimizer overriding `apply_gradients` is given under a (one-device) MirroredStrategy."""
    seen = []

    class RecordingSGD(tf.keras.optimizers.SGD):
        def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
            for grad, _ in grads_and_vars:
                seen.append({"tensor": isinstance(grad, tf.Tensor),
                             "distributed": isinstance(grad, tf.distribute.DistributedValues)})
            return super(RecordingSGD, self).apply_gradients(grads_and_vars)

    strategy = tf.distribute.MirroredStrategy(["cpu:0"])
    with strategy.scope():
        var = tf.Variable([5.0])
        opt = tf.keras.mixed_precision.LossScaleOptimizer(RecordingSGD(1.0))
    strategy.run(lambda: opt.minimize(lambda: var * 2.0, var_list=[var]))
    return {"grads": seen, "var": _floats(var)}


TF24_WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "examples", "tf24",
                            "goldens", "tf24_weights", "weights")  # TF 2.4.0's model.save_weights, mid-training


def keras_restore_tf24_checkpoint_twice(tf):
    """`load_weights` of a checkpoint TF 2.4.0 wrote (examples/tf24/load_weights.py's model), then again after `fit`."""
    import numpy as np

    model = tf.keras.Sequential([
        tf.keras.layers.Dense(2, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.2)),
        tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(-0.1))])
    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=256, increment_period=2))
    model.compile(optimizer=opt, loss="mse")
    model.load_weights(TF24_WEIGHTS)

    def state():
        kernel = model.trainable_variables[0]
        return {"kernel": _floats(kernel), "scale": _floats(opt.loss_scale),
                "counter": int(opt.dynamic_counter.numpy()), "iterations": int(opt.iterations.numpy())}

    first = state()
    rng = np.random.RandomState(5)
    model.fit(rng.uniform(-1, 1, (32, 3)).astype("float32"), rng.uniform(-1, 1, (32, 1)).astype("float32"),
              batch_size=16, shuffle=False, verbose=0)
    model.load_weights(TF24_WEIGHTS)
    second = dict(state(), momentum=_floats(opt.get_slot(model.trainable_variables[0], "momentum")))
    return {"first": first, "again_after_fit": second}


# case name -> (TF 2.4 file, TF 2.4 test, program(tf, directory) -> JSON data)
PROGRAMS = {}
for _mode in ("eager", "graph"):
    for _name, _test, _fn in (
        ("fixed_minimize", "testFixedLossScaleAppliedToLossWithMinimize", v1_fixed_minimize),
        ("dynamic", "testDynamicLossScale", v1_dynamic),
        ("dynamic_update", "testDynamicUpdate", v1_dynamic_update),
        ("dynamic_with_slots", "testDynamicLossScaleWithSlots", v1_dynamic_with_slots),
    ):
        PROGRAMS["v1_%s_%s" % (_name, _mode)] = (V1_LSO_TEST, _test, lambda tf, d, f=_fn, m=_mode: f(tf, m))
PROGRAMS["v1_fixed_get_gradients_graph"] = (
    V1_LSO_TEST, "testFixedLossScaleAppliedToLossWithGetGradients", lambda tf, d: v1_fixed_get_gradients(tf, "graph"))
PROGRAMS["v1_checkpoint_eager"] = (V1_LSO_TEST, "testCheckpoint", lambda tf, d: v1_checkpoint(tf, "eager", d))
PROGRAMS["v1_none_loss_scale"] = (V1_LSO_TEST, "testPassingNoneToLossScale", lambda tf, d: v1_none_loss_scale(tf, 0))
PROGRAMS["policy_v1_repr"] = (POLICY_TEST, "test_repr", lambda tf, d: policy_v1_repr(tf))
PROGRAMS["policy_v1_loss_scale"] = (POLICY_TEST, "test_loss_scale", lambda tf, d: policy_v1_loss_scale(tf))
PROGRAMS["policy_loss_scale_warning"] = (POLICY_TEST, "test_loss_scale_warning",
                                         lambda tf, d: policy_loss_scale_warning(tf))
PROGRAMS["set_policy_global"] = (POLICY_TEST, "test_global_policy", lambda tf, d: set_policy_global(tf))
PROGRAMS["set_policy_dtype_errors"] = (POLICY_TEST, "test_global_policy_dtype_error",
                                       lambda tf, d: set_policy_dtype_errors(tf))
PROGRAMS["policy_v1_serialization"] = (POLICY_TEST, "test_serialization", lambda tf, d: policy_v1_serialization(tf))
PROGRAMS["set_policy_after_graph_rewrite"] = (POLICY_TEST, "test_error_if_graph_rewrite_enabled",
                                              lambda tf, d: set_policy_after_graph_rewrite(tf))
PROGRAMS["keras_fixed_loss_scaling"] = (KERAS_TEST, "test_fixed_loss_scaling", lambda tf, d: keras_fixed_loss_scaling(tf))
for _form in ("lso", "v1_lso", "policy_v1"):
    PROGRAMS["keras_dynamic_loss_scaling_" + _form] = (
        KERAS_TEST, "test_dynamic_loss_scaling", lambda tf, d, f=_form: keras_dynamic_loss_scaling(tf, f))
PROGRAMS["keras_lso_overrides_policy_loss_scale"] = (
    KERAS_TEST, "test_loss_scale_optimizer_overrides_policy_v1_loss_scale",
    lambda tf, d: keras_lso_overrides_policy_loss_scale(tf))
PROGRAMS["keras_policy_v1_without_loss_scale"] = (
    KERAS_TEST, "test_policy_v1_without_loss_scale", lambda tf, d: keras_policy_v1_without_loss_scale(tf))
PROGRAMS["keras_lso_inner_apply_gradients_gets_tensors"] = (
    "keras/mixed_precision/loss_scale_optimizer_test.py", "testApplyGradientsGetsUnwrappedTensors",
    lambda tf, d: keras_lso_inner_apply_gradients_gets_tensors(tf))
PROGRAMS["keras_save_slot_variables"] = (
    KERAS_TEST, "test_save_slot_variables_with_autocast_vars", lambda tf, d: keras_save_slot_variables(tf, d))
for _format, _experimental in (("tf", False), ("tf", True), ("h5", False)):
    PROGRAMS["keras_save_model_%s%s" % (_format, "_v1_lso" if _experimental else "")] = (
        KERAS_TEST, "test_save_model_with_dynamic_loss_scaling",
        lambda tf, d, f=_format, e=_experimental: keras_save_model_with_dynamic_loss_scaling(tf, d, f, e))
PROGRAMS["keras_restore_tf24_checkpoint_twice"] = (
    KERAS_TEST, "test_restore_old_loss_scale_checkpoint", lambda tf, d: keras_restore_tf24_checkpoint_twice(tf))
PROGRAMS["keras_save_weights_with_dynamic_loss_scaling"] = (
    KERAS_TEST, "test_save_weights_with_dynamic_loss_scaling",
    lambda tf, d: keras_save_weights_with_dynamic_loss_scaling(tf, d))
