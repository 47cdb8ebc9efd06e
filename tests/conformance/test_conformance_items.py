"""TF 2.4's own tests of tf.keras.mixed_precision's optimizers and of its loss scales, re-run in legacy mode.

The tf24_item tests (tests/optimizer/test_tf24_lso_test_items.py, tests/loss_scale/test_tf24_loss_scale_test_items.py)
compare with TF 2.4.0's recorded results; here each runs again in legacy mode, where TF 2.4's public names
are the classes they test (checked first), so each is a run of the TF 2.4 test through TF 2.4's public API.
"""

import pytest
import tensorflow as tf
from test_tf24_loss_scale_test_items import *  # noqa: F403 - re-collected here, in legacy mode
from test_configs import (  # noqa: F401 - re-collected here, in legacy mode
    test_custom_inner_loads_with_custom_objects,
    test_custom_inner_needs_custom_objects,
    test_form_config_round_trips_through_from_config_of_other_class,
    test_form_config_round_trips_through_from_config_of_same_class,
)
from test_errors import test_constructor_matches_tf24  # noqa: F401
from tf24_goldens import our_class
from test_tf24_lso_test_items import *  # noqa: F403

import lossscale_compat
from lossscale_compat import _flavour


@pytest.fixture(autouse=True)
def tf24_public_names(legacy_mode, monkeypatch):
    """The tf24_item tests' classes as a TF 2.4 program spells them, resolved in legacy mode (on Keras 2, by default,
    TF 2.4's optimizers and the loss-scale optimizer forms over them), not as the items' module bound them."""
    import test_tf24_lso_test_items as items

    mp = tf.keras.mixed_precision
    for name, value in {"LSO": mp.LossScaleOptimizer, "LSOV1": mp.experimental.LossScaleOptimizer,
                        "SGD": tf.keras.optimizers.SGD, "Adam": tf.keras.optimizers.Adam}.items():
        monkeypatch.setattr(items, name, value)


def test_tf24_public_names_are_the_classes_the_items_test():
    """In legacy mode TF 2.4's public names resolve to the classes the tf24_item tests construct: the package's
    own, or on Keras 2 with TF 2.4's optimizers (legacy mode's default) the forms over those (which the items
    re-collected from test_configs and test_errors build through TF 2.4's names, `tf24_goldens.our_class`)."""
    mp = tf.keras.mixed_precision
    if _flavour.tf24_optimizers_in_effect():
        assert issubclass(mp.LossScaleOptimizer, _flavour.keras2_loss_scale_optimizer_for_legacy_optimizers())
        assert issubclass(mp.experimental.LossScaleOptimizer, mp.LossScaleOptimizer)
        assert isinstance(mp.LossScaleOptimizer(tf.keras.optimizers.SGD()), lossscale_compat.KerasLossScaleOptimizer)
    else:
        assert mp.LossScaleOptimizer is lossscale_compat.KerasLossScaleOptimizer
        assert mp.experimental.LossScaleOptimizer is lossscale_compat.LossScaleOptimizer
    assert our_class("LossScaleOptimizer") is mp.LossScaleOptimizer
    assert our_class("LossScaleOptimizerV1") is mp.experimental.LossScaleOptimizer
    for name in ("LossScale", "FixedLossScale", "DynamicLossScale"):
        assert getattr(tf.mixed_precision.experimental, name) is getattr(lossscale_compat, name)
        assert getattr(tf.train.experimental, name) is getattr(lossscale_compat, name)
