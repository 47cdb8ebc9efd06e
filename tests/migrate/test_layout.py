"""What every rule's rewrite keeps of the file around it: modern code untouched, suppression comments,
the layout of multi-line calls (before/after strings)."""

from __future__ import annotations

import pytest

from .helpers import check


_FIXED = "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), {})"


def test_noop_on_modern_code():
    """Should do nothing, since the code already uses the modern API."""
    source = """\
        import tensorflow as tf
        from tensorflow.keras import mixed_precision
        opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        mixed_precision.set_global_policy('mixed_float16')
        """
    check(source, source)
    check(source, source, "tf_keras")


def test_suppression_comment():
    source = """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # lossscale-compat: ignore
        """
    check(source, source)


def test_multiline_call_keeps_layout():
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt,
            loss_scale='dynamic',
        )
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            opt,
        )
        """,
    )


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_multiline_call_keeps_closing_paren_on_its_own_line(target):
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05),
            loss_scale='dynamic'
        )
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt,
            tf.mixed_precision.experimental.DynamicLossScale(1024, 100)
        )
        p = tf.keras.mixed_precision.experimental.Policy(
            'mixed_float16', loss_scale='dynamic'
        )
        """,
        f"""\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05)
        )
        o = tf.keras.mixed_precision.LossScaleOptimizer(
            opt,
            initial_scale=1024,
            dynamic_growth_steps=100
        )
        p = tf.keras.mixed_precision.{"DTypePolicy" if target == "keras3" else "Policy"}(
            'mixed_float16'
        )
        """,
        target,
    )


def test_multiline_compile_keeps_closing_paren_on_its_own_line():
    check(
        f"""\
        import tensorflow as tf
        opt = {_FIXED.format(128)}
        model.compile(
            opt,
            loss='mse'
        )
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)
        model.compile(
            opt,
            loss='mse',
            auto_scale_loss=False
        )
        """,
    )


def test_argument_moved_from_last_place_drops_its_closing_newline():
    check(
        """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(loss_scale='dynamic', optimizer=opt
        )
        """,
        """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.LossScaleOptimizer(opt
        )
        """,
    )


def test_suppression_comment_after_a_form_feed():
    # A form feed is no line break for Python or libcst's positions, so the suppressed line is the one named.
    source = """\
        import tensorflow as tf
        \x0c
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # lossscale-compat: ignore
        p = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        """
    check(
        source,
        source.replace(
            "p = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
            "p = tf.keras.mixed_precision.LossScaleOptimizer(opt)",
        ),
    )
