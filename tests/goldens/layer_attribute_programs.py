"""TF 2.4 code reading and setting a layer's private mixed-precision attributes, returning what it got as JSON data.

tests/recorders/record_tf24_layer_attributes.py runs them on TF 2.4.0 into tests/goldens/tf24_layer_attributes.json;
tests/legacy/test_keras3_layer_attributes.py runs them in legacy mode on Keras 3. Callers pass `tf`.
Keep it Python 3.8 compatible and free of TensorFlow imports.
"""

# The private names TF 2.4 mixed-precision code read on a layer (`_dtype_policy` is compared with `dtype_policy`).
READ = ("_compute_dtype", "_compute_dtype_object", "_dtype_policy", "_autocast", "_dtype")


def _policy(tf, name):
    return tf.keras.mixed_precision.Policy(name)


def _functional(tf, policy):
    inputs = tf.keras.Input((3,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2, dtype=policy)(inputs))


class _Subclassed(object):
    """Made a `tf.keras.Model` subclass on first use, as the caller's `tf` decides."""

    @staticmethod
    def build(tf):
        class Subclassed(tf.keras.Model):
            def call(self, inputs):
                return inputs

        return Subclassed()


# Case -> how TF 2.4 code built the layer (TF 2.4's layers take a Policy object, not a policy's name).
LAYERS = {
    "dense": lambda tf: tf.keras.layers.Dense(2),
    "dense_float64": lambda tf: tf.keras.layers.Dense(2, dtype="float64"),
    "dense_mixed_float16": lambda tf: tf.keras.layers.Dense(2, dtype=_policy(tf, "mixed_float16")),
    "dense_mixed_bfloat16": lambda tf: tf.keras.layers.Dense(2, dtype=_policy(tf, "mixed_bfloat16")),
    "dense_experimental_policy_dynamic": lambda tf: tf.keras.layers.Dense(
        2, dtype=tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale="dynamic")),
    "layer_autocast_false": lambda tf: tf.keras.layers.Layer(dtype=_policy(tf, "mixed_float16"), autocast=False),
    "functional_mixed_float16": lambda tf: _functional(tf, _policy(tf, "mixed_float16")),
    "sequential": lambda tf: tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)]),
    "subclassed_model": _Subclassed.build,
}


def error_of(error):
    """An exception as [type name, first line of its message]."""
    return [type(error).__name__, str(error).split("\n")[0]]


def _as_data(layer, name, value):
    if name == "_compute_dtype_object":
        return None if value is None else value.name
    if name == "_dtype_policy":
        return {"is_dtype_policy": value is layer.dtype_policy, "name": value.name}
    return value


def read(tf, layer):
    """Each private name's value (or the error reading it), with the public values it is compared with."""
    result = {"public": {"compute_dtype": layer.compute_dtype, "variable_dtype": layer.variable_dtype,
                         "dtype_policy": layer.dtype_policy.name}}
    for name in READ:
        try:
            result[name] = {"value": _as_data(layer, name, getattr(layer, name))}
        except Exception as error:  # noqa: BLE001  (the recorded result is the error)
            result[name] = {"error": error_of(error)}
    return result


def layers_read(tf):
    """What reading the private names gave, per case; the global policy is `mixed_float16` for one more case."""
    result = {case: read(tf, build(tf)) for case, build in sorted(LAYERS.items())}
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        result["dense_global_mixed_float16"] = read(tf, tf.keras.layers.Dense(2))
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    return result


def identity_layer(tf, autocast_off_by_attribute):
    """A TF 2.4 custom layer under `mixed_float16` passing its input through; TF 2.4 code turned input casting off
    by setting the private flag in `__init__`."""

    class Identity(tf.keras.layers.Layer):
        def __init__(self):
            super(Identity, self).__init__(dtype=_policy(tf, "mixed_float16"))
            if autocast_off_by_attribute:
                self._autocast = False

        def call(self, inputs):
            return inputs

    return Identity()


def variable_dtypes_with_autocast_false(tf):
    """The dtype a layer made with `autocast=False` under a global `mixed_float16` reads its variable in: called
    inside a `Sequential` model, then alone."""
    seen = []

    class ReadsItsVariable(tf.keras.layers.Layer):
        def __init__(self):
            super(ReadsItsVariable, self).__init__(autocast=False)

        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, inputs):
            seen.append(tf.identity(self.w).dtype.name)
            return inputs

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        tf.keras.Sequential([tf.keras.Input((2,)), ReadsItsVariable()])(tf.ones((1, 2)))
        del seen[:-1]  # TF 2.4 called the layer once more while building the model
        ReadsItsVariable()(tf.ones((1, 2)))
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    return {"in_model": seen[0], "alone": seen[1]}


def output_dtype(tf, layer):
    """The dtype `layer` gives a float32 input."""
    return layer(tf.ones((1, 3))).dtype.name


def set_dtype_policy(tf, layer):
    """TF 2.4 code changing a layer's policy after it was made, as the public API of TF 2.4 had no way to."""
    layer._set_dtype_policy(_policy(tf, "mixed_float16"))


def assign_dtype_policy(tf, layer):
    """TF 2.4 code assigning the private policy attribute directly."""
    layer._dtype_policy = _policy(tf, "mixed_float16")


def assign_compute_dtype(tf, layer):
    layer._compute_dtype = "float16"


def assign_compute_dtype_object(tf, layer):
    layer._compute_dtype_object = tf.float16


# Case -> a TF 2.4 program's write to a fresh float32 `Dense(2)`.
WRITES = {
    "_set_dtype_policy": set_dtype_policy,
    "_dtype_policy": assign_dtype_policy,
    "_compute_dtype": assign_compute_dtype,
    "_compute_dtype_object": assign_compute_dtype_object,
}


def write(tf, program):
    """What a write did: the error, or the layer's compute dtype and what calling it gave after it."""
    layer = tf.keras.layers.Dense(2)
    try:
        program(tf, layer)
    except Exception as error:  # noqa: BLE001
        return {"error": error_of(error)}
    result = {"compute_dtype": layer.compute_dtype}
    try:
        result["output_dtype"] = output_dtype(tf, layer)
    except Exception as error:  # noqa: BLE001
        result["call_error"] = error_of(error)
    return result


def run_all(tf):
    return {
        "read": layers_read(tf),
        "autocast_attribute": {
            "set_false": output_dtype(tf, identity_layer(tf, True)),
            "not_set": output_dtype(tf, identity_layer(tf, False)),
            "variable_dtypes_with_autocast_false": variable_dtypes_with_autocast_false(tf),
        },
        "write": {name: write(tf, program) for name, program in sorted(WRITES.items())},
    }
