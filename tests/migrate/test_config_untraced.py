"""Config comparisons of objects the codemod cannot trace (issue 30, pattern 5): in a file that builds loss-scale
optimizers they may be ones, whose configs Keras 3 never finds equal, so the comparison is warned (LSC152); two
names bound here to loss-scale optimizers are still rewritten to the testing check (LSC138)."""

from __future__ import annotations

import pytest
from lossscale_compat.codemods import _warnings as w

from .helpers import check

TARGETS = ("keras3", "tf_keras")


@pytest.mark.parametrize("target", TARGETS)
def test_pairs_compared_in_a_loop_are_warned(target):
    """The issue's regression test: before, the loop's comparison passed through with no warning."""
    source = """\
        import lossscale_compat

        def test_round_trip(pairs):
            for a, b in pairs:
                assert a.get_config() == b.get_config()

        def build(opt):
            return lossscale_compat.LossScaleOptimizer(opt, "dynamic")
        """
    check(source, source, target=target, codes=[w.CONFIG_COMPARED_UNTRACED])


def test_attributes_compared_with_assert_equal_are_warned():
    source = """\
        import tensorflow as tf

        class T:
            def setUp(self):
                self.opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())

            def test(self, other):
                self.assertEqual(self.opt.get_config(), other.get_config())
        """
    check(source, source, codes=[w.CONFIG_COMPARED_UNTRACED])


def test_a_file_that_builds_no_loss_scale_optimizer_is_not_touched():
    source = """\
        def test_round_trip(pairs):
            for a, b in pairs:
                assert a.get_config() == b.get_config()
        """
    check(source, source)


def test_a_comparison_with_a_known_other_object_is_not_touched():
    """A layer built here is no loss-scale optimizer: the comparison is not ours."""
    source = """\
        import tensorflow as tf

        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())

        def test_layer(layer):
            dense = tf.keras.layers.Dense(2)
            assert layer.get_config() == dense.get_config()
            assert layer.get_config() == tf.keras.layers.Dense(2).get_config()
        """
    check(source, source)


def test_two_traced_names_are_still_rewritten():
    check(
        """\
        import tensorflow as tf

        def test_same():
            a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
            b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
            assert a.get_config() == b.get_config()
        """,
        """\
        import tensorflow as tf
        import lossscale_compat.testing

        def test_same():
            a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
            b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
            lossscale_compat.testing.assert_config_equivalent(a, b)
        """,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )
