"""Records TF's private `loss_scale.get_loss_scale_weights` on TF 2.3.0 (the last version that had it) and its absence
on TF 2.4.0.

Run with the repository root as the working directory, once per version, each writing its own section of
tests/goldens/tf24_loss_scale_weights.json:

    /work/tf24/bin/python tests/recorders/record_tf24_loss_scale_weights.py   # tensorflow-cpu==2.4.0
    /work/tf23/bin/python tests/recorders/record_tf24_loss_scale_weights.py   # tensorflow-cpu==2.3.0

TF <= 2.3's Keras `LossScaleOptimizer` tracked a loss scale's variables through it, and code modelled on that
imports it from `tensorflow.python.training.experimental.loss_scale`; `lossscale_compat.get_loss_scale_weights`
is tested against TF 2.3.0's section. Keep it Python 3.8 compatible.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import tensorflow as tf  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens",
                      "tf24_loss_scale_weights.json")
VERSIONS = ("2.4.0", "2.3.0")
MODULE = "tensorflow.python.training.experimental.loss_scale"

# Each case: the loss scale's class and constructor arguments, then the gradients of each update, "nan" or a number.
CASES = {
    "dynamic_default": ("DynamicLossScale", {}, []),
    "dynamic_updated": (
        "DynamicLossScale", {"initial_loss_scale": 8.0, "increment_period": 2, "multiplier": 2.0},
        [1.0, 1.0, 1.0, "nan", 1.0],
    ),
    "fixed": ("FixedLossScale", {"loss_scale_value": 128.0}, [1.0]),
}


def describe(weights):
    """Each weight as data: name, dtype, value, trainable."""
    return [{"name": v.name, "dtype": v.dtype.name, "value": v.numpy().item(), "trainable": v.trainable}
            for v in weights]


def record_case(function, kind, arguments, updates):
    loss_scale = getattr(tf.mixed_precision.experimental, kind)(**arguments)
    weights = function(loss_scale)
    out = {"type": type(weights).__name__, "weights": describe(weights), "after_each_update": []}
    for grad in updates:
        loss_scale.update([tf.constant(float(grad))])
        again = function(loss_scale)
        out["after_each_update"].append({
            "weights": describe(again),
            "same_variables": [a is b for a, b in zip(list(again), list(weights))],
        })
    return out


def record():
    from tensorflow.python.training.experimental import loss_scale as module
    function = getattr(module, "get_loss_scale_weights", None)
    if function is None:
        return {"exists": False}
    try:
        function(128.0)
        bad = None
    except Exception as error:  # noqa: BLE001 - what TF raised is the record
        bad = type(error).__name__
    cases = {}
    for name, (kind, arguments, updates) in CASES.items():
        cases[name] = dict(record_case(function, kind, arguments, updates), kind=kind, arguments=arguments,
                           updates=updates)
    return {"exists": True, "cases": cases, "number_argument_error": bad}


if __name__ == "__main__":
    if tf.__version__ not in VERSIONS:
        sys.exit("record_tf24_loss_scale_weights.py records TF %s, not %s" % (" and ".join(VERSIONS), tf.__version__))
    goldens = {}
    if os.path.exists(GOLDEN):
        with open(GOLDEN) as f:
            goldens = json.load(f)
    goldens[tf.__version__] = dict(record(), meta={
        "tensorflow": tf.__version__, "git_version": tf.version.GIT_VERSION, "python": sys.version.split()[0],
        "recorded_by": "tests/recorders/record_tf24_loss_scale_weights.py", "module": MODULE,
    })
    with open(GOLDEN, "w") as f:
        json.dump(goldens, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote TF %s's section of %s" % (tf.__version__, GOLDEN))
