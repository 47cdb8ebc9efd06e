"""`lossscale_compat.get_loss_scale_weights`, TF 2.3's private function (gone in TF 2.4.0), against TF 2.3.0's golden."""

import json
import pathlib
import warnings

import pytest
import tensorflow as tf

import lossscale_compat

GOLDEN = json.loads((pathlib.Path(__file__).parents[1] / "goldens" / "tf24_loss_scale_weights.json").read_text())
TF23 = GOLDEN["2.3.0"]


def _describe(weights):
    return [
        {"name": v.name, "dtype": v.dtype.name, "value": v.numpy().item(), "trainable": v.trainable} for v in weights
    ]


def _build(namespace, kind, arguments):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(namespace, kind)(**arguments)


def _replay(namespace, case):
    loss_scale = _build(namespace, case["kind"], case["arguments"])
    weights = lossscale_compat.get_loss_scale_weights(loss_scale)
    out = {"type": type(weights).__name__, "weights": _describe(weights), "after_each_update": []}
    for grad in case["updates"]:
        loss_scale.update([tf.constant(float(grad))])
        again = lossscale_compat.get_loss_scale_weights(loss_scale)
        out["after_each_update"].append(
            {"weights": _describe(again), "same_variables": [a is b for a, b in zip(list(again), list(weights))]}
        )
    return out


def _expected(case):
    return {key: case[key] for key in ("type", "weights", "after_each_update")}


def test_the_golden_says_tf_2_4_lacks_it_and_tf_2_3_had_it():
    assert GOLDEN["2.4.0"]["exists"] is False
    assert TF23["exists"] is True


@pytest.mark.parametrize("name", sorted(TF23["cases"]))
def test_weights_of_our_loss_scales_are_tf_2_3s(name):
    case = TF23["cases"][name]
    assert _replay(lossscale_compat, case) == _expected(case)


@pytest.mark.parametrize("name", sorted(TF23["cases"]))
def test_weights_of_tensorflows_own_loss_scales_are_tf_2_3s(name):
    """TensorFlow still ships its TF1 loss scales (`tf.compat.v1.mixed_precision`); legacy code passes those too."""
    case = TF23["cases"][name]
    assert _replay(tf.compat.v1.mixed_precision, case) == _expected(case)


def test_a_number_is_refused_with_tf_2_3s_error_type_and_the_way_out():
    with pytest.raises(Exception) as caught:
        lossscale_compat.get_loss_scale_weights(128.0)
    assert type(caught.value).__name__ == TF23["number_argument_error"]
    assert "DynamicLossScale()" in str(caught.value)
