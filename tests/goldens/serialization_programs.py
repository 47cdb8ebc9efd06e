"""TF 2.4 programs that serialize TF 2.4's experimental `Policy` and both loss-scale optimizer forms, and return what
they got as plain JSON data.

tests/recorders/record_tf24_serialization.py runs them on TF 2.4.0 into tests/goldens/tf24_serialization.json;
tests/legacy/test_tf24_serialization.py runs them unmodified in legacy mode on today's stacks. Callers pass `tf`.
Keep it Python 3.8 compatible and free of TensorFlow imports.
"""

import json

# Case -> the experimental Policy's arguments (name, loss_scale), as TF 2.4 code passed them.
POLICIES = {
    "mixed_float16": ("mixed_float16", "auto"),
    "mixed_float16_dynamic": ("mixed_float16", "dynamic"),
    "mixed_float16_fixed": ("mixed_float16", 128.0),
    "mixed_float16_none": ("mixed_float16", None),
    "float32": ("float32", "auto"),
    "mixed_bfloat16_fixed": ("mixed_bfloat16", 2.0),
}

# Case -> (form, inner optimizer's class and arguments, the form's arguments after the inner optimizer).
OPTIMIZERS = {
    "v1_dynamic_sgd": ("experimental", ("SGD", {"learning_rate": 0.5, "momentum": 0.9}), ("dynamic",)),
    "v1_fixed_adam": ("experimental", ("Adam", {"learning_rate": 0.25}), (128,)),
    "v2_dynamic_sgd": ("keras", ("SGD", {"learning_rate": 0.5, "momentum": 0.9}), {}),
    "v2_dynamic_growth_adam": ("keras", ("Adam", {}), {"initial_scale": 8.0, "dynamic_growth_steps": 3}),
    "v2_fixed_rmsprop": ("keras", ("RMSprop", {"learning_rate": 0.125}), {"dynamic": False, "initial_scale": 64.0}),
}


def error_of(error):
    """An exception as [type name, first line of its message]."""
    return [type(error).__name__, str(error).split("\n")[0]]


def policy_case(tf, name, loss_scale):
    """What TF 2.4 code saw serializing a Policy, in a layer's config and alone, and after a layer round trip."""
    policy = tf.keras.mixed_precision.experimental.Policy(name, loss_scale=loss_scale)
    layer = tf.keras.layers.Dense(1, dtype=policy)
    config = layer.get_config()
    result = {
        "class": type(policy).__name__,
        "serialized": tf.keras.utils.serialize_keras_object(policy),
        "layer_dtype": config["dtype"],
        "get_config": policy.get_config(),
    }
    try:
        restored = tf.keras.layers.Dense.from_config(config).dtype_policy
        result["round_trip"] = {"class": type(restored).__name__, "name": restored.name,
                                "loss_scale": _loss_scale_config(tf, getattr(restored, "loss_scale", None))}
    except Exception as error:  # noqa: BLE001  (the recorded result is the error, as TF 2.4 raised it)
        result["round_trip"] = {"error": error_of(error)}
    return result


def _loss_scale_config(tf, loss_scale):
    if loss_scale is None:
        return None
    return {"class_name": type(loss_scale).__name__, "config": loss_scale.get_config()}


def optimizer_case(tf, form, inner, arguments):
    """TF 2.4's `tf.keras.optimizers.serialize` of a loss-scale optimizer, and what deserializing it gave."""
    mixed_precision = tf.keras.mixed_precision
    inner_class, inner_kwargs = inner
    inner_optimizer = getattr(tf.keras.optimizers, inner_class)(**inner_kwargs)
    if form == "experimental":
        optimizer = mixed_precision.experimental.LossScaleOptimizer(inner_optimizer, *arguments)
    else:
        optimizer = mixed_precision.LossScaleOptimizer(inner_optimizer, **arguments)
    serialized = tf.keras.optimizers.serialize(optimizer)
    # TF 2.4's deserialize lower-cased the class name of the dict it was given, in place: it gets a copy.
    restored = tf.keras.optimizers.deserialize(json.loads(json.dumps(serialized)))
    return {
        "class": type(optimizer).__name__,
        "serialized": serialized,
        "get_config": optimizer.get_config(),
        "restored": {"class": type(restored).__name__, "dynamic": bool(restored.dynamic),
                     "initial_scale": float(restored.initial_scale),
                     "dynamic_growth_steps": restored.dynamic_growth_steps,
                     "inner_class": type(restored.inner_optimizer).__name__},
    }


def run_all(tf):
    """Every case's result, keyed by case name."""
    return {
        "policies": {case: policy_case(tf, *arguments) for case, arguments in sorted(POLICIES.items())},
        "optimizers": {case: optimizer_case(tf, *arguments) for case, arguments in sorted(OPTIMIZERS.items())},
    }
