"""Deprecation warnings: the Python way, once per call site, naming the modern equivalent."""

import warnings

import pytest

import lossscale_compat
from lossscale_compat import _flavour


def record(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        make()
    return [w for w in caught if issubclass(w.category, lossscale_compat.LossScaleDeprecationWarning)]


def test_dynamic_warning_names_modern_call_with_callers_values():
    caught = record(lambda: lossscale_compat.DynamicLossScale(initial_loss_scale=2048, increment_period=500))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "LossScaleOptimizer(inner_optimizer, initial_scale=2048.0, dynamic_growth_steps=500)" in message
    assert "lossscale-compat migrate" in message
    assert caught[0].filename == __file__


def test_dynamic_warning_with_other_multiplier_says_there_is_no_equivalent():
    caught = record(lambda: lossscale_compat.DynamicLossScale(multiplier=3))
    assert "no modern equivalent" in str(caught[0].message)


def test_fixed_warning_names_flavours_equivalent():
    caught = record(lambda: lossscale_compat.FixedLossScale(128))
    expected = ("loss_scale_factor=128.0" if _flavour.has_keras3_loss_scaling()
                else "dynamic=False, initial_scale=128.0")
    assert expected in str(caught[0].message)


def test_warning_points_at_user_code_when_made_through_get():
    caught = record(lambda: lossscale_compat.get("dynamic"))
    assert caught[0].filename == __file__


def test_warned_once_per_call_site():
    def make_twice_from_one_line():
        for _ in range(3):
            lossscale_compat.FixedLossScale(2)

    def make_from_two_lines():
        lossscale_compat.FixedLossScale(2)
        lossscale_compat.FixedLossScale(2)

    assert len(record(make_twice_from_one_line)) == 1
    assert len(record(make_from_two_lines)) == 2


def test_warning_is_a_deprecation_warning_users_can_filter():
    assert issubclass(lossscale_compat.LossScaleDeprecationWarning, DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lossscale_compat.LossScaleDeprecationWarning)
        with pytest.raises(lossscale_compat.LossScaleDeprecationWarning):
            lossscale_compat.FixedLossScale(2)


def _names_the_training_difference(message):
    return "does not advance its `iterations`" in message and "lossscale-compat record" in message


def test_a_dynamic_replacement_names_how_keras3_trains_differently_and_how_to_compare():
    """Keras 3's own class is configured alike but trains differently after a skipped step; Keras 2's trains alike."""
    keras3 = _flavour.has_keras3_loss_scaling()
    dynamic = str(record(lambda: lossscale_compat.DynamicLossScale())[0].message)
    inner = tf_keras_sgd()
    optimizer = str(record(lambda: lossscale_compat.LossScaleOptimizer(inner, "dynamic"))[0].message)
    assert _names_the_training_difference(dynamic) == keras3
    assert _names_the_training_difference(optimizer) == keras3
    assert "docs/equivalence.md" in dynamic if keras3 else "docs/equivalence.md" not in dynamic


def test_a_fixed_replacement_names_no_training_difference():
    inner = tf_keras_sgd()
    fixed = str(record(lambda: lossscale_compat.LossScaleOptimizer(inner, 128))[0].message)
    assert not _names_the_training_difference(fixed)
    assert not _names_the_training_difference(str(record(lambda: lossscale_compat.FixedLossScale(128))[0].message))


def tf_keras_sgd():
    import tensorflow as tf

    return tf.keras.optimizers.SGD(0.1)
