"""TF 2.4 programs that train an `OptimizerV2` (a built-in one, or a custom subclass written against TF 2.4) in
both loss-scale optimizer forms, and return what they saw as plain JSON data.

tests/recorders/record_tf24_optimizer_v2.py runs them on TF 2.4.0 (where `tf.keras.optimizers` is `OptimizerV2`)
into tests/goldens/tf24_optimizer_v2.json; tests/optimizer/test_legacy_inner_optimizers.py runs them on Keras 2
stacks with `tf.keras.optimizers.legacy` and lossscale_compat's classes. Callers pass `tf`, the optimizers module
and the loss-scale optimizer classes. Keep it Python 3.8 compatible and free of TensorFlow imports.
"""

GRADIENTS = ([1.0, -2.0], [0.5, 0.25], [float("inf"), 1.0], [-1.0, 0.5], [0.25, 0.25], [0.5, -0.5])

# Form name -> (class, positional/keyword arguments after the inner optimizer).
FORMS = {
    "v2_dynamic": ("LossScaleOptimizer", {"initial_scale": 4.0, "dynamic_growth_steps": 2}),
    "v2_fixed": ("LossScaleOptimizer", {"dynamic": False, "initial_scale": 8.0}),
    "v1_dynamic": ("experimental", "dynamic"),
    "v1_fixed": ("experimental", 8),
}
INNER = ("custom_momentum_sgd", "SGD", "Adam", "RMSprop")
MODES = ("eager", "function")


def custom_momentum_sgd_class(base):
    """A custom optimizer as TF 2.4 code wrote them: `_set_hyper`, `_create_slots`, `_resource_apply_dense`."""

    class CustomMomentumSGD(base):
        _HAS_AGGREGATE_GRAD = True

        def __init__(self, learning_rate=0.1, momentum=0.5, name="CustomMomentumSGD", **kwargs):
            super(CustomMomentumSGD, self).__init__(name, **kwargs)
            self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
            self._set_hyper("momentum", momentum)

        def _create_slots(self, var_list):
            for var in var_list:
                self.add_slot(var, "velocity")

        def _resource_apply_dense(self, grad, var, apply_state=None):
            learning_rate = self._get_hyper("learning_rate", var.dtype.base_dtype)
            momentum = self._get_hyper("momentum", var.dtype.base_dtype)
            velocity = self.get_slot(var, "velocity")
            new_velocity = velocity.assign(momentum * velocity - learning_rate * grad)
            return var.assign_add(new_velocity)

        def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
            raise NotImplementedError("dense gradients only")

        def get_config(self):
            config = super(CustomMomentumSGD, self).get_config()
            config["learning_rate"] = self._serialize_hyperparameter("learning_rate")
            config["momentum"] = self._serialize_hyperparameter("momentum")
            return config

    return CustomMomentumSGD


def inner_optimizer(name, optimizers, custom_class):
    """A fresh inner optimizer: the custom subclass, or a built-in `OptimizerV2` from `optimizers`."""
    if name == "custom_momentum_sgd":
        return custom_class(learning_rate=0.1, momentum=0.5)
    if name == "SGD":
        return optimizers.SGD(0.1, momentum=0.9)
    return getattr(optimizers, name)(0.01)


def wrap(form, inner, experimental_cls, cls):
    """The loss-scale optimizer of `form` (see FORMS) around `inner`."""
    kind, arguments = FORMS[form]
    return experimental_cls(inner, arguments) if kind == "experimental" else cls(inner, **arguments)


def _floats(tf, value):
    return [float(x) for x in tf.reshape(tf.cast(tf.convert_to_tensor(value), tf.float64), [-1]).numpy()]


def custom_loop(tf, optimizer, mode):
    """TF 2.4's documented custom loop over GRADIENTS; the state after each step."""
    var = tf.Variable([1.0, 2.0], name="var")

    def step(grads):
        with tf.GradientTape() as tape:
            loss = optimizer.get_scaled_loss(tf.reduce_sum(var * grads))
        scaled = tape.gradient(loss, [var])
        optimizer.apply_gradients(zip(optimizer.get_unscaled_gradients(scaled), [var]))

    if mode == "function":
        step = tf.function(step)
    states = []
    for grads in GRADIENTS:
        step(tf.constant(grads))
        slots = sorted(optimizer.get_slot_names())
        states.append({
            "var": _floats(tf, var),
            "loss_scale": float(optimizer.loss_scale),
            "iterations": int(optimizer.iterations.numpy()),
            "slots": {name: _floats(tf, optimizer.get_slot(var, name)) for name in slots},
        })
    return states


def hyperparameters(tf, optimizer):
    """TF 2.4's hyperparameters read through the loss-scale optimizer: variables, evaluable as tensors."""
    names = [n for n in ("learning_rate", "momentum", "beta_1", "rho") if n in optimizer.inner_optimizer._hyper]
    return {name: {"is_variable": isinstance(getattr(optimizer, name), tf.Variable),
                   "value": float(tf.keras.backend.get_value(getattr(optimizer, name)))} for name in names}


def checkpoint_keys(tf, optimizer, directory):
    """The keys of a `tf.train.Checkpoint(optimizer=..., var=...)` written after one step."""
    var = tf.Variable([1.0, 2.0], name="var")
    optimizer.apply_gradients([(tf.constant([0.5, 0.5]), var)])
    path = tf.train.Checkpoint(optimizer=optimizer, var=var).save(directory + "/ckpt")
    return sorted(name for name, _ in tf.train.list_variables(path) if name != "_CHECKPOINTABLE_OBJECT_GRAPH")


def fit(tf, np, optimizer):
    """`compile` + `fit` of a one-layer model with the loss-scale optimizer; per-epoch loss and the final state."""
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones",
                                                       bias_initializer="zeros")])
    model.compile(optimizer=optimizer, loss="mse")
    x = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]], np.float32)
    y = np.array([[1.0], [0.0], [2.0], [-0.5]], np.float32)
    history = model.fit(x, y, batch_size=2, epochs=3, shuffle=False, verbose=0)
    return {
        "loss": [float(v) for v in history.history["loss"]],
        "weights": [_floats(tf, w) for w in model.get_weights()],
        "iterations": int(optimizer.iterations.numpy()),
        "loss_scale": float(optimizer.loss_scale),
    }


def run_all(tf, np, optimizers, experimental_cls, cls, custom_base, directory):
    """Every program, by case name ("<inner>/<form>")."""
    custom_class = custom_momentum_sgd_class(custom_base)
    results = {}
    for inner_name in INNER:
        for form in FORMS:
            def fresh():
                return wrap(form, inner_optimizer(inner_name, optimizers, custom_class), experimental_cls, cls)

            case = {mode: custom_loop(tf, fresh(), mode) for mode in MODES}
            case["hyperparameters"] = hyperparameters(tf, fresh())
            case["checkpoint_keys"] = checkpoint_keys(tf, fresh(), "%s/%s_%s" % (directory, inner_name, form))
            case["fit"] = fit(tf, np, fresh())
            results["%s/%s" % (inner_name, form)] = case
    return results
