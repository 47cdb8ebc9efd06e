"""In legacy mode, TF 2.4's `Policy` and both loss-scale optimizer forms serialize as TF 2.4.0 did
(tests/goldens/tf24_serialization.json, recorded by tests/recorders/record_tf24_serialization.py)."""

import json
import warnings

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR

import lossscale_compat
import serialization_programs as programs
from lossscale_compat import _flavour, testing

KERAS3 = _flavour.has_keras3_loss_scaling()
GOLDENS = json.loads((GOLDEN_DIR / "tf24_serialization.json").read_text())


def keys_the_stack_adds():
    """The keys this stack's Keras adds to every serialized object beside TF 2.4's `class_name` and `config`
    (Keras 2.13+ and 3: `module`, `registered_name`), read from its own serialization of its own policy."""
    serialized = tf.keras.utils.serialize_keras_object(tf.keras.mixed_precision.Policy("mixed_float16"))
    return set(serialized) - {"class_name", "config"}


def in_tf24_format(serialized):
    """A serialized object without the keys the stack adds (checked to be only those), nested ones too."""
    if not isinstance(serialized, dict):
        return serialized
    if "class_name" in serialized:
        assert set(serialized) - {"class_name", "config"} <= keys_the_stack_adds(), serialized
        serialized = {key: serialized[key] for key in ("class_name", "config") if key in serialized}
    return {key: in_tf24_format(value) for key, value in serialized.items()}


def with_stack_policy_as_tf24s(result):
    """TF 2.4 turned a deserialized PolicyV1 into its plain `Policy`; this stack's plain policy class is that."""
    if result.get("class") == type(tf.keras.mixed_precision.Policy("float32")).__name__:
        return dict(result, **{"class": "Policy"})
    return result


@pytest.mark.parametrize("case", sorted(programs.POLICIES))
def test_policy_serializes_as_tf24(legacy_mode, case):
    ours = programs.policy_case(tf, *programs.POLICIES[case])
    tf24 = GOLDENS["policies"][case]
    assert ours["class"] == tf24["class"] == "PolicyV1"
    assert ours["get_config"] == tf24["get_config"]
    assert in_tf24_format(ours["serialized"]) == tf24["serialized"]
    assert in_tf24_format(ours["layer_dtype"]) == tf24["layer_dtype"]


@pytest.mark.parametrize("case", sorted(programs.POLICIES))
def test_policy_layer_round_trip_gives_a_plain_policy_as_tf24(legacy_mode, case):
    """TF 2.4 turned a layer's PolicyV1 back into a plain Policy of the same name, its loss scale dropped."""
    ours = programs.policy_case(tf, *programs.POLICIES[case])
    assert with_stack_policy_as_tf24s(ours["round_trip"]) == GOLDENS["policies"][case]["round_trip"]


@pytest.mark.parametrize("case", sorted(programs.POLICIES))
def test_tf24s_own_layer_config_loads(legacy_mode, case):
    """A layer config TF 2.4.0 wrote (no `module` key) loads as it did there."""
    layer = tf.keras.layers.Dense.from_config({"name": "dense", "units": 1, "dtype": GOLDENS["policies"][case]["layer_dtype"]})
    restored = {"class": type(layer.dtype_policy).__name__, "name": layer.dtype_policy.name, "loss_scale": None}
    assert with_stack_policy_as_tf24s(restored) == GOLDENS["policies"][case]["round_trip"]


@pytest.mark.parametrize("case", sorted(programs.OPTIMIZERS))
def test_optimizer_serialization_is_equivalent_to_tf24s(legacy_mode, case):
    """What `tf.keras.optimizers.serialize` gives builds the optimizer TF 2.4's did: `assert_config_equivalent`
    loads both on this stack and names every difference."""
    ours = programs.optimizer_case(tf, *programs.OPTIMIZERS[case])
    tf24 = GOLDENS["optimizers"][case]
    testing.assert_config_equivalent(tf24["serialized"], ours["serialized"])
    testing.assert_config_equivalent(tf24["get_config"], ours["get_config"])
    assert {key: ours["restored"][key] for key in ("dynamic", "initial_scale", "dynamic_growth_steps")} == {
        key: tf24["restored"][key] for key in ("dynamic", "initial_scale", "dynamic_growth_steps")}


@pytest.mark.parametrize("case", sorted(programs.OPTIMIZERS))
def test_optimizer_config_has_tf24s_keys_and_values(legacy_mode, case):
    """The loss-scale part of `get_config()` is TF 2.4's, key for key (the inner optimizer's is the stack's own),
    but that on Keras 3 a dynamic scale's config is Keras 3's own class's, which has no `dynamic` key (docs/optimizer.md)."""
    ours = programs.optimizer_case(tf, *programs.OPTIMIZERS[case])["get_config"]
    tf24 = GOLDENS["optimizers"][case]["get_config"]
    if KERAS3 and tf24["dynamic"]:
        assert "dynamic" not in ours
        ours = dict(ours, dynamic=True)
    assert {key: value for key, value in ours.items() if key != "inner_optimizer"} == {
        key: value for key, value in tf24.items() if key != "inner_optimizer"}
    assert ours["inner_optimizer"]["class_name"] == tf24["inner_optimizer"]["class_name"]


@pytest.fixture
def tf24_optimizers():
    lossscale_compat.install(tf24_optimizers=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lossscale_compat.LossScaleDeprecationWarning)
        yield
    lossscale_compat.uninstall()


@pytest.mark.skipif(KERAS3, reason="Keras 3 has no OptimizerV2 to give back")
@pytest.mark.parametrize("case", sorted(programs.OPTIMIZERS))
def test_with_tf24_optimizers_tf24s_config_loads_as_optimizer_v2_and_is_equivalent(tf24_optimizers, case):
    """With TF 2.4's optimizers in legacy mode, a config TF 2.4.0 wrote (no `is_legacy_optimizer`) loads as TF 2.4's
    `OptimizerV2`, as the program's own optimizer is, so the two are equivalent (it loaded as today's optimizer)."""
    ours = programs.optimizer_case(tf, *programs.OPTIMIZERS[case])
    tf24 = GOLDENS["optimizers"][case]
    restored = tf.keras.optimizers.deserialize(json.loads(json.dumps(tf24["serialized"])))
    assert _flavour.is_legacy_keras_optimizer(restored.inner_optimizer)
    given = json.loads(json.dumps(tf24["serialized"]))
    testing.assert_config_equivalent(given, ours["serialized"])
    assert given == tf24["serialized"]  # left as it was: Keras 2's legacy deserialize lower-cases in place
