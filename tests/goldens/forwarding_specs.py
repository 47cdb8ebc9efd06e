"""Inner optimizers with their own signatures, and the steps run on them, for the argument-forwarding goldens.

Shared by tests/recorders/record_tf24_forwarding.py (on TF 2.4.0) and tests/optimizer/test_forwarding.py (today),
so the two sides run the same code. Python 3.8 compatible; everything takes the `tf` (and the wrapper classes) to
run on. The inner optimizers are modelled on real TF 2.4-era ones: an Adam with weight decay whose `apply_gradients`
takes a global-norm `clip_norm` second (TensorFlowTTS's `AdamWeightDecay`), and an SGD that sums gradients over
two calls and applies the sum on the second (the gradient-accumulation wrappers of speech and NLP trainers).
Each records what its overridden methods received into `RECEIVED`.
"""

RECEIVED = []


def _describe(value):
    """A JSON-able description of an argument an inner method received."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return "Tensor"  # graph tensors' class names differ between TensorFlow versions
    if isinstance(value, (list, tuple)):
        return "%s of %d" % (type(value).__name__, len(value))
    return type(value).__name__


def _record(method, args, kwargs):
    RECEIVED.append(
        {
            "method": method,
            "args": [_describe(a) for a in args],
            "kwargs": {k: _describe(v) for k, v in sorted(kwargs.items())},
        }
    )


def inner_classes(tf):
    """(AdamWeightDecay, AccumulatingSGD) subclassing this `tf.keras`'s Adam and SGD."""

    class AdamWeightDecay(tf.keras.optimizers.Adam):
        """Adam that decays the weights and clips the gradients' global norm at `clip_norm` before each step."""

        def __init__(self, learning_rate, weight_decay_rate, **kwargs):
            super().__init__(learning_rate=learning_rate, **kwargs)
            self.weight_decay_rate = weight_decay_rate

        def apply_gradients(self, grads_and_vars, clip_norm=0.5, **kwargs):
            _record("apply_gradients", [grads_and_vars, clip_norm], kwargs)
            grads, variables = zip(*grads_and_vars)
            grads, _ = tf.clip_by_global_norm(list(grads), clip_norm)
            for variable in variables:
                variable.assign_sub(variable * (0.1 * self.weight_decay_rate))
            return super().apply_gradients(zip(grads, variables), **kwargs)

        def get_gradients(self, loss, params):
            _record("get_gradients", [loss, params], {})
            grads, _ = tf.clip_by_global_norm(tf.gradients(loss, params), 4.0)
            return grads

    class AccumulatingSGD(tf.keras.optimizers.SGD):
        """SGD that sums the gradients of two calls and applies the sum on the second (eager only)."""

        def __init__(self, learning_rate):
            super().__init__(learning_rate=learning_rate)
            self._pending = []

        def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
            _record(
                "apply_gradients",
                [grads_and_vars, name],
                {"experimental_aggregate_gradients": experimental_aggregate_gradients},
            )
            grads_and_vars = list(grads_and_vars)
            self._pending.append(grads_and_vars)
            if len(self._pending) < 2:
                return None
            first, second = self._pending
            self._pending = []
            summed = [(g1 + g2, v) for (g1, v), (g2, _) in zip(first, second)]
            return super().apply_gradients(summed)

    return AdamWeightDecay, AccumulatingSGD


# Each step's loss multiplies the weights by these; NaN makes the gradients non-finite (a skipped step).
LOSS_WEIGHTS = ([3.0, -4.0, 2.0], [1.0, 2.0, -6.0], [float("nan"), 1.0, 1.0], [-2.0, 5.0, 1.0], [4.0, 4.0, -1.0])
INITIAL = [1.0, -2.0, 0.5]


def _loss(tf, weights, loss_weights):
    return tf.reduce_sum(tf.square(weights) * tf.convert_to_tensor(loss_weights, tf.float32))


def _state(tf, optimizer, weights):
    return {
        "weights": [float(x) for x in weights.numpy()],
        "loss_scale": float(tf.convert_to_tensor(optimizer.loss_scale).numpy()),
        "iterations": int(optimizer.iterations.numpy()),
    }


def run_apply_case(tf, optimizer, call):
    """A TF 2.4 custom loop over LOSS_WEIGHTS: scale, unscale, then `call(optimizer, grads_and_vars)` each step."""
    weights = tf.Variable(INITIAL)
    del RECEIVED[:]
    states = []
    for loss_weights in LOSS_WEIGHTS:
        with tf.GradientTape() as tape:
            scaled = optimizer.get_scaled_loss(_loss(tf, weights, loss_weights))
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, [weights]))
        call(optimizer, list(zip(grads, [weights])))
        states.append(_state(tf, optimizer, weights))
    return {"states": states, "received": list(RECEIVED)}


def run_minimize_case(tf, optimizer, call):
    """`call(optimizer, loss_fn, var_list)` (a `minimize`) once per step of LOSS_WEIGHTS."""
    weights = tf.Variable(INITIAL)
    del RECEIVED[:]
    states = []
    for loss_weights in LOSS_WEIGHTS:
        call(optimizer, lambda: _loss(tf, weights, loss_weights), [weights])
        states.append(_state(tf, optimizer, weights))
    return {"states": states, "received": list(RECEIVED)}


def run_get_gradients_case(tf, optimizer):
    """`optimizer.get_gradients(loss, params)` inside a `tf.function`, for the first two steps' losses."""
    weights = tf.Variable(INITIAL)
    del RECEIVED[:]

    @tf.function
    def gradients(loss_weights):
        return optimizer.get_gradients(_loss(tf, weights, loss_weights), [weights])

    grads = [[float(x) for x in gradients(tf.constant(w))[0].numpy()] for w in LOSS_WEIGHTS[:2]]
    return {"gradients": grads, "received": list(RECEIVED)}


def run_aggregate_case(tf, optimizer):
    """`optimizer._aggregate_gradients(grads_and_vars)` outside any strategy: what comes back."""
    weights = tf.Variable(INITIAL)
    other = tf.Variable([2.0])
    result = optimizer._aggregate_gradients([(tf.constant([1.0, 2.0, 3.0]), weights), (tf.constant([5.0]), other)])
    return {"gradients": [[float(x) for x in g.numpy()] for g, _ in result], "count": len(list(result))}


# name -> (inner class index, learning rate, extra constructor kwargs, how the loop calls the wrapper)
APPLY_CASES = {
    "adamw_positional_clip_norm": (0, {"learning_rate": 0.1, "weight_decay_rate": 0.01}, "positional"),
    "adamw_clip_norm_by_name_keyword": (0, {"learning_rate": 0.1, "weight_decay_rate": 0.01}, "name_keyword"),
    "accumulating_default": (1, {"learning_rate": 0.05}, "default"),
    "accumulating_named_not_aggregated": (1, {"learning_rate": 0.05}, "named_not_aggregated"),
}

APPLY_CALLS = {
    "positional": lambda opt, gv: opt.apply_gradients(gv, 1.0),
    "name_keyword": lambda opt, gv: opt.apply_gradients(gv, name=2.0),
    "default": lambda opt, gv: opt.apply_gradients(gv),
    "named_not_aggregated": lambda opt, gv: opt.apply_gradients(gv, "step", experimental_aggregate_gradients=False),
}

MINIMIZE_CALLS = {
    "name_keyword": lambda opt, loss, var_list: opt.minimize(loss, var_list, name="train"),
    "grad_loss": lambda opt, loss, var_list: opt.minimize(loss, var_list, 0.5),
}

# Both forms of TF 2.4's wrapper: the scale settings of each.
FORMS = {
    "keras": {"initial_scale": 16.0, "dynamic_growth_steps": 2},
    "experimental": {"initial_loss_scale": 16.0, "increment_period": 2},
}


def make_optimizer(tf, form, inner, keras_class, experimental_class, dynamic_loss_scale_class):
    """The wrapper of `form` around `inner`, with the scale of FORMS[form]."""
    if form == "keras":
        return keras_class(inner, **FORMS[form])
    return experimental_class(inner, dynamic_loss_scale_class(**FORMS[form]))


def run_all(tf, keras_class, experimental_class, dynamic_loss_scale_class):
    """Every case, on the given wrapper classes: what the recorder writes and the tests compare."""

    def optimizer(form, inner):
        return make_optimizer(tf, form, inner, keras_class, experimental_class, dynamic_loss_scale_class)

    def inner(index, kwargs):
        return inner_classes(tf)[index](**kwargs)

    apply_cases, minimize_cases, other_cases = [], [], []
    for form in sorted(FORMS):
        for name, (index, kwargs, call) in sorted(APPLY_CASES.items()):
            result = run_apply_case(tf, optimizer(form, inner(index, kwargs)), APPLY_CALLS[call])
            apply_cases.append(dict(result, form=form, case=name))
        for call in sorted(MINIMIZE_CALLS):
            result = run_minimize_case(tf, optimizer(form, inner(1, {"learning_rate": 0.05})), MINIMIZE_CALLS[call])
            minimize_cases.append(dict(result, form=form, call=call))
        adamw = inner(0, {"learning_rate": 0.1, "weight_decay_rate": 0.01})
        other_cases.append(dict(run_get_gradients_case(tf, optimizer(form, adamw)), form=form, case="get_gradients"))
        sgd = optimizer(form, tf.keras.optimizers.SGD(0.1))
        other_cases.append(dict(run_get_gradients_case(tf, sgd), form=form, case="get_gradients_plain"))
        other_cases.append(dict(run_aggregate_case(tf, sgd), form=form, case="aggregate_gradients"))
    return {"apply": apply_cases, "minimize": minimize_cases, "other": other_cases}
