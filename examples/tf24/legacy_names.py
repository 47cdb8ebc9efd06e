"""TF 2.4's mixed-precision names as a TF 2.4 program used them: every spelling, the Policy, the graph rewrite.

Prints (or writes with --json) what each one did, so that TF 2.4.0 and legacy mode can be compared.
"""

import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
out = {}


def attempt(name, make):
    """Records `make()`'s repr-like result, or the type and message of what it raised."""
    try:
        out[name] = {"ok": make()}
    except Exception as error:  # noqa: BLE001 - the error is the observation
        out[name] = {"error": type(error).__name__, "message": str(error).splitlines()[0]}


# Every spelling resolves to a class or function of the right name.
import tensorflow.keras.mixed_precision.experimental as mp_module  # noqa: E402
from tensorflow.keras.mixed_precision import experimental as mixed_precision  # noqa: E402
from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer  # noqa: E402

spellings = {
    "tf.mixed_precision.experimental.LossScale": tf.mixed_precision.experimental.LossScale,
    "tf.mixed_precision.experimental.FixedLossScale": tf.mixed_precision.experimental.FixedLossScale,
    "tf.mixed_precision.experimental.DynamicLossScale": tf.mixed_precision.experimental.DynamicLossScale,
    "tf.compat.v2.mixed_precision.experimental.DynamicLossScale":
        tf.compat.v2.mixed_precision.experimental.DynamicLossScale,
    "tf.train.experimental.LossScale": tf.train.experimental.LossScale,
    "tf.train.experimental.FixedLossScale": tf.train.experimental.FixedLossScale,
    "tf.train.experimental.DynamicLossScale": tf.train.experimental.DynamicLossScale,
    "tf.train.experimental.enable_mixed_precision_graph_rewrite":
        tf.train.experimental.enable_mixed_precision_graph_rewrite,
    "tf.train.experimental.disable_mixed_precision_graph_rewrite":
        tf.train.experimental.disable_mixed_precision_graph_rewrite,
    "tf.keras.mixed_precision.experimental.LossScaleOptimizer":
        tf.keras.mixed_precision.experimental.LossScaleOptimizer,
    "tf.keras.mixed_precision.experimental.Policy": tf.keras.mixed_precision.experimental.Policy,
    "tf.keras.mixed_precision.experimental.set_policy": tf.keras.mixed_precision.experimental.set_policy,
    "tf.keras.mixed_precision.experimental.global_policy": tf.keras.mixed_precision.experimental.global_policy,
    "tf.keras.mixed_precision.experimental.get_layer_policy":
        tf.keras.mixed_precision.experimental.get_layer_policy,
    "tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer":
        tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer,
    "tf.keras.mixed_precision.LossScaleOptimizer": tf.keras.mixed_precision.LossScaleOptimizer,
    "tf.compat.v1.keras.mixed_precision.experimental.LossScaleOptimizer":
        tf.compat.v1.keras.mixed_precision.experimental.LossScaleOptimizer,
    "tf.compat.v1.keras.mixed_precision.LossScaleOptimizer": tf.compat.v1.keras.mixed_precision.LossScaleOptimizer,
    "import tensorflow.keras.mixed_precision.experimental as mp": mp_module.LossScaleOptimizer,
    "from tensorflow.keras.mixed_precision import experimental": mixed_precision.Policy,
    "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer": LossScaleOptimizer,
}
out["spellings"] = {spelling: value.__name__ for spelling, value in spellings.items()}
out["same_class_through_tf_and_train"] = (
    tf.train.experimental.DynamicLossScale is tf.mixed_precision.experimental.DynamicLossScale)

# The Policy and its loss scale.
Policy = mixed_precision.Policy
FixedLossScale = tf.mixed_precision.experimental.FixedLossScale
DynamicLossScale = tf.mixed_precision.experimental.DynamicLossScale
policies = {
    "mixed_float16": lambda: Policy("mixed_float16"),
    "float32": lambda: Policy("float32"),
    "mixed_bfloat16": lambda: Policy("mixed_bfloat16"),
    "mixed_float16, 128": lambda: Policy("mixed_float16", loss_scale=128),
    "mixed_float16, None": lambda: Policy("mixed_float16", loss_scale=None),
    "mixed_float16, dynamic": lambda: Policy("mixed_float16", loss_scale="dynamic"),
    "mixed_float16, DynamicLossScale(64, 10)": lambda: Policy("mixed_float16", loss_scale=DynamicLossScale(64, 10)),
    "float32, FixedLossScale(8)": lambda: Policy("float32", loss_scale=FixedLossScale(8)),
}
for label, make in policies.items():
    attempt(f"policy {label}", lambda make=make: {
        "repr": repr(make()), "config": make().get_config(), "compute_dtype": make().compute_dtype,
        "variable_dtype": make().variable_dtype,
        "loss_scale_config": None if make().loss_scale is None else make().loss_scale.get_config()})
attempt("policy bogus loss scale", lambda: repr(Policy("mixed_float16", loss_scale="bogus")))
attempt("policy from_config with a serialized loss scale", lambda: repr(Policy.from_config(
    {"name": "mixed_float16", "loss_scale": {"class_name": "FixedLossScale", "config": {"loss_scale_value": 32.0}}})))
attempt("policy round trip", lambda: Policy.from_config(
    Policy("mixed_float16", loss_scale=DynamicLossScale(64, 10)).get_config()).get_config())

# Global policy functions.
attempt("global policy at start", lambda: mixed_precision.global_policy().name)
mixed_precision.set_policy(Policy("mixed_float16", loss_scale=256))
attempt("global policy after set_policy(Policy)", lambda: repr(mixed_precision.global_policy()))
layer = tf.keras.layers.Dense(2)
attempt("get_layer_policy of a new layer", lambda: repr(mixed_precision.get_layer_policy(layer)))
attempt("get_layer_policy of a non-layer", lambda: repr(mixed_precision.get_layer_policy(3)))
mixed_precision.set_policy("mixed_float16")
attempt("global policy after set_policy(str)", lambda: mixed_precision.global_policy().name)
attempt("global policy after set_policy(str) has loss_scale",
        lambda: hasattr(mixed_precision.global_policy(), "loss_scale"))
attempt("set_policy(int32)", lambda: mixed_precision.set_policy("int32"))


def compiled_optimizer(policy):
    """What `compile` makes of a plain SGD under `policy`."""
    mixed_precision.set_policy(policy)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    optimizer = model.optimizer
    found = {"wraps": hasattr(optimizer, "inner_optimizer")}
    if found["wraps"]:
        found.update(dynamic=bool(optimizer.dynamic), loss_scale=float(optimizer.loss_scale),
                     growth_steps=optimizer.dynamic_growth_steps)
    return found


for label, policy in [("mixed_float16 (str)", "mixed_float16"), ("Policy(mixed_float16)", Policy("mixed_float16")),
                      ("Policy(mixed_float16, 128)", Policy("mixed_float16", loss_scale=128)),
                      ("Policy(mixed_float16, DynamicLossScale(64, 10))",
                       Policy("mixed_float16", loss_scale=DynamicLossScale(64, 10))),
                      ("Policy(mixed_float16, None)", Policy("mixed_float16", loss_scale=None)),
                      ("float32", "float32"), ("Policy(float32, 8)", Policy("float32", loss_scale=8))]:
    attempt(f"compile under {label}", lambda policy=policy: compiled_optimizer(policy))
mixed_precision.set_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
already = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale=64)
model.compile(optimizer=already, loss="mse")
out["compile keeps a loss-scale optimizer"] = model.optimizer is already
mixed_precision.set_policy("float32")

# Config round trips of both optimizer forms, through Keras serialization.
def round_trip(optimizer):
    """What comes back from serialize/deserialize: its loss-scale settings and its class's TF 2.4 role."""
    config = tf.keras.optimizers.serialize(optimizer)
    restored = tf.keras.optimizers.deserialize(config)
    settings = {"dynamic": bool(restored.dynamic), "initial_scale": float(restored.initial_scale),
                "dynamic_growth_steps": restored.dynamic_growth_steps}
    settings["experimental form"] = isinstance(restored, tf.keras.mixed_precision.experimental.LossScaleOptimizer)
    settings["non-experimental form"] = isinstance(restored, tf.keras.mixed_precision.LossScaleOptimizer)
    settings["inner learning rate"] = float(restored.inner_optimizer.learning_rate.numpy()) if hasattr(
        restored.inner_optimizer.learning_rate, "numpy") else restored.inner_optimizer.learning_rate
    return settings


attempt("round trip of the experimental form with a FixedLossScale", lambda: round_trip(
    mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.25), FixedLossScale(32))))
attempt("round trip of the experimental form with a DynamicLossScale", lambda: round_trip(
    mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.25), DynamicLossScale(128, 50))))
attempt("round trip of the non-experimental form", lambda: round_trip(
    tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.25), dynamic=False, initial_scale=4)))

# The TF2 graph rewrite.
rewritten = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), loss_scale=128)
out["graph rewrite of SGD"] = {"wraps": rewritten.inner_optimizer.__class__.__name__,
                               "dynamic": bool(rewritten.dynamic), "loss_scale": float(rewritten.loss_scale)}
attempt("set_policy(mixed_float16) while the rewrite is on", lambda: mixed_precision.set_policy("mixed_float16"))
tf.train.experimental.disable_mixed_precision_graph_rewrite()
rewritten = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
out["graph rewrite default"] = {"dynamic": bool(rewritten.dynamic), "loss_scale": float(rewritten.loss_scale)}
tf.train.experimental.disable_mixed_precision_graph_rewrite()
attempt("graph rewrite of a non-optimizer", lambda: tf.train.experimental.enable_mixed_precision_graph_rewrite(3))
mixed_precision.set_policy("mixed_float16")
attempt("graph rewrite under a mixed policy",
        lambda: tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1)))
mixed_precision.set_policy("float32")

_harness.emit(out, args.json)
