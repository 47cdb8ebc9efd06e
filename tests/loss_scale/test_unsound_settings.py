"""Settings TF 2.4 accepted that defeat loss scaling: still accepted, now warned about at the user's line."""

import math
import warnings

import pytest

import lossscale_compat


@pytest.mark.parametrize("initial", [math.nan, math.inf, -math.inf])
def test_non_finite_initial_scale_is_accepted_with_a_warning(initial):
    with pytest.warns(UserWarning, match=r"initial_loss_scale=(nan|inf|-inf)\) never recovers") as caught:
        loss_scale = lossscale_compat.DynamicLossScale(initial_loss_scale=initial)
    (warning,) = [w for w in caught if w.category is UserWarning]  # the other one says the class is TF 2.4's
    assert warning.filename == __file__  # points at the caller, not at lossscale_compat
    assert loss_scale.initial_loss_scale == initial or math.isnan(loss_scale.initial_loss_scale)


@pytest.mark.parametrize("multiplier", [0.5, 0, -2])
def test_multiplier_below_one_is_accepted_with_a_warning(multiplier):
    with pytest.warns(UserWarning, match="runs backwards") as caught:
        loss_scale = lossscale_compat.DynamicLossScale(multiplier=multiplier)
    assert len([w for w in caught if w.category is UserWarning]) == 1
    assert loss_scale.multiplier == float(multiplier)


def test_sound_settings_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", lossscale_compat.LossScaleDeprecationWarning)
        lossscale_compat.DynamicLossScale(initial_loss_scale=2**15, increment_period=2, multiplier=1)


def test_warned_once_per_call_site():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", lossscale_compat.LossScaleDeprecationWarning)
        for _ in range(3):
            lossscale_compat.DynamicLossScale(multiplier=0.5)
    assert len([w for w in caught if "runs backwards" in str(w.message)]) == 1


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_fixed_scale_is_accepted_with_a_warning(value):
    with pytest.warns(UserWarning, match=r"FixedLossScale\((nan|inf)\) makes every scaled loss") as caught:
        loss_scale = lossscale_compat.FixedLossScale(value)
    (warning,) = [w for w in caught if w.category is UserWarning]
    assert warning.filename == __file__
    assert loss_scale.get_config()["loss_scale_value"] == value or math.isnan(value)


def test_a_fractional_increment_period_is_truncated_with_a_warning():
    with pytest.warns(UserWarning, match=r"increment_period=1.5\) is truncated to 1 good steps") as caught:
        loss_scale = lossscale_compat.DynamicLossScale(increment_period=1.5)
    (warning,) = [w for w in caught if w.category is UserWarning]
    assert warning.filename == __file__
    assert loss_scale.increment_period == 1  # as TF 2.4's int()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", lossscale_compat.LossScaleDeprecationWarning)
        lossscale_compat.DynamicLossScale(increment_period=4.0)
        lossscale_compat.FixedLossScale(128)


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"initial_loss_scale": "x"}, ValueError, "DynamicLossScale's initial_loss_scale must be a number, but got 'x'"),
        ({"increment_period": math.nan}, ValueError, "increment_period must be a whole number, but got nan"),
        ({"increment_period": None}, TypeError, "increment_period must be a whole number, but got None"),
        ({"multiplier": [2]}, TypeError, "multiplier must be a number, but got [2]"),
    ],
)
def test_an_argument_that_is_no_number_names_itself_with_tf24s_error_type(kwargs, error, says):
    with pytest.raises(error) as caught:
        lossscale_compat.DynamicLossScale(**kwargs)
    assert type(caught.value) is error and says in str(caught.value) and "Instead, pass a number" in str(caught.value)
