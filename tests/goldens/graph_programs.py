"""TF 2.4 programs that run TF 2.4.0's Keras loss-scaling tests in their TF1 graph-mode variant (issue 35).

TF 2.4 ran each Keras LossScaleOptimizer test in graph mode as well as eagerly: the ops built once in a
`tf.Graph`, then run in a `tf.compat.v1.Session`. tests/recorders/record_tf24_graph.py runs these on TF 2.4.0
into tests/goldens/graph.json; tests/conformance/test_conformance_graph.py runs them in legacy mode on
Keras 2 stacks and compares. `PROGRAMS` maps a case to (TF 2.4 test file, TF 2.4 test, program).
Keep it Python 3.8 compatible and free of TensorFlow imports: callers pass `tf`.
"""

from conformance_programs import _floats, _in_mode, _seen_upstream

KERAS_LSO_TEST = "keras/mixed_precision/loss_scale_optimizer_test.py"
KERAS_TEST = "keras/mixed_precision/keras_test.py"


def _nan_gradient(tf, is_nan):
    """An identity whose gradient is NaN while the placeholder `is_nan` is true."""

    @tf.custom_gradient
    def identity(x):
        def grad(dy):
            return tf.where(is_nan, dy * float("nan"), dy)

        return tf.identity(x), grad

    return identity


def _wrap(tf, form, inner, **scale):
    """TF 2.4's two Keras forms: the experimental `LossScaleOptimizer(opt, loss_scale)` and the stable one."""
    mp = tf.keras.mixed_precision
    if form == "experimental":
        if scale.get("dynamic", True):
            loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
                initial_loss_scale=scale["initial_scale"], increment_period=scale.get("dynamic_growth_steps", 2000))
        else:
            loss_scale = scale["initial_scale"]
        return mp.experimental.LossScaleOptimizer(inner, loss_scale)
    return mp.LossScaleOptimizer(inner, **scale)


def fixed_minimize(tf, form):
    def program(run):
        var = tf.Variable([5.0])
        opt = _wrap(tf, form, tf.keras.optimizers.SGD(2.0), dynamic=False, initial_scale=10.0)
        identity, seen = _seen_upstream(tf)
        step = opt.minimize(lambda: identity(var), var_list=[var])
        run.init()
        run(step)
        return {"var": _floats(run(var)), "upstream": _floats(run(seen)),
                "scale": _floats(run(opt.loss_scale))}
    return program


def dynamic_steps(tf, form):
    def program(run):
        var = tf.Variable([5.0])
        is_nan = tf.compat.v1.placeholder(tf.bool, shape=())
        nan = _nan_gradient(tf, is_nan)
        opt = _wrap(tf, form, tf.keras.optimizers.SGD(1.0), initial_scale=4.0, dynamic_growth_steps=2)
        identity, seen = _seen_upstream(tf)
        step = opt.minimize(lambda: nan(identity(var)), var_list=[var])
        run.init()
        seen_steps = []
        for step_is_nan in (False, False, True, False):
            run.session.run(step, {is_nan: step_is_nan})
            seen_steps.append({"var": _floats(run(var)), "scale": _floats(run(opt.loss_scale)),
                               "iterations": int(run(opt.iterations))})
        return seen_steps
    return program


def scaled_loss_and_unscaled_gradients(tf, form):
    def program(run):
        opt = _wrap(tf, form, tf.keras.optimizers.SGD(1.0), dynamic=False, initial_scale=2.0)
        scaled = opt.get_scaled_loss(lambda: tf.constant(5.0))
        unscaled = opt.get_unscaled_gradients([tf.constant([4.0]), None])
        run.init()
        return {"scaled": _floats(run(scaled())), "unscaled": _floats(run(unscaled[0])),
                "none_stays_none": unscaled[1] is None}
    return program


def hyperparameters(tf, form):
    def program(run):
        opt = _wrap(tf, form, tf.keras.optimizers.SGD(1.0, momentum=0.5), initial_scale=2.0)
        var = tf.Variable([1.0])
        step = opt.minimize(lambda: var * 2.0, var_list=[var])
        run.init()
        before = {"learning_rate": _floats(run(opt.learning_rate)), "momentum": _floats(run(opt.momentum))}
        opt.learning_rate = 0.5
        run(step)
        return {"before": before, "after": _floats(run(opt.learning_rate)),
                "var": _floats(run(var)), "slot_names": sorted(opt.get_slot_names())}
    return program


def fit_dynamic(tf, form):
    import numpy as np

    def program(run):
        var_init = np.ones((1, 1), dtype="float32")
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, use_bias=False, kernel_initializer=tf.keras.initializers.Constant(var_init), input_shape=(1,))])
        opt = _wrap(tf, form, tf.keras.optimizers.SGD(0.5), initial_scale=8.0, dynamic_growth_steps=2)
        model.compile(opt, loss="mse")
        history = model.fit(np.full((4, 1), 2.0), np.zeros((4, 1)), batch_size=2, epochs=2, verbose=0)
        return {"loss": _floats(history.history["loss"]), "kernel": _floats(model.get_weights()[0]),
                "scale": _floats(run(opt.loss_scale)), "iterations": int(run(opt.iterations))}
    return program


PROGRAMS = {}
for _form in ("experimental", "stable"):
    PROGRAMS["graph_fixed_minimize_" + _form] = (
        KERAS_LSO_TEST, "testFixedLossScaleAppliedToLossWithMinimize", fixed_minimize)
    PROGRAMS["graph_dynamic_steps_" + _form] = (KERAS_LSO_TEST, "testDynamicUpdate", dynamic_steps)
    PROGRAMS["graph_scaled_loss_" + _form] = (
        KERAS_LSO_TEST, "testGetScaledLoss", scaled_loss_and_unscaled_gradients)
    PROGRAMS["graph_hyperparameters_" + _form] = (KERAS_LSO_TEST, "testHyperParametersExposed", hyperparameters)
    PROGRAMS["graph_fit_dynamic_" + _form] = (KERAS_TEST, "test_dynamic_loss_scaling", fit_dynamic)


def run_program(tf, name):
    """Runs the program `name` for its form, built in a new `tf.Graph` and run in a TF1 session."""
    _, _, build = PROGRAMS[name]
    return _in_mode(tf, "graph", build(tf, name.rsplit("_", 1)[1]))


# What `compile` makes of an optimizer under each TF 2.4 policy in a TF1 graph (tests/goldens/graph_compile.json).
COMPILE_POLICIES = {
    "Policy(mixed_float16)": lambda tf: tf.keras.mixed_precision.experimental.Policy("mixed_float16"),
    "Policy(mixed_float16, 128)": lambda tf: tf.keras.mixed_precision.experimental.Policy(
        "mixed_float16", loss_scale=128),
    "Policy(mixed_float16, DynamicLossScale(64, 10))": lambda tf: tf.keras.mixed_precision.experimental.Policy(
        "mixed_float16", loss_scale=tf.mixed_precision.experimental.DynamicLossScale(64, 10)),
    "Policy(mixed_float16, None)": lambda tf: tf.keras.mixed_precision.experimental.Policy(
        "mixed_float16", loss_scale=None),
    "Policy(float32, 8)": lambda tf: tf.keras.mixed_precision.experimental.Policy("float32", loss_scale=8),
}


def compile_under_policy(tf, policy, optimizers):
    """`compile` of SGD (or a list of two optimizers) in a TF1 graph under the TF 2.4 policy `policy`: whether it
    wrapped the optimizer, with what loss scale, and that one epoch of `fit` gives a finite loss."""
    import numpy as np

    def program(run):
        mp = tf.keras.mixed_precision.experimental
        mp.set_policy(COMPILE_POLICIES[policy](tf))
        try:
            # zeros and a small target: gradients of about 0.01, finite at any scale TF 2.4 began with
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="zeros", input_shape=(2,))])
            if optimizers == "list":
                model.compile([tf.keras.optimizers.SGD(0.1), tf.keras.optimizers.Adam()], loss="mse")
            else:
                model.compile(tf.keras.optimizers.SGD(0.1), loss="mse")
            history = model.fit(np.ones((4, 2), "float32"), np.full((4, 1), 0.01, "float32"), verbose=0)
            opt = model.optimizer
            found = {"wraps": hasattr(opt, "loss_scale"), "finite_loss": bool(np.isfinite(history.history["loss"][0]))}
            if found["wraps"]:  # read after `fit`, which initializes the loss-scale variables in the session
                found.update(dynamic=bool(opt.dynamic), loss_scale=_floats(run(opt.loss_scale)),
                             growth_steps=opt.dynamic_growth_steps if opt.dynamic else None)
            return found
        finally:
            mp.set_policy("float32")

    return _in_mode(tf, "graph", program)
