"""Config equivalence: TF 2.4.0's own configs against today's constructions, and every difference named."""

import numpy as np
import pytest
import tensorflow as tf
from tf24_optimizers import KERAS3, OPTIMIZER_GOLDENS, build_optimizer, specs

import lossscale_compat
from lossscale_compat import _conversions, assert_equivalent, config_differences

CONFIGS = OPTIMIZER_GOLDENS["configs"]
FORMS = [case for case in CONFIGS["forms"] if "ok" in case["serialize"]]
SGD = tf.keras.optimizers.SGD


def tf24_kwargs(form):
    """The TF 2.4 non-experimental keyword arguments a golden form stands for."""
    if form["class"] == "experimental":
        return _conversions.loss_scale_to_kwargs(specs.value(form["loss_scale"], lossscale_compat.FixedLossScale,
                                                             lossscale_compat.DynamicLossScale))
    return form.get("kwargs", {})


def modern(inner_spec, kwargs):
    """The stack's own construction for TF 2.4 `kwargs`: what the migration writes."""
    inner_config = dict(inner_spec["config"])
    if not kwargs.get("dynamic", True) and KERAS3:  # Keras 3's fixed scale lives on the optimizer itself
        return getattr(tf.keras.optimizers, inner_spec["class_name"])(
            loss_scale_factor=float(kwargs["initial_scale"]), **inner_config)
    inner = getattr(tf.keras.optimizers, inner_spec["class_name"])(**inner_config)
    scale = {key: cast(kwargs[key]) for key, cast in (("initial_scale", float), ("dynamic_growth_steps", int))
             if kwargs.get(key) is not None}
    if not KERAS3:
        scale["dynamic"] = kwargs.get("dynamic", True)
    return tf.keras.mixed_precision.LossScaleOptimizer(inner, **scale)


@pytest.mark.parametrize("case", FORMS, ids=[case["name"] for case in FORMS])
def test_tf24_serialized_config_is_equivalent_to_ours_and_to_the_modern_construction(case):
    """TF 2.4.0's serialized optimizer, our construction of it, and the stack's own are the same optimizer."""
    tf24_config = case["serialize"]["ok"]
    assert config_differences(tf24_config, build_optimizer(case["form"], case["inner"])) == []
    assert config_differences(tf24_config, modern(case["inner"], tf24_kwargs(case["form"]))) == []


# The inputs TF 2.4.0 loaded (the others it refused, which test_configs.py checks).
LOADED_INPUTS = [case for case in CONFIGS["inputs"] if any("config" in t for t in case["targets"].values())]


@pytest.mark.parametrize("case", LOADED_INPUTS, ids=[case["name"] for case in LOADED_INPUTS])
def test_tf23_and_tf24_config_inputs_are_equivalent_to_what_tf24_loaded(case):
    """A TF <= 2.3 or TF 2.4 config is equivalent to the config TF 2.4.0 produced after loading it."""
    loaded = [target["config"] for target in case["targets"].values() if "config" in target]
    assert loaded
    for config in loaded:
        assert_equivalent(case["config"], config)


def test_docstring_equalities_hold_without_pinned_names():
    """TF 2.4's documented equalities, which plain `get_config() ==` misses on Keras 3 (names are unique)."""
    assert_equivalent(lossscale_compat.LossScaleOptimizer(SGD(), "dynamic"),
                      tf.keras.mixed_precision.LossScaleOptimizer(SGD()))
    assert_equivalent(lossscale_compat.LossScaleOptimizer(SGD(), lossscale_compat.DynamicLossScale(2048, 500)),
                      tf.keras.mixed_precision.LossScaleOptimizer(SGD(), initial_scale=2048, dynamic_growth_steps=500))


@pytest.mark.parametrize("old, new, differences", [
    pytest.param({"dynamic": False, "initial_scale": 8}, {"dynamic": False, "initial_scale": 16},
                 ["initial_scale: 8.0 (old) != 16.0 (new)"], id="fixed scale"),
    pytest.param({"initial_scale": 8, "dynamic_growth_steps": 5}, {"initial_scale": 8},
                 ["dynamic_growth_steps: 5 (old) != 2000 (new)"], id="growth steps"),
    pytest.param({}, {"dynamic": False, "initial_scale": 2**15},
                 ["dynamic_growth_steps: 2000 (old) != absent (new)",
                  "loss_scaling: 'dynamic' (old) != 'fixed' (new)"], id="dynamic vs fixed"),
])
def test_each_loss_scale_difference_is_named(old, new, differences):
    assert config_differences(lossscale_compat.KerasLossScaleOptimizer(SGD(), **old),
                              lossscale_compat.KerasLossScaleOptimizer(SGD(), **new)) == differences


def test_inner_optimizer_differences_are_named():
    ours = lossscale_compat.KerasLossScaleOptimizer(SGD(0.1, momentum=0.9))
    assert config_differences(ours, tf.keras.mixed_precision.LossScaleOptimizer(SGD(0.1, momentum=0.5))) == \
        ["inner_optimizer.momentum: 0.9 (old) != 0.5 (new)"]
    assert "inner_optimizer: 'SGD' (old) != 'Adam' (new)" in config_differences(
        ours, tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(0.1)))


def test_a_plain_optimizer_has_no_loss_scaling():
    differences = config_differences(lossscale_compat.KerasLossScaleOptimizer(SGD(), initial_scale=4), SGD())
    assert "loss_scaling: 'dynamic' (old) != 'none' (new)" in differences
    assert "initial_scale: 4.0 (old) != absent (new)" in differences


def test_floats_compare_as_float32():
    """TF 2.4.0 saved trained hyperparameters as float32 read back as doubles (0.05 as 0.05000000074505806)."""
    h5 = OPTIMIZER_GOLDENS["h5"]
    tf24 = h5["h5_training_config_optimizer"]
    assert tf24["config"]["inner_optimizer"]["config"]["learning_rate"] != h5["inner"]["config"]["learning_rate"]
    assert_equivalent(tf24, build_optimizer(h5["form"], h5["inner"]))
    assert_equivalent(tf24, modern(h5["inner"], tf24_kwargs(h5["form"])))
    nudged = dict(h5["inner"], config=dict(h5["inner"]["config"], learning_rate=float(
        np.nextafter(np.float32(h5["inner"]["config"]["learning_rate"]), np.float32(1)))))
    differences = config_differences(tf24, build_optimizer(h5["form"], nudged))
    assert [d.split(":")[0] for d in differences] == ["inner_optimizer.learning_rate"]


def test_tf24_decay_is_equivalent_to_its_inverse_time_schedule():
    """TF 2.4's `decay` loads as InverseTimeDecay, so that schedule is the equivalent, not a constant rate."""
    tf24 = CONFIGS["decay"]["config"]
    inner = dict(tf24["inner_optimizer"]["config"])
    learning_rate, decay = inner.pop("learning_rate"), inner.pop("decay")
    del inner["name"]
    scale = {"initial_scale": tf24["initial_scale"], "dynamic_growth_steps": tf24["dynamic_growth_steps"]}
    schedule = tf.keras.optimizers.schedules.InverseTimeDecay(learning_rate, decay_steps=1, decay_rate=decay)
    assert_equivalent(tf24, tf.keras.mixed_precision.LossScaleOptimizer(SGD(schedule, **inner), **scale))
    differences = config_differences(tf24, tf.keras.mixed_precision.LossScaleOptimizer(SGD(learning_rate, **inner),
                                                                                       **scale))
    assert [d.split(":")[0] for d in differences] == ["inner_optimizer.learning_rate"]


@pytest.mark.skipif(not KERAS3, reason="Keras 3 expresses a fixed scale as the optimizer's loss_scale_factor")
def test_keras3_fixed_scale_is_loss_scale_factor():
    old = lossscale_compat.LossScaleOptimizer(SGD(0.1), 128)
    assert_equivalent(old, SGD(0.1, loss_scale_factor=128))
    assert config_differences(old, SGD(0.1, loss_scale_factor=64)) == ["initial_scale: 128.0 (old) != 64.0 (new)"]


def test_assert_equivalent_lists_every_difference():
    with pytest.raises(AssertionError) as raised:
        assert_equivalent(lossscale_compat.KerasLossScaleOptimizer(SGD(0.1), initial_scale=4),
                          tf.keras.mixed_precision.LossScaleOptimizer(SGD(0.2), initial_scale=8))
    assert str(raised.value) == ("The optimizers are not equivalent:\n"
                                 "  initial_scale: 4.0 (old) != 8.0 (new)\n"
                                 "  inner_optimizer.learning_rate: 0.1 (old) != 0.2 (new)")


@pytest.mark.parametrize("bad, error, says", [
    pytest.param("dynamic", TypeError, "Pass the optimizer object", id="a string"),
    pytest.param({"learning_rate": 0.1}, TypeError, "has `inner_optimizer`", id="a bare optimizer config"),
    pytest.param({"inner_optimizer": {"class_name": "SGD", "config": {}}, "dynamic": False}, ValueError,
                 '"initial_scale" must be specified', id="fixed without a scale"),
])
def test_bad_input_says_what_to_pass(bad, error, says):
    with pytest.raises(error, match=says):
        config_differences(bad, SGD())


def test_custom_inner_optimizer_loads_through_custom_objects():
    """A TF 2.4 config with a custom inner class needs `custom_objects`, as `from_config` does."""
    class MySGD(tf.keras.optimizers.SGD):
        pass

    serialized = CONFIGS["custom_inner"]["serialized"]
    with pytest.raises(ValueError, match="Unknown optimizer: MySGD"):
        config_differences(serialized, SGD())
    ours = lossscale_compat.KerasLossScaleOptimizer(MySGD(2.0), initial_scale=2, dynamic_growth_steps=3)
    assert config_differences(serialized, ours, custom_objects={"MySGD": MySGD}) == []
    assert "inner_optimizer: 'MySGD' (old) != 'SGD' (new)" in config_differences(
        serialized, lossscale_compat.KerasLossScaleOptimizer(SGD(2.0), initial_scale=2, dynamic_growth_steps=3),
        custom_objects={"MySGD": MySGD})


def test_equal_nans_are_equal_and_nan_differs_from_a_number():
    import warnings

    import tensorflow as tf

    import lossscale_compat

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"DynamicLossScale\(initial_loss_scale=nan\)", category=UserWarning)
        old = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1), initial_scale=float("nan"))
        new = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1), initial_scale=float("nan"))
        other = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1), initial_scale=2.0)
    lossscale_compat.assert_equivalent(old, new)
    with pytest.raises(AssertionError, match=r"initial_scale: nan \(old\) != 2.0 \(new\)"):
        lossscale_compat.assert_equivalent(old, other)


@pytest.mark.parametrize(
    "side", [{"class_name": 5, "config": {}}, {"class_name": "SGD", "config": []}, {"class_name": ["SGD"]}]
)
def test_a_serialized_optimizer_of_the_wrong_shape_is_a_type_error(side):
    """`class_name: 5` was an AttributeError ('int' object has no attribute 'lower'); `config: []` on both sides
    passed, as two optimizers of no settings (round five, bench/hostile_cases.py)."""
    with pytest.raises(TypeError, match=r"whose `class_name` is a string and `config` a dict, but got: "):
        assert_equivalent(side, side)


@pytest.mark.parametrize("name", [None, 5, tf.float16])
def test_a_policy_name_that_is_not_a_string_is_a_type_error_as_in_tf24(name):
    """TF 2.4's Policy refused any name that is not a string (its policy.py); today's takes None as the default."""
    with pytest.raises(TypeError, match=r"'name' must be a string"):
        lossscale_compat.Policy(name)
