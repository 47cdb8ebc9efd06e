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
