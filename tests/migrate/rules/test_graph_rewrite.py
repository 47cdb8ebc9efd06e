"""rules/graph_rewrite: enabling the graph rewrite (a wrap, TF1's name, or the run-time fallback) and disabling it
(before/after strings per target)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


_DISABLE = "tf.train.experimental.disable_mixed_precision_graph_rewrite"

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


def test_graph_rewrite_becomes_explicit_wrap_with_note():
    check(
        "import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
        codes=[w.GRAPH_REWRITE_NOTE],
    )


@pytest.mark.parametrize(
    "name",
    [
        "tf.train.experimental.disable_mixed_precision_graph_rewrite",
        "tf.compat.v1.train.experimental.disable_mixed_precision_graph_rewrite",
        "tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite",
    ],
)
def test_disable_graph_rewrite_statement_is_removed_with_note(name):
    """Should remove the call, since there is no graph rewrite left to disable; comments move down."""
    check(
        f"""\
        import tensorflow as tf

        # back to float32
        {name}()  # done
        x = 1
        """,
        """\
        import tensorflow as tf

        # back to float32
        # done
        x = 1
        """,
        codes=[w.DISABLE_REMOVED_NOTE],
    )


def test_disable_graph_rewrite_keeps_blocks_valid():
    """Should leave `pass` where a block would be empty, and keep the rest of a `;` line."""
    check(
        f"""\
        import tensorflow as tf
        def f():
            {_DISABLE}()
        if a: {_DISABLE}()
        x = 1; {_DISABLE}()
        def g():
            y = 2
            {_DISABLE}()
            # end of g
        """,
        """\
        import tensorflow as tf
        def f():
            pass
        if a: pass
        x = 1
        def g():
            y = 2
            # end of g
        """,
        codes=[w.DISABLE_REMOVED_NOTE] * 4,
    )


def test_disable_graph_rewrite_from_import_is_removed():
    check(
        """\
        import os
        # graph rewrite off
        from tensorflow.compat.v1.mixed_precision import disable_mixed_precision_graph_rewrite
        disable_mixed_precision_graph_rewrite()
        print(os.sep)
        """,
        """\
        import os
        # graph rewrite off
        print(os.sep)
        """,
        codes=[w.DISABLE_REMOVED_NOTE],
    )


@pytest.mark.parametrize(
    "use",
    [f"z = {_DISABLE}()", f"print({_DISABLE}())", f"f = {_DISABLE}", f"callbacks.append({_DISABLE})"],
)
def test_disable_graph_rewrite_used_as_a_value_calls_lossscale_compats(use):
    """TF2's name is gone; lossscale_compat's function does what TF 2.4's did and returns None as it did."""
    check(
        f"import tensorflow as tf\n{use}\n",
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        + use.replace(_DISABLE, "lossscale_compat.disable_mixed_precision_graph_rewrite")
        + "\n",
        codes=[w.VALUE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "use, code",
    [
        (f"{_DISABLE}(opt)", w.BAD_ARGUMENTS),  # not the TF 2.4 signature; `opt` might have effects
        # TF1's name still exists today, so its value use is left, warned
        ("z = tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()", w.DISABLE_VALUE_USED),
    ],
)
def test_disable_graph_rewrite_other_uses_warn(use, code):
    source = f"import tensorflow as tf\n{use}\n"
    check(source, source, codes=[code])


def test_disable_graph_rewrite_value_used_moves_its_from_import():
    check(
        """\
        from tensorflow.train.experimental import disable_mixed_precision_graph_rewrite
        done = disable_mixed_precision_graph_rewrite()
        """,
        """\
        from lossscale_compat import disable_mixed_precision_graph_rewrite
        done = disable_mixed_precision_graph_rewrite()
        """,
        codes=[w.VALUE_FALLBACK_NOTE],
    )


# ---------------------------------------------------------------- gap C: the graph rewrite of a TF1 optimizer
@BOTH
def test_graph_rewrite_of_a_tf1_optimizer_built_in_scope_stays_on_compat_v1(target):
    check(
        """\
        import tensorflow as tf

        def build_train_op(loss, learning_rate, amp):
            opt = tf.compat.v1.train.MomentumOptimizer(learning_rate, momentum=0.9)
            if amp:
                opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic")
            return opt.minimize(loss)
        """,
        """\
        import tensorflow as tf

        def build_train_op(loss, learning_rate, amp):
            opt = tf.compat.v1.train.MomentumOptimizer(learning_rate, momentum=0.9)
            if amp:
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic")
            return opt.minimize(loss)
        """,
        target,
        codes=[w.TF1_KEPT_NOTE],
    )


@BOTH
def test_graph_rewrite_of_a_module_class_subclassing_the_tf1_optimizer_stays_on_compat_v1(target):
    check(
        """\
        import tensorflow.compat.v1 as tf1
        import tensorflow as tf

        class ClippedAdam(tf1.train.Optimizer):
            pass

        class SlowClippedAdam(ClippedAdam):
            pass

        def eval_graph():
            return tf.train.experimental.enable_mixed_precision_graph_rewrite(SlowClippedAdam(0.0))
        """,
        """\
        import tensorflow.compat.v1 as tf1
        import tensorflow as tf

        class ClippedAdam(tf1.train.Optimizer):
            pass

        class SlowClippedAdam(ClippedAdam):
            pass

        def eval_graph():
            return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(SlowClippedAdam(0.0))
        """,
        target,
        codes=[w.TF1_KEPT_NOTE],
    )


def test_graph_rewrite_already_on_compat_v1_with_a_tf1_optimizer_is_left_silently():
    source = """\
        import tensorflow.compat.v1 as tf
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.train.AdamOptimizer(0.1))
        """
    check(source, source, codes=[])


@pytest.mark.parametrize(
    "optimizer",
    [
        "opt",  # a parameter
        "self.optimizer",  # an attribute
        "hvd.DistributedOptimizer(opt)",  # Horovod's wrapper of an optimizer of unknown kind
        "tricks.Lookahead(tf.compat.v1.train.AdamOptimizer(0.1))",  # a wrapper of unknown kind
        "optimization.LAMBOptimizer(0.0)",  # a class from another module
    ],
)
@BOTH
def test_graph_rewrite_of_an_optimizer_of_unknown_kind_goes_to_the_run_time_fallback(optimizer, target):
    """TF 2.4 chose by the optimizer's kind when called; lossscale_compat's fallback does the same (LSC134)."""
    source = f"""\
        import horovod.tensorflow as hvd
        import optimization
        import tensorflow as tf
        import tricks

        def wrap(self, opt):
            return tf.train.experimental.enable_mixed_precision_graph_rewrite({optimizer})
        """
    after = f"""\
        import horovod.tensorflow as hvd
        import optimization
        import tensorflow as tf
        import tricks
        import lossscale_compat

        def wrap(self, opt):
            return lossscale_compat.enable_mixed_precision_graph_rewrite({optimizer})
        """
    check(source, after, target, codes=[w.GRAPH_REWRITE_FALLBACK_NOTE])


@pytest.mark.parametrize("scale", ["'dynamic'", "128", "loss_scale=1024.0"])
def test_graph_rewrite_fallback_keeps_a_literal_loss_scale(scale):
    check(
        f"import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(o, {scale})\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\nopt = lossscale_compat.enable_mixed_precision_graph_rewrite(o, {scale})\n",
        codes=[w.GRAPH_REWRITE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "scale, new_scale, codes",
    [
        # a value known only at run time: the fallback takes any loss scale for either kind of optimizer
        ("FLAGS.loss_scale", "FLAGS.loss_scale", [w.GRAPH_REWRITE_FALLBACK_NOTE]),
        # a loss-scale object built for it keeps TensorFlow's class, which both kinds of optimizer take
        (
            "tf.mixed_precision.experimental.DynamicLossScale()",
            "tf.compat.v1.mixed_precision.DynamicLossScale()",
            [w.GRAPH_REWRITE_FALLBACK_NOTE, w.TF1_KEPT_NOTE],
        ),
    ],
)
def test_graph_rewrite_of_unknown_kind_with_a_loss_scale_object_or_run_time_value_goes_to_the_fallback(
    scale, new_scale, codes
):
    check(
        f"import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(o, {scale})\n",
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        f"opt = lossscale_compat.enable_mixed_precision_graph_rewrite(o, {new_scale})\n",
        codes=codes,
    )


def test_graph_rewrite_of_a_name_rebound_to_an_unknown_wrapper_goes_to_the_run_time_fallback():
    check(
        """\
        import tensorflow as tf
        import tricks

        def wrap(lr):
            opt = tf.compat.v1.train.AdamOptimizer(lr)
            opt = tricks.Lookahead(opt)
            return tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        """,
        """\
        import tensorflow as tf
        import tricks
        import lossscale_compat

        def wrap(lr):
            opt = tf.compat.v1.train.AdamOptimizer(lr)
            opt = tricks.Lookahead(opt)
            return lossscale_compat.enable_mixed_precision_graph_rewrite(opt)
        """,
        codes=[w.GRAPH_REWRITE_FALLBACK_NOTE],
    )


def test_graph_rewrite_through_horovods_wrapper_of_a_tf1_optimizer_stays_on_compat_v1():
    check(
        """\
        import horovod.tensorflow as hvd
        import tensorflow as tf

        def model_fn(params, loss):
            if params.optimizer == "rmsprop":
                optimizer = tf.train.RMSPropOptimizer(learning_rate=params.lr, centered=True)
            else:
                optimizer = tf.compat.v1.train.MomentumOptimizer(params.lr, 0.9)
            optimizer = hvd.DistributedOptimizer(optimizer)
            if params.amp:
                optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, loss_scale="dynamic")
            return optimizer.minimize(loss)
        """,
        """\
        import horovod.tensorflow as hvd
        import tensorflow as tf

        def model_fn(params, loss):
            if params.optimizer == "rmsprop":
                optimizer = tf.train.RMSPropOptimizer(learning_rate=params.lr, centered=True)
            else:
                optimizer = tf.compat.v1.train.MomentumOptimizer(params.lr, 0.9)
            optimizer = hvd.DistributedOptimizer(optimizer)
            if params.amp:
                optimizer = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(optimizer, loss_scale="dynamic")
            return optimizer.minimize(loss)
        """,
        codes=[w.TF1_KEPT_NOTE],
    )


def test_graph_rewrite_through_horovods_wrapper_of_a_keras_optimizer_is_still_wrapped():
    new, codes = migrate("""\
        import horovod.tensorflow as hvd
        import tensorflow as tf
        opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1))
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        """)
    assert "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)" in new and codes == [w.GRAPH_REWRITE_NOTE]


def test_graph_rewrite_of_a_keras_optimizer_bound_in_scope_is_still_wrapped():
    check(
        """\
        import tensorflow as tf

        def make(lr):
            opt = tf.keras.optimizers.SGD(lr)
            opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
            return opt
        """,
        """\
        import tensorflow as tf

        def make(lr):
            opt = tf.keras.optimizers.SGD(lr)
            opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
            return opt
        """,
        codes=[w.GRAPH_REWRITE_NOTE],
    )


@BOTH
def test_graph_rewrite_imported_under_an_alias_keeps_the_tf1_name(target):
    check(
        """\
        import tensorflow as tf
        from tensorflow.train.experimental import enable_mixed_precision_graph_rewrite as amp
        opt = amp(tf.compat.v1.train.AdamOptimizer(0.1))
        """,
        """\
        import tensorflow as tf
        from tensorflow.compat.v1.mixed_precision import enable_mixed_precision_graph_rewrite as amp
        opt = amp(tf.compat.v1.train.AdamOptimizer(0.1))
        """,
        target,
        codes=[w.TF1_KEPT_NOTE],
    )


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


@pytest.mark.parametrize(
    "scale", ["100", "FLAGS.loss_scale", "tf.mixed_precision.experimental.DynamicLossScale(8, 4, 3)"]
)
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
