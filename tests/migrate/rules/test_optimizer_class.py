"""rules/optimizer_class: which class an optimizer construction becomes, the one owner of that verdict (before/after
strings per target): a refusal of `SHIM_INSTEAD` runs on lossscale_compat's class (`refused`), a decided
construction moves to our loop class (`on_shim`), and a use of TF 2.4's final class is spelled as ours
(`named_shim`)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods.rules import optimizer_class

from ..helpers import check

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])
_LSO = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


def test_the_refusals_that_go_to_our_class_are_the_ones_with_a_way_out():
    assert w.STAR_ARGS in optimizer_class.SHIM_INSTEAD and w.LOSS_SCALE_NOT_VISIBLE in optimizer_class.SHIM_INSTEAD
    assert w.BAD_ARGUMENTS not in optimizer_class.SHIM_INSTEAD


@BOTH
def test_star_arguments_run_on_our_class_with_the_same_arguments(target):
    check(
        f"import tensorflow as tf\nopt = {_LSO}(*args)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\nopt = lossscale_compat.LossScaleOptimizer(*args)\n",
        target,
        codes=[w.OPTIMIZER_SHIM_NOTE],
    )


@BOTH
def test_a_loss_scale_not_visible_here_runs_on_our_class(target):
    check(
        f"import tensorflow as tf\n\ndef build(opt, scale):\n    return {_LSO}(opt, scale)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "def build(opt, scale):\n    return lossscale_compat.LossScaleOptimizer(opt, scale)\n",
        target,
        codes=[w.OPTIMIZER_SHIM_NOTE],
    )


@BOTH
def test_a_multiplier_no_modern_class_has_keeps_tf24s_loss_scale_on_our_classes(target):
    check(
        "import tensorflow as tf\n"
        "ls = tf.mixed_precision.experimental.DynamicLossScale(increment_period=10, multiplier=3.)\n"
        f"opt = {_LSO}(tf.keras.optimizers.SGD(), ls)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "ls = lossscale_compat.DynamicLossScale(increment_period=10, multiplier=3.)\n"
        "opt = lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(), ls)\n",
        target,
        codes=[w.SHIM_NOTE, w.OPTIMIZER_SHIM_NOTE],
    )


@BOTH
def test_a_refusal_without_a_way_out_leaves_the_call_alone(target):
    source = f"import tensorflow as tf\nopt = {_LSO}(tf.keras.optimizers.SGD(), 'dynamic', extra=1)\n"
    check(source, source, target, codes=[w.BAD_ARGUMENTS])


def test_an_escaping_optimizer_moves_to_our_loop_class_on_keras3_only():
    source = f"import tensorflow as tf\n\ndef build():\n    return {_LSO}(tf.keras.optimizers.SGD(), 'dynamic')\n"
    check(
        source,
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "def build():\n    return lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n",
        codes=[w.ESCAPING_SHIM_NOTE],
    )
    check(
        source,
        "import tensorflow as tf\n\n"
        "def build():\n    return tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
        "tf_keras",
    )


def test_tf24s_final_class_is_spelled_as_ours_where_its_loop_method_stays_on_keras3_only():
    body = "with tf.GradientTape() as tape:\n    loss = opt.get_scaled_loss(f())\n"
    source = f"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n{body}"
    check(
        source,
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        f"opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n{body}",
        codes=[w.FINAL_CLASS_SHIM_NOTE, w.RECEIVER_NOT_PROVEN],
    )
    check(source, source, "tf_keras")
    assert optimizer_class.named_shim(w.FINAL_CLASS_SHIM_NOTE).name == optimizer_class.LOOP_SHIM


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_an_assignment_to_the_experimental_class_is_left_alone_and_warned(target):
    """Found in the stop-50 merge: `mp.LossScaleOptimizer = None` became an assignment to lossscale_compat's class."""
    check(
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.LossScaleOptimizer = None
        del tf.keras.mixed_precision.experimental.LossScaleOptimizer
        """,
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.LossScaleOptimizer = None
        del tf.keras.mixed_precision.experimental.LossScaleOptimizer
        """,
        target,
        codes=[w.NAME_ASSIGNED, w.NAME_ASSIGNED],
    )


def test_an_assignment_through_a_module_alias_leaves_the_class_of_lossscale_compat_alone():
    check(
        """\
        from tensorflow.keras.mixed_precision import experimental as mp
        mp.LossScaleOptimizer = None
        """,
        """\
        from lossscale_compat import keras_experimental as mp
        mp.LossScaleOptimizer = None
        """,
        codes=[w.MODULE_FALLBACK_NOTE, w.NAME_ASSIGNED],
    )
