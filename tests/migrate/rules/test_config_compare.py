"""rules/config_compare: `get_config()` comparisons of two loss-scale optimizers -> `assert_config_equivalent`."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check


_TWO_LSOS = """\
    import tensorflow as tf

    def test_configs():
        a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        b = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        {check}
    """

_TWO_LSOS_AFTER = """\
    import tensorflow as tf
    {imports}
    def test_configs():
        a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        {check}
    """


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_config_comparison_assert_becomes_assert_config_equivalent(target):
    check(
        _TWO_LSOS.format(check="assert a.get_config() == b.get_config()"),
        _TWO_LSOS_AFTER.format(
            imports="import lossscale_compat.testing\n", check="lossscale_compat.testing.assert_config_equivalent(a, b)"
        ),
        target,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


def test_config_comparison_in_unittest_assert_equal_becomes_assert_config_equivalent():
    check(
        """\
        import unittest
        import tensorflow as tf

        class T(unittest.TestCase):
            def test_configs(self):
                a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
                b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                self.assertEqual(a.get_config(), b.get_config())
        """,
        """\
        import unittest
        import tensorflow as tf
        import lossscale_compat.testing

        class T(unittest.TestCase):
            def test_configs(self):
                a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                lossscale_compat.testing.assert_config_equivalent(a, b)
        """,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


@pytest.mark.parametrize(
    "compared",
    [
        "assert a.get_config() != b.get_config()",  # on Keras 3 always true: a person says what was meant
        "assert not a.get_config() == b.get_config()",
        "assert a.get_config() == b.get_config(), 'same settings'",  # the message would be lost
        "same = a.get_config() == b.get_config()",  # not an assertion
        "assert a.get_config() == other.get_config()",  # one side not known to be a loss-scale optimizer
        "self.assertNotEqual(a.get_config(), b.get_config())",
        "self.assertTrue(a.get_config() == b.get_config())",
    ],
)
def test_config_comparison_that_cannot_be_rewritten_is_warned_and_left(compared):
    check(
        _TWO_LSOS.format(check=compared),
        _TWO_LSOS_AFTER.format(imports="", check=compared),
        codes=[w.CONFIG_COMPARED],
    )


@pytest.mark.parametrize(
    "source",
    [
        # neither receiver is known to be a loss-scale optimizer (layers, models, a parameter)
        "import tensorflow as tf\ndef test(x, y):\n    assert x.get_config() == y.get_config()\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "assert layer.get_config() == tf.keras.layers.Dense(1).get_config()\n",
        # bound twice: which object it is depends on the path taken
        "import keras\na = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())\nb = a\n"
        "if flag:\n    a = keras.optimizers.SGD()\nassert a.get_config() == b.get_config()\n",
    ],
)
def test_config_comparison_of_unknown_receivers_is_left_alone_silently(source):
    check(source, source)
    check(source, source, "tf_keras")


def test_config_comparison_in_a_file_already_on_the_modern_api_is_rewritten():
    """A test file migrated before holds no TF 2.4 name: the prefilter still lets it through."""
    check(
        """\
        import keras

        def test_configs():
            a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            assert a.get_config() == b.get_config()
        """,
        """\
        import keras
        import lossscale_compat.testing

        def test_configs():
            a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            lossscale_compat.testing.assert_config_equivalent(a, b)
        """,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


def test_config_comparison_where_lossscale_compat_names_something_else_is_warned():
    source = """\
        import keras
        lossscale_compat = None
        a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())
        b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())
        assert a.get_config() == b.get_config()
        """
    check(source, source, codes=[w.NAME_CLASH])
