"""TF 2.4 names used as values, and graph rewrites no modern construction matches: each becomes lossscale_compat's
object of the same name, so a migrated file names nothing today's TensorFlow lacks (issue 25)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from .helpers import check, migrate

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])
_LSO = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


@BOTH
@pytest.mark.parametrize(
    "use",
    [
        "wrappers = {{'lso': {cls}}}",
        "register('LossScaleOptimizer', {cls})",
        "def wrapper():\n    return {cls}",
        "classes = [tf.keras.optimizers.SGD, {cls}]",
    ],
)
def test_the_experimental_class_as_a_value_names_lossscale_compats(use, target):
    check(
        f"import tensorflow as tf\n{use.format(cls=_LSO)}\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\n{use.format(cls='lossscale_compat.LossScaleOptimizer')}\n",
        target,
        codes=[w.CLASS_SHIM_NOTE],
    )


@pytest.mark.parametrize("use", ["ok = o.__class__ == {cls}", "ok = o.__class__ in ({cls}, int)", "class C({cls}): pass"])
def test_the_experimental_class_compared_or_subclassed_stays_warned(use):
    """Only objects built by lossscale_compat's class would compare equal: which class to compare with is a choice."""
    source = f"import tensorflow as tf\n{use.format(cls=_LSO)}\n"
    check(source, source, codes=[w.UNSUPPORTED_USE])


@BOTH
def test_the_graph_rewrite_as_a_value_names_lossscale_compats(target):
    check(
        """\
        import tensorflow as tf
        amp = tf.train.experimental.enable_mixed_precision_graph_rewrite if FLAGS.amp else (lambda o: o)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        amp = lossscale_compat.enable_mixed_precision_graph_rewrite if FLAGS.amp else (lambda o: o)
        """,
        target,
        codes=[w.VALUE_FALLBACK_NOTE],
    )


@BOTH
def test_get_layer_policy_as_a_value_or_with_star_args_names_lossscale_compats(target):
    check(
        """\
        import tensorflow as tf
        describe = tf.keras.mixed_precision.experimental.get_layer_policy
        policy = tf.keras.mixed_precision.experimental.get_layer_policy(*layers)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        describe = lossscale_compat.keras_experimental.get_layer_policy
        policy = lossscale_compat.keras_experimental.get_layer_policy(*layers)
        """,
        target,
        codes=[w.VALUE_FALLBACK_NOTE, w.VALUE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize("call", ["Policy('mixed_float16', loss_scale=scale)", "Policy('mixed_float16', 128)",
                                  "Policy(*args)"])
def test_a_policy_alias_called_with_a_loss_scale_names_lossscale_compats(call):
    check(
        f"""\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        Policy = mixed_precision.Policy
        policy = {call}
        """,
        f"""\
        import lossscale_compat

        Policy = lossscale_compat.Policy
        policy = {call}
        """,
        codes=[w.VALUE_FALLBACK_NOTE],
    )


def test_a_policy_alias_called_without_a_loss_scale_names_the_modern_class():
    check(
        """\
        import tensorflow as tf
        Policy = tf.keras.mixed_precision.experimental.Policy
        policy = Policy('mixed_float16')
        """,
        """\
        import tensorflow as tf
        Policy = tf.keras.mixed_precision.DTypePolicy
        policy = Policy('mixed_float16')
        """,
    )


@pytest.mark.parametrize("scale", ["100", "FLAGS.loss_scale", "tf.mixed_precision.experimental.DynamicLossScale(8, 4, 3)"])
def test_graph_rewrite_of_a_keras_optimizer_whose_loss_scale_keras3_cannot_express_calls_lossscale_compats(scale):
    """Keras 3 has no fixed scale but a power-of-two `loss_scale_factor`, and no multiplier: lossscale_compat's
    rewrite wraps in its class with TF 2.4's loss scale (TF 2.4's numbers); the loss-scale object stays ours."""
    new, codes = migrate(
        "import tensorflow as tf\n"
        f"opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), {scale})\n"
    )
    assert "opt = lossscale_compat.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), " in new
    assert "tf.mixed_precision.experimental" not in new
    assert codes[0] == w.GRAPH_REWRITE_SHIM_NOTE
    assert set(codes[1:]) <= {w.SHIM_NOTE}


def test_graph_rewrite_of_a_keras_optimizer_with_a_fixed_scale_stays_modern_on_tf_keras():
    check(
        "import tensorflow as tf\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), 100)\n",
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False, "
        "initial_scale=100)\n",
        "tf_keras",
        codes=[w.GRAPH_REWRITE_NOTE],
    )
