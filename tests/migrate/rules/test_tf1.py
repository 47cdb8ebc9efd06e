"""rules/tf1: TF1's `MixedPrecisionLossScaleOptimizer` and sites that stay on `tf.compat.v1.mixed_precision`."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check


BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow.compat.v1 as tf\n"
        "o = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.compat.v1.mixed_precision import MixedPrecisionLossScaleOptimizer as MP\n"
        "o = MP(opt, 'dynamic')\n",
        "import tensorflow as tf\nok = isinstance(o, tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer)\n",
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_tf1_mixed_precision_loss_scale_optimizer_is_never_rewritten(source, target):
    """Should warn and leave it, since it wraps a TF1 optimizer that has no modern equivalent."""
    check(source, source, target, codes=[w.TF1_LOSS_SCALE_OPTIMIZER])


@BOTH
def test_the_tf1_loss_scale_optimizer_of_a_tf1_optimizer_stays_silently_through_a_horovod_wrap(target):
    unchanged = """\
        import horovod.tensorflow as hvd
        import tensorflow as tf

        def deep_optimizer(flags):
            opt = tf.compat.v1.train.AdagradOptimizer(flags.learning_rate, initial_accumulator_value=0.1)
            if flags.hvd:
                opt = hvd.DistributedOptimizer(opt)
            return tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, "dynamic")
        """
    check(
        unchanged,
        unchanged,
        target,
        codes=[],
    )


@BOTH
def test_the_tf1_loss_scale_optimizer_of_a_parameter_or_an_unknown_wrapper_is_warned(target):
    unchanged = """\
        import tensorflow as tf

        def wrap(opt):
            return tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, "dynamic")

        def deep_optimizer(flags):
            opt = my_wrapper(tf.compat.v1.train.AdagradOptimizer(flags.learning_rate))
            return tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, "dynamic")
        """
    check(
        unchanged,
        unchanged,
        target,
        codes=[w.TF1_LOSS_SCALE_OPTIMIZER, w.TF1_LOSS_SCALE_OPTIMIZER],
    )
