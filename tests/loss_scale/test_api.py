"""Return types, reprs, configs, validation and (de)serialization, against TF 2.4.0's goldens."""

import contextlib
import math

import pytest
import tensorflow as tf
from tf24_goldens import GOLDENS, decode, specs

import lossscale_compat
from lossscale_compat import DynamicLossScale, FixedLossScale

RETURNS = GOLDENS["return_types"]
REPRS = GOLDENS["reprs_and_configs"]
VALIDATION = GOLDENS["validation"]


def type_name(value):
    """The recorder's description of a value's type."""
    return specs.type_name(tf, value)


def describe(obj):
    if obj is None:
        return {"ok": None}
    return {"ok": {"class": type(obj).__name__, "config": obj.get_config(), "scale": float(obj())}}


def check_error(expected, raised, *, compare_message=True):
    """Same exception type as TF 2.4.0, and TF's own message within ours (ours adds what to do)."""
    assert type(raised.value).__name__ == expected["type"]
    if compare_message:
        assert expected["message"].rstrip(".") in str(raised.value)


# --- return types -------------------------------------------------------------------------------

@pytest.mark.parametrize("label,step", [("finite", 1.0), ("nan", "nan")])
def test_fixed_update_returns_python_true(label, step):
    expected = RETURNS["fixed_" + label]
    loss_scale = FixedLossScale(1000)
    update_op, should_apply = loss_scale.update(specs.build(step, tf))
    assert type_name(update_op) == expected["update_op"]
    assert type_name(should_apply) == expected["should_apply"]
    assert should_apply is expected["should_apply_value"]
    assert float(loss_scale()) == expected["scale"]


def test_call_returns_float32_tensor():
    assert type_name(FixedLossScale(2)()) == RETURNS["fixed_call"]
    assert type_name(DynamicLossScale()()) == RETURNS["dynamic_call"]


def test_dynamic_eager_update_op_and_should_apply_types():
    loss_scale = DynamicLossScale(initial_loss_scale=2, increment_period=2)
    assert RETURNS["dynamic_eager_steps"], "the golden recorded no steps"
    for expected in RETURNS["dynamic_eager_steps"]:
        update_op, should_apply = loss_scale.update(specs.build(expected["step"], tf))
        assert (update_op is None) is expected["update_op_is_none"]
        assert type_name(should_apply) == expected["should_apply"]


def test_update_types_inside_tf_function():
    seen = specs.update_types_in_function(tf, DynamicLossScale(initial_loss_scale=2), FixedLossScale(3))
    assert seen["dynamic_function"] == RETURNS["dynamic_function"]
    assert seen["fixed_function"] == RETURNS["fixed_function"]


# --- repr, get_config, from_config ---------------------------------------------------------------

def test_dynamic_repr_in_eager_shows_state():
    loss_scale = DynamicLossScale(initial_loss_scale=2, increment_period=3, multiplier=4)
    assert repr(loss_scale) == REPRS["dynamic_eager_initial"]
    loss_scale.update([tf.constant(1.0)])
    assert repr(loss_scale) == REPRS["dynamic_eager_after_step"]
    assert repr(DynamicLossScale()) == REPRS["dynamic_default"]


def test_dynamic_repr_in_graph_shows_settings_only():
    loss_scale = DynamicLossScale(initial_loss_scale=2, increment_period=3, multiplier=4)
    assert specs.repr_in_function(tf, loss_scale) == REPRS["dynamic_in_function"]


def test_fixed_repr():
    assert repr(FixedLossScale(1000)) == REPRS["fixed"]
    assert repr(FixedLossScale(7)) == REPRS["fixed_int"]


@pytest.mark.parametrize("name,build", [
    ("dynamic_default", lambda: DynamicLossScale()),
    ("dynamic_1_2_3", lambda: DynamicLossScale(1, 2, 3)),
    ("fixed_123", lambda: FixedLossScale(123)),
    ("fixed_true", lambda: FixedLossScale(True)),
])
def test_get_config_matches_tf24(name, build):
    config = build().get_config()
    assert config == REPRS["configs"][name]
    assert list(config) == list(REPRS["configs"][name])  # key order too


def test_get_config_reports_initial_not_current_scale():
    loss_scale = DynamicLossScale(initial_loss_scale=2, increment_period=1)
    loss_scale.update([tf.constant(1.0)])
    assert loss_scale.get_config() == REPRS["configs"]["dynamic_after_steps"]


def test_dynamic_from_config_round_trip():
    expected = REPRS["dynamic_from_config"]
    restored = DynamicLossScale.from_config(DynamicLossScale(1, 2, 3).get_config())
    assert float(restored()) == expected["scale"]
    assert [restored.initial_loss_scale, restored.increment_period, restored.multiplier] == [
        expected["initial_loss_scale"], expected["increment_period"], expected["multiplier"]]
    assert [type(restored.initial_loss_scale).__name__, type(restored.increment_period).__name__,
            type(restored.multiplier).__name__] == expected["types"]


def test_fixed_from_config_round_trip():
    expected = REPRS["fixed_from_config"]
    restored = FixedLossScale.from_config(lossscale_compat.get(123).get_config())
    assert float(restored()) == expected["scale"]
    assert restored.get_config() == expected["config"]


def test_loss_scale_base_is_abstract():
    with pytest.raises(TypeError) as raised:
        lossscale_compat.LossScale()
    check_error(VALIDATION["abstract_base"]["error"], raised, compare_message=False)


# --- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", VALIDATION["FixedLossScale"], ids=lambda c: repr(c["arg"]))
def test_fixed_loss_scale_validation(case):
    arg, expected = decode(case["arg"]), case["result"]
    if "error" in expected:
        with pytest.raises(Exception) as raised:
            FixedLossScale(arg)
        check_error(expected["error"], raised)
    else:
        from tf24_goldens import same
        non_finite = isinstance(arg, float) and not math.isfinite(arg)  # accepted as TF 2.4 did, and now warned about
        with pytest.warns(UserWarning, match="makes every scaled loss") if non_finite else contextlib.nullcontext():
            loss_scale = FixedLossScale(arg)
        assert same(expected, describe(loss_scale))


@pytest.mark.parametrize("case", VALIDATION["DynamicLossScale"], ids=lambda c: repr(c["kwargs"]))
def test_dynamic_loss_scale_coercion(case):
    expected = case["result"]
    if "error" in expected:
        with pytest.raises(Exception) as raised:
            DynamicLossScale(**case["kwargs"])
        # These come from Python's float()/int(), whose wording varies by Python version.
        check_error(expected["error"], raised, compare_message=False)
    else:
        initial = case["kwargs"].get("initial_loss_scale")
        unsound = isinstance(initial, (int, float)) and math.isfinite(initial) and initial <= 0  # warned about now
        with pytest.warns(UserWarning, match="is not positive") if unsound else contextlib.nullcontext():
            loss_scale = DynamicLossScale(**case["kwargs"])
        assert describe(loss_scale) == expected


# --- get / serialize / deserialize --------------------------------------------------------------

@pytest.mark.parametrize("case", VALIDATION["get_keras"], ids=lambda c: repr(c["identifier"]))
def test_get_matches_tf24_keras_get(case):
    identifier, expected = decode(case["identifier"]), case["result"]
    if "error" in expected:
        with pytest.raises(Exception) as raised:
            lossscale_compat.get(identifier)
        check_error(expected["error"], raised)
    else:
        assert describe(lossscale_compat.get(identifier)) == expected


def test_get_returns_loss_scale_instances_unchanged():
    assert VALIDATION["get_returns_same_instance"] is True
    for instance in (DynamicLossScale(), FixedLossScale(4)):
        assert lossscale_compat.get(instance) is instance


def test_serialize_matches_tf24():
    assert VALIDATION["serialize"], "the golden recorded no cases"
    for case in VALIDATION["serialize"]:
        assert lossscale_compat.serialize(decode(case["object"])) == case["result"]


@pytest.mark.parametrize("case", VALIDATION["deserialize"], ids=lambda c: repr(c["config"]))
def test_deserialize_matches_tf24(case):
    expected = case["result"]
    if "error" in expected:
        with pytest.raises(Exception) as raised:
            lossscale_compat.deserialize(case["config"])
        check_error(expected["error"], raised)
    else:
        assert describe(lossscale_compat.deserialize(case["config"])) == expected


def test_deserialize_with_custom_objects():
    class MyLossScale(FixedLossScale):
        pass

    restored = lossscale_compat.deserialize({"class_name": "MyLossScale", "config": {"loss_scale_value": 4.0}},
                                            custom_objects={"MyLossScale": MyLossScale})
    expected = VALIDATION["deserialize_custom_objects"]
    assert {"class": type(restored).__name__, "config": restored.get_config()} == expected


def test_deserialize_rejects_malformed_config_with_guidance():
    with pytest.raises(ValueError, match="Expected a dict with keys 'class_name' and 'config'"):
        lossscale_compat.deserialize({"class_name": "FixedLossScale"})


@pytest.mark.parametrize("config", [[1], "x", None], ids=["list", "string", "None"])
def test_deserialize_refuses_a_config_that_is_not_a_dict_with_guidance(config):
    with pytest.raises(TypeError, match=r"^A DynamicLossScale config is a dict of its constructor arguments .* Pass "):
        lossscale_compat.deserialize({"class_name": "DynamicLossScale", "config": config})


@pytest.mark.parametrize("where", ["registered", "custom_objects"])
def test_deserialize_refuses_a_keras_class_that_is_not_a_loss_scale(where):
    """A registered (or passed) Keras class is not built from a loss-scale config: nothing of it runs."""
    built = []

    class NotALossScale(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            built.append(kwargs)
            super().__init__()

    name = "lossscale_compat_tests>NotALossScale"
    config = {"class_name": name, "config": {}}
    if where == "registered":
        tf.keras.utils.get_custom_objects()[name] = NotALossScale
        kwargs = {}
    else:
        kwargs = {"custom_objects": {name: NotALossScale}}
    try:
        with pytest.raises(ValueError, match=r"which is not a loss scale, so it is not built from a loss-scale config"):
            lossscale_compat.deserialize(config, **kwargs)
    finally:
        tf.keras.utils.get_custom_objects().pop(name, None)
    assert built == []
