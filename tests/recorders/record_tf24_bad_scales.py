"""Records what TF 2.4.0 did with unsound loss scales: accepted (and the scale it kept) or raised (type, message).

Run with TF 2.4.0's Python from the repository root: `/work/tf24/bin/python tests/recorders/record_tf24_bad_scales.py`.
Writes tests/goldens/tf24_bad_scales.json. Keep it Python 3.8 compatible.
"""

import math

import tf24_recording  # noqa: F401  (sets up TF 2.4.0; makes tests/goldens importable)
from tf24_recording import tf, write_goldens

# Each case: name -> (constructor, the argument as the test passes it, encoded for JSON).
CASES = {
    "lso_zero": ("LossScaleOptimizer", 0),
    "lso_nan": ("LossScaleOptimizer", "nan"),
    "lso_false": ("LossScaleOptimizer", False),
    "lso_2_to_200": ("LossScaleOptimizer", "2**200"),
    "lso_2_to_63": ("LossScaleOptimizer", "2**63"),
    "lso_2_to_63_minus_1": ("LossScaleOptimizer", "2**63-1"),
    "lso_1e39": ("LossScaleOptimizer", "1e39"),
    "dynamic_initial_zero": ("DynamicLossScale", 0),
    "dynamic_initial_minus_one": ("DynamicLossScale", -1),
    "fixed_1e39": ("FixedLossScale", "1e39"),
}


def decode(value):
    """The argument, from its JSON form: numbers JSON cannot hold are written as Python expressions."""
    named = {"nan": math.nan, "2**200": 2**200, "2**63": 2**63, "2**63-1": 2**63 - 1, "1e39": 1e39}
    return named.get(value, value) if isinstance(value, str) else value


def encode(number):
    number = float(number)
    return number if math.isfinite(number) else str(number)


def build(constructor, argument):
    mp = tf.keras.mixed_precision.experimental
    if constructor == "LossScaleOptimizer":
        return mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), argument).loss_scale
    if constructor == "DynamicLossScale":
        return tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=argument)
    return tf.mixed_precision.experimental.FixedLossScale(argument)


def record(constructor, argument):
    try:
        loss_scale = build(constructor, decode(argument))
    except Exception as error:  # noqa: BLE001 - what TF 2.4.0 raised is the record
        return {"accepted": False, "error": type(error).__name__, "message": str(error)}
    try:
        value = loss_scale() if callable(loss_scale) else loss_scale  # the optimizer's `loss_scale` is the tensor
    except Exception as error:  # noqa: BLE001 - accepted, but reading the scale raised
        return {"accepted": True, "reading_error": type(error).__name__, "message": str(error)}
    return {"accepted": True, "loss_scale": encode(value)}


if __name__ == "__main__":
    write_goldens(
        "tf24_bad_scales.json",
        "record_tf24_bad_scales.py",
        {"cases": {name: dict(record(*case), constructor=case[0], argument=case[1]) for name, case in CASES.items()}},
    )
