"""modern_equivalent: the modern optimizer the codemod writes for a TF 2.4 construction, or why there is none."""

import pytest
import tensorflow as tf
from tf24_optimizers import KERAS3, OPTIMIZER_GOLDENS

import lossscale_compat
from lossscale_compat import _mapping
from lossscale_compat.testing import assert_behaviour_equivalent, assert_config_equivalent, modern_equivalent

SGD = tf.keras.optimizers.SGD
Native = tf.keras.mixed_precision.LossScaleOptimizer
FORMS = [case for case in OPTIMIZER_GOLDENS["configs"]["forms"] if "ok" in case["serialize"]]


def test_the_doctest_equalities():
    """'dynamic' is the modern default; DynamicLossScale(2048, 500) its two settings; 123 a fixed 123."""
    modern = modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(), "dynamic"))
    assert isinstance(modern, Native) and not isinstance(modern, lossscale_compat.KerasLossScaleOptimizer)
    assert_config_equivalent(modern, Native(SGD()))
    modern = modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(), lossscale_compat.DynamicLossScale(2048, 500)))
    assert_config_equivalent(modern, Native(SGD(), initial_scale=2048, dynamic_growth_steps=500))
    fixed = lossscale_compat.LossScaleOptimizer(SGD(), 128)
    assert_config_equivalent(fixed, modern_equivalent(fixed))
    if KERAS3:  # 123 is not a power of two: Keras 3 would divide where TF 2.4 multiplied by 1/123
        with pytest.raises(ValueError, match="123.0 is not a power of two"):
            modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(), 123))
    else:
        fixed = lossscale_compat.LossScaleOptimizer(SGD(0.1), 123)
        assert_config_equivalent(fixed, modern_equivalent(fixed))
        assert_behaviour_equivalent(lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), 123),
                                    lambda: modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(0.1), 123)))


@pytest.mark.skipif(not KERAS3, reason="Keras 3 expresses a fixed scale as the optimizer's loss_scale_factor")
def test_keras3_fixed_scale_is_the_inner_optimizers_loss_scale_factor():
    modern = modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(0.1, momentum=0.9), 128))
    assert type(modern) is SGD and modern.loss_scale_factor == 128
    assert modern.momentum == 0.9


@pytest.mark.parametrize("case", FORMS, ids=[case["name"] for case in FORMS])
def test_tf24_serialized_configs(case):
    """Every TF 2.4.0 serialized form in the goldens has a modern equivalent, unless Keras 3 cannot express it."""
    config = case["serialize"]["ok"]
    tf24 = lossscale_compat.KerasLossScaleOptimizer.from_config(config["config"])
    if KERAS3 and not tf24.dynamic and not _mapping.is_exact_loss_scale_factor(tf24.initial_scale):
        with pytest.raises(ValueError, match="not a power of two"):
            modern_equivalent(config)
        return
    assert_config_equivalent(config, modern_equivalent(config))


def test_a_loss_scale_needs_the_optimizer_it_scales_for():
    with pytest.raises(TypeError, match=r"modern_equivalent\(loss_scale, inner_optimizer=...\)"):
        modern_equivalent(lossscale_compat.DynamicLossScale(8, 3))
    modern = modern_equivalent(lossscale_compat.DynamicLossScale(8, 3), inner_optimizer=SGD(0.1))
    assert_config_equivalent(modern, Native(SGD(0.1), initial_scale=8, dynamic_growth_steps=3))
    assert_config_equivalent(modern_equivalent("dynamic", inner_optimizer=SGD()), Native(SGD()))


@pytest.mark.parametrize("legacy, error, says", [
    pytest.param(lambda: lossscale_compat.DynamicLossScale(8, 3, multiplier=3), ValueError, "multiplier 3.0",
                 id="multiplier 3"),
    pytest.param(lambda: Native(SGD()), ValueError, "already a modern optimizer", id="a modern optimizer"),
    pytest.param(lambda: SGD(), ValueError, "already a modern optimizer", id="a plain optimizer"),
    pytest.param(lambda: {"class_name": "SGD", "config": {}}, ValueError, "not a loss-scale optimizer's",
                 id="a plain optimizer's config"),
    pytest.param(lambda: {"optimizer": {"class_name": "SGD", "config": {}}, "loss_scale": {
        "class_name": "DynamicLossScale", "config": {"initial_loss_scale": 2, "increment_period": 2, "multiplier": 4}}},
                 ValueError, "multiplier is not 2", id="TF 2.3 config with multiplier 4"),
    pytest.param(lambda: "junk", ValueError, "Invalid value passed to loss_scale", id="a string"),
])
def test_no_modern_equivalent_says_why(legacy, error, says):
    with pytest.raises(error, match=says):
        modern_equivalent(legacy(), inner_optimizer=SGD())


@pytest.mark.skipif(not KERAS3, reason="loss_scale_factor is Keras 3's")
def test_an_inner_optimizer_with_its_own_factor_is_refused():
    with pytest.raises(ValueError, match="already has loss_scale_factor=4"):
        modern_equivalent("dynamic", inner_optimizer=SGD(loss_scale_factor=4.0))


def test_the_result_shares_no_state_with_the_legacy_optimizer():
    legacy = lossscale_compat.LossScaleOptimizer(SGD(0.1), "dynamic")
    modern = modern_equivalent(legacy)
    assert modern.inner_optimizer is not legacy.inner_optimizer
