"""rules/loss_scale: standalone loss-scale objects (lossscale_compat's class, or TensorFlow's own for TF1 consumers)
and loss scales folded into a call."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


def test_standalone_loss_scale_uses_shim_with_note():
    check(
        "import tensorflow as tf\nls = tf.mixed_precision.experimental.DynamicLossScale(multiplier=4)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\nls = lossscale_compat.DynamicLossScale(multiplier=4)\n",
        codes=[w.SHIM_NOTE],
    )
    check(
        "from tensorflow.train.experimental import FixedLossScale\nls = FixedLossScale(8)\n",
        "from lossscale_compat import FixedLossScale\nls = FixedLossScale(8)\n",
        codes=[w.SHIM_NOTE],
    )


def test_folded_loss_scale_import_is_removed():
    check(
        """\
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
        from tensorflow.mixed_precision.experimental import DynamicLossScale
        opt = LossScaleOptimizer(opt, DynamicLossScale(256))
        """,
        """\
        from keras.mixed_precision import LossScaleOptimizer
        opt = LossScaleOptimizer(opt, initial_scale=256)
        """,
    )


# ---------------------------------------------------------------- gap D: a LossScale object only TF1 code uses
@BOTH
def test_loss_scale_fed_to_the_tf1_loss_scale_optimizer_stays_tensorflows_class(target):
    check(
        """\
        import tensorflow as tf

        def wide_optimizer(flags):
            opt = tf.compat.v1.train.FtrlOptimizer(flags.learning_rate)
            if flags.amp:
                scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 12, increment_period=2000)
                opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale=scale)
            return opt
        """,
        """\
        import tensorflow as tf

        def wide_optimizer(flags):
            opt = tf.compat.v1.train.FtrlOptimizer(flags.learning_rate)
            if flags.amp:
                scale = tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale=2 ** 12, increment_period=2000)
                opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale=scale)
            return opt
        """,
        target,
        codes=[w.TF1_KEPT_NOTE],
    )


@BOTH
def test_loss_scale_inline_in_the_tf1_loss_scale_optimizer_stays_tensorflows_class(target):
    check(
        """\
        import tensorflow as tf
        o = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, tf.train.experimental.FixedLossScale(8))
        """,
        """\
        import tensorflow as tf
        o = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, tf.compat.v1.mixed_precision.FixedLossScale(8))
        """,
        target,
        codes=[w.TF1_LOSS_SCALE_OPTIMIZER, w.TF1_KEPT_NOTE],
    )


def test_loss_scale_fed_to_a_tf1_graph_rewrite_and_read_stays_tensorflows_class():
    check(
        """\
        import tensorflow as tf

        def predict_graph(amp):
            if amp:
                scaler = tf.train.experimental.FixedLossScale(1)
                tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.AdamOptimizer(0.0), scaler)
                tf.identity(scaler(), name="loss_scale")
        """,
        """\
        import tensorflow as tf

        def predict_graph(amp):
            if amp:
                scaler = tf.compat.v1.mixed_precision.FixedLossScale(1)
                tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.AdamOptimizer(0.0), scaler)
                tf.identity(scaler(), name="loss_scale")
        """,
        codes=[w.TF1_KEPT_NOTE, w.TF1_KEPT_NOTE],
    )


def test_loss_scale_fed_to_a_graph_rewrite_of_unknown_kind_stays_tensorflows_class():
    """TensorFlow's class reaches TF1's rewrite as it is, and lossscale_compat's optimizer takes it too."""
    check(
        """\
        import tensorflow as tf

        def wrap(optimizer, init_scale):
            scaler = tf.train.experimental.DynamicLossScale(initial_loss_scale=init_scale, increment_period=1000)
            return tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, scaler)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        def wrap(optimizer, init_scale):
            scaler = tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale=init_scale, increment_period=1000)
            return lossscale_compat.enable_mixed_precision_graph_rewrite(optimizer, scaler)
        """,
        codes=[w.TF1_KEPT_NOTE, w.GRAPH_REWRITE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "use",
    [
        "return scale",  # escapes
        "model_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(model_optimizer, scale)",
    ],
)
def test_loss_scale_with_a_keras_or_unknown_use_keeps_the_shim(use):
    new, codes = migrate(f"""\
        import tensorflow as tf

        def f(model_optimizer):
            scale = tf.train.experimental.DynamicLossScale(multiplier=3)
            MP = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(), scale)
            {use}
        """)
    assert "scale = lossscale_compat.DynamicLossScale(multiplier=3)" in new
    assert w.SHIM_NOTE in codes and w.TF1_KEPT_NOTE not in codes


@BOTH
def test_a_dynamic_loss_scale_read_from_a_config_moves_onto_the_modern_wrap(target):
    """google/automl's shape: `DynamicLossScale(params['loss_scale'])` inline; the value runs once, where it ran."""
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.1), loss_scale=tf.mixed_precision.experimental.DynamicLossScale(params['scale']))
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.1), initial_scale=float(params['scale']))
        """,
        target,
    )


@pytest.mark.parametrize(
    "call",
    [
        "LossScaleOptimizer(tf.keras.optimizers.SGD(), DynamicLossScale(increment_period=f(), initial_loss_scale=g()))",
        "LossScaleOptimizer(loss_scale=DynamicLossScale(g()), optimizer=tf.keras.optimizers.SGD())",
        "LossScaleOptimizer(tf.keras.optimizers.SGD(), DynamicLossScale(g(), multiplier=h()))",
    ],
)
def test_a_computed_loss_scale_value_that_would_run_out_of_order_keeps_the_shim(call):
    new, codes = migrate(
        f"""\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
        from tensorflow.mixed_precision.experimental import DynamicLossScale
        opt = {call}
        """
    )
    assert "from lossscale_compat import LossScaleOptimizer\n" in new and w.OPTIMIZER_SHIM_NOTE in codes
