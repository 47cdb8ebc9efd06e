"""Unsound loss scales, held to what TF 2.4.0 did (tests/goldens/tf24_bad_scales.json): a warning where it accepted
them, its error where it raised."""

import json
import math

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR

import lossscale_compat

CASES = json.loads((GOLDEN_DIR / "tf24_bad_scales.json").read_text())["cases"]
# The arguments JSON cannot hold, written as in the recorder (tests/recorders/record_tf24_bad_scales.py).
NAMED = {"nan": math.nan, "2**200": 2**200, "2**63": 2**63, "2**63-1": 2**63 - 1, "1e39": 1e39}
# What our warning says, by the kind of mistake; a case with no entry is sound enough to pass silently.
SAYS = {
    "LossScaleOptimizer": r"a fixed loss scale that is not a positive finite number defeats loss scaling",
    "DynamicLossScale": r"initial_loss_scale=-?[01]\.0\) is not positive",
    "FixedLossScale": r"over float32's largest number",
}


def build(constructor, argument):
    if constructor == "LossScaleOptimizer":
        return lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), argument)
    if constructor == "DynamicLossScale":
        return lossscale_compat.DynamicLossScale(initial_loss_scale=argument)
    return lossscale_compat.FixedLossScale(argument)


def argument_of(case):
    argument = case["argument"]
    return NAMED.get(argument, argument) if isinstance(argument, str) else argument


def sound(case):
    """Accepted by TF 2.4.0 with a finite scale of at least 1 (2**63): no warning is due."""
    return case["accepted"] and isinstance(case.get("loss_scale"), float) and case["loss_scale"] >= 1


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c["accepted"] and not sound(c)))
def test_accepted_by_tf24_is_accepted_with_a_warning_at_the_callers_line(name):
    case = CASES[name]
    with pytest.warns(UserWarning, match=SAYS[case["constructor"]]) as caught:
        build(case["constructor"], argument_of(case))
    ours = [w for w in caught if w.category is UserWarning]
    assert len(ours) == 1 and ours[0].filename == __file__, [str(w.message) for w in ours]


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if not c["accepted"]))
def test_refused_by_tf24_raises_its_error_and_says_what_to_do(name):
    case = CASES[name]
    with pytest.raises(Exception) as caught:  # noqa: B017,PT011 - its type is checked against the golden below
        build(case["constructor"], argument_of(case))
    assert type(caught.value).__name__ == case["error"]
    assert case["message"] in str(caught.value) and "Instead, pass" in str(caught.value)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if sound(c)))
def test_a_large_scale_tf24_took_is_taken_silently(name):
    case = CASES[name]
    with pytest.warns(lossscale_compat.LossScaleDeprecationWarning) as caught:  # its own deprecation only
        optimizer = build(case["constructor"], argument_of(case))
    assert not [w for w in caught if w.category is UserWarning]
    assert float(optimizer.loss_scale) == case["loss_scale"]
