"""A migrated regression test's config comparison runs on the installed stack: it passes for equal constructions and
fails for unequal ones, where the `==` it replaces fails even for equal ones on Keras 3."""

from __future__ import annotations

import textwrap

import pytest

from lossscale_compat.codemods._engine import migrate_source

pytest.importorskip("tensorflow")

from lossscale_compat import _flavour  # noqa: E402

TARGET = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"

SOURCE = """\
    import tensorflow as tf

    def test_same_settings():
        a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 'dynamic')
        b = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD({rate}), 'dynamic')
        assert a.get_config() == b.get_config()
    """


def migrated_test(rate: float):
    """The migrated module's test function, for a second optimizer with learning rate `rate`."""
    result = migrate_source(textwrap.dedent(SOURCE.format(rate=rate)).encode(), TARGET, "test_t.py")
    assert result.status == "changed", (result.status, result.error)
    assert "lossscale_compat.testing.assert_config_equivalent(a, b)" in result.new.decode()
    namespace: dict = {}
    exec(compile(result.new.decode(), "test_t.py", "exec"), namespace)
    return namespace["test_same_settings"]


def test_migrated_config_assertion_passes_for_equal_constructions():
    migrated_test(0.1)()


def test_migrated_config_assertion_fails_for_unequal_constructions():
    with pytest.raises(AssertionError, match="learning_rate"):
        migrated_test(0.2)()


@pytest.mark.skipif(TARGET != "keras3", reason="the unique optimizer names are Keras 3's")
def test_the_replaced_comparison_fails_on_keras3_for_equal_constructions():
    """Why the rewrite: with the constructions migrated but the `==` kept, the test would fail."""
    import keras

    a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    assert a.get_config() != b.get_config()
