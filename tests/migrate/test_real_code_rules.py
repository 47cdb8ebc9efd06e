"""Rules for the run-time breaks the trial on real TF 2.4-era code found (issue 9): gaps C, D, H, A, G and B."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w
from .helpers import check, migrate

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


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


# ---------------------------------------------------------------- gap H: an LSO that leaves the module (Keras 3)
def test_loss_scale_optimizer_stored_on_another_object_uses_the_keras_shim():
    check(
        """\
        import tensorflow as tf

        def attach(model, fp16):
            model.optimizer = tf.keras.optimizers.Adam(1e-3)
            if fp16:
                model.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(model.optimizer, "dynamic")
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        def attach(model, fp16):
            model.optimizer = tf.keras.optimizers.Adam(1e-3)
            if fp16:
                model.optimizer = lossscale_compat.KerasLossScaleOptimizer(model.optimizer)
        """,
        codes=[w.ESCAPING_SHIM_NOTE],
    )


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
            "    return lossscale_compat.KerasLossScaleOptimizer(opt)\n",
        ),
        (
            "    wrapped = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
            "    return hvd.DistributedOptimizer(wrapped)\n",
            "    wrapped = lossscale_compat.KerasLossScaleOptimizer(opt)\n"
            "    return hvd.DistributedOptimizer(wrapped)\n",
        ),
        (
            "    registry.add(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n",
            "    registry.add(lossscale_compat.KerasLossScaleOptimizer(opt))\n",
        ),
    ],
)
def test_loss_scale_optimizer_returned_or_passed_on_uses_the_keras_shim(body, expected):
    head = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n\ndef build(opt, registry):\n"
    new, codes = migrate(head + body)
    assert new == head.replace("hvd\n", "hvd\nimport lossscale_compat\n") + expected
    assert codes[-1:] == [w.ESCAPING_SHIM_NOTE]


@pytest.mark.parametrize(
    "body",
    [
        "    model.compile(optimizer=tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n",
        "    self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "    o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n    model.fit(x, optimizer=o)\n",
        "    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
        "    model.compile(optimizer=opt)\n",
    ],
)
def test_loss_scale_optimizer_kept_in_sight_uses_keras_3s_class(body):
    new, codes = migrate("import tensorflow as tf\n\ndef build(self, model, opt, x):\n" + body)
    assert "tf.keras.mixed_precision.LossScaleOptimizer(opt)" in new and "lossscale_compat" not in new
    assert codes == []


def test_escaping_loss_scale_optimizer_is_keras_3s_on_tf_keras():
    check(
        "import tensorflow as tf\ndef f(o):\n    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, 'dynamic')\n",
        "import tensorflow as tf\ndef f(o):\n    return tf.keras.mixed_precision.LossScaleOptimizer(o)\n",
        "tf_keras",
    )


# ---------------------------------------------------------------- gap A: a second run over migrated code is silent
_TRAINER = """\
    import tensorflow as tf

    class Trainer:
        def build(self, inner):
            self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic")

        def step(self, loss_fn, variables):
            with tf.GradientTape() as tape:
                scaled = self.opt.get_scaled_loss(loss_fn())
            grads = self.opt.get_unscaled_gradients(tape.gradient(scaled, variables))
            self.opt.apply_gradients(zip(grads, variables))
    """


def test_second_run_over_an_lsc120_file_finds_nothing():
    first, codes = migrate(_TRAINER)
    assert "lossscale_compat.KerasLossScaleOptimizer(inner)" in first and codes == [w.LOOP_SHIM_NOTE]
    second, codes = migrate(first)
    assert second == first
    assert codes == []


def test_loop_calls_on_lossscale_compats_optimizer_are_not_warned():
    source = """\
        import lossscale_compat

        def step(tape, inner, loss, variables):
            opt = lossscale_compat.LossScaleOptimizer(inner, "dynamic")
            grads = opt.get_unscaled_gradients(tape.gradient(opt.get_scaled_loss(loss), variables))
            opt.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[])


def test_loop_calls_without_any_shim_in_the_file_are_rewritten_for_keras3():
    check(
        """\
        def step(opt, tape, loss, variables):
            scaled = opt.get_scaled_loss(loss)
            opt.apply_gradients(zip(opt.get_unscaled_gradients(tape.gradient(scaled, variables)), variables))
        """,
        """\
        def step(opt, tape, loss, variables):
            scaled = opt.scale_loss(loss)
            opt.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        """,
        codes=[w.UNTRACED_LOOP_NOTE, w.UNTRACED_LOOP_NOTE],
    )


def test_second_runs_of_the_tf1_and_escape_rewrites_find_nothing():
    source = """\
        import tensorflow as tf

        def train_op(loss, model):
            opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
            opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, tf.train.experimental.FixedLossScale(128))
            model.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
            return opt.minimize(loss)
        """
    first, codes = migrate(source)
    assert codes == [w.TF1_KEPT_NOTE, w.TF1_KEPT_NOTE, w.ESCAPING_SHIM_NOTE]
    assert migrate(first) == (first, [])


# ---------------------------------------------------------------- gap G: `.loss_scale` read on Keras 3
def test_loss_scale_read_on_an_unproven_optimizer_is_warned_on_keras3():
    source = """\
        import logging
        import tensorflow as tf

        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

        def log_step(step, optimizer):
            logging.info("step %d loss scale %g", step, optimizer.loss_scale)
        """
    new, codes = migrate(source)
    assert "optimizer.loss_scale)" in new and codes == [w.SCALE_READ_NOT_PROVEN]
    _, codes = migrate(source, "tf_keras")
    assert codes == []  # tf_keras's LossScaleOptimizer still has `loss_scale`


def test_loss_scale_read_on_keras_3s_optimizer_built_here_is_renamed():
    check(
        """\
        import tensorflow as tf

        def build(model, inner):
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic")
            model.compile(optimizer=opt)
            print(opt.loss_scale)
        """,
        """\
        import tensorflow as tf

        def build(model, inner):
            opt = tf.keras.mixed_precision.LossScaleOptimizer(inner)
            model.compile(optimizer=opt)
            print(opt.dynamic_scale)
        """,
        codes=[w.SCALE_READ_NOTE],
    )


@pytest.mark.parametrize("target, read", [("keras3", "dynamic_scale"), ("tf_keras", "loss_scale")])
def test_loss_scale_read_of_any_name_bound_to_a_wrap_moved_to_keras_3s_class_is_renamed(target, read):
    """Not only receivers named like an optimizer: a name bound once to the wrap is known to be Keras 3's class; a
    policy's `loss_scale` beside it is the policy rule's (lossscale_compat's Policy keeps it)."""
    new, codes = migrate(
        """\
        import tensorflow as tf
        wrapped = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
        print(float(wrapped.loss_scale))
        policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)
        print(policy.loss_scale)
        """,
        target,
    )
    assert f"print(float(wrapped.{read}))" in new and "print(policy.loss_scale)" in new
    assert (w.SCALE_READ_NOTE in codes) == (target == "keras3")


def test_loss_scale_read_of_a_name_bound_to_a_fixed_factor_is_not_renamed():
    """Keras 3's fixed scale is the inner optimizer's `loss_scale_factor`: no `dynamic_scale` there."""
    new, _ = migrate(
        """\
        import tensorflow as tf
        wrapped = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)
        model.compile(optimizer=wrapped)
        print(wrapped.loss_scale)
        """
    )
    assert "dynamic_scale" not in new


def test_loss_scale_read_in_a_file_with_only_a_tf24_loop_is_warned_on_keras3():
    source = """\
        def step(optimizer, loss):
            print(optimizer.loss_scale)
            return optimizer.get_scaled_loss(loss)
        """
    check(source, source, codes=[w.SCALE_READ_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])


def test_loss_scale_read_in_a_file_without_the_tf24_api_is_left_silently():
    source = "def log(opt):\n    return opt.loss_scale\n"
    check(source, source, codes=[])


# ---------------------------------------------------------------- gap B: untraced receivers whose gradients flow on
@pytest.mark.parametrize(
    "use, code",
    [
        ("grads, _ = tf.clip_by_global_norm(grads, 1.0)", w.GRADIENTS_CLIPPED),
        ("tf.summary.scalar('grad_norm', tf.linalg.global_norm(grads))", w.GRADIENTS_NORM_TAKEN),
        ("self.accumulated = [a + g for a, g in zip(self.accumulated, grads)]", w.GRADIENTS_ACCUMULATED),
        ("tf.print(grads)", w.GRADIENTS_LOGGED),
    ],
)
def test_unscaled_gradients_of_an_untraced_optimizer_get_the_flow_code(use, code):
    source = f"""\
        import tensorflow as tf

        class Step:
            def __call__(self, tape, loss, variables):
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(loss, variables))
                {use}
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[code])


def test_unscaled_gradients_of_an_untraced_optimizer_only_applied_keep_lsc113():
    source = """\
        def step(opt, tape, loss, variables):
            grads = opt.get_unscaled_gradients(tape.gradient(loss, variables))
            opt.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN])


# ---------------------------------------------------------------- gap F: Policy(<run-time name>, loss_scale=None)
@BOTH
def test_policy_of_a_run_time_name_without_loss_scale_goes_to_the_run_time_fallback(target):
    """`loss_scale=None` under a name known only at run time: no loss scaling at `compile` if it is mixed_float16,
    which only TF 2.4's Policy keeps (LSC135); the call without a loss scale is the modern policy."""
    policy = "DTypePolicy" if target == "keras3" else "Policy"
    check(
        """\
        import tensorflow as tf

        def set_precision(policy_name, loss_scale):
            if loss_scale:
                policy = tf.keras.mixed_precision.experimental.Policy(policy_name)
            else:
                policy = tf.keras.mixed_precision.experimental.Policy(policy_name, loss_scale=None)
            tf.keras.mixed_precision.experimental.set_policy(policy)
        """,
        f"""\
        import tensorflow as tf
        import lossscale_compat

        def set_precision(policy_name, loss_scale):
            if loss_scale:
                policy = tf.keras.mixed_precision.{policy}(policy_name)
            else:
                policy = lossscale_compat.Policy(policy_name, loss_scale=None)
            tf.keras.mixed_precision.set_global_policy(policy)
        """,
        target,
        codes=[w.POLICY_FALLBACK_NOTE],
    )


@pytest.mark.parametrize("scale", ["FLAGS.loss_scale", "128", "'dynamic'"])
def test_policy_of_a_run_time_name_with_another_loss_scale_goes_to_the_run_time_fallback(scale):
    check(
        f"import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy(name, loss_scale={scale})\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\np = lossscale_compat.Policy(name, loss_scale={scale})\n",
        codes=[w.POLICY_FALLBACK_NOTE],
    )


# ---------------------------------------------------------------- gap E: the class kept as a value; private imports
@BOTH
def test_experimental_lso_class_assigned_to_a_name_names_the_shim(target):
    check(
        """\
        import tensorflow as tf

        def add_loss_scaling(optimizer, new_api):
            if new_api:
                wrapper, kwargs = tf.keras.mixed_precision.LossScaleOptimizer, {}
            else:
                wrapper = tf.keras.mixed_precision.experimental.LossScaleOptimizer
                kwargs = dict(loss_scale="dynamic")
            return optimizer if isinstance(optimizer, wrapper) else wrapper(optimizer, **kwargs)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        def add_loss_scaling(optimizer, new_api):
            if new_api:
                wrapper, kwargs = tf.keras.mixed_precision.LossScaleOptimizer, {}
            else:
                wrapper = lossscale_compat.LossScaleOptimizer
                kwargs = dict(loss_scale="dynamic")
            return optimizer if isinstance(optimizer, wrapper) else wrapper(optimizer, **kwargs)
        """,
        target,
        codes=[w.CLASS_SHIM_NOTE],
    )


@pytest.mark.parametrize(
    "statement",
    [
        "from tensorflow.python.keras.mixed_precision.experimental.autocast_variable import AutoCastVariable",
    ],
)
def test_import_from_tf24s_private_package_is_warned_even_under_a_guard(statement):
    source = f"""\
        import tensorflow as tf

        if tf.__version__.startswith("2.2."):
            {statement}
        """
    check(source, source, codes=[w.UNSUPPORTED_USE])


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


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize(
    "before, after",
    [
        (  # TF 2.4's own private modules
            "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizerV1",
            "from lossscale_compat import LossScaleOptimizer as LossScaleOptimizerV1",
        ),
        (
            "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer as LSO",
            "from lossscale_compat import KerasLossScaleOptimizer as LSO",
        ),
        (
            "from tensorflow.python.keras.mixed_precision.policy import PolicyV1",
            "from lossscale_compat import Policy as PolicyV1",
        ),
        (  # TF <= 2.3's experimental package
            "from tensorflow.python.keras.mixed_precision.experimental.loss_scale import get, serialize as ser",
            "from lossscale_compat import get, serialize as ser",
        ),
    ],
)
def test_private_import_of_a_name_lossscale_compat_provides_moves_to_it(before, after, target):
    body = "\n\nok = isinstance(o, tuple)\n"
    check(before + body, after + body, target, codes=[w.PRIVATE_IMPORT_NOTE])


@pytest.mark.parametrize(
    "statement",
    [
        # a name lossscale_compat lacks, with one it has: the statement stays whole
        "from tensorflow.python.keras.mixed_precision.experimental.loss_scale import get, LossScale",
        # the module itself, read for a name lossscale_compat lacks (test_private_modules.py: the moved ones)
        "from tensorflow.python.keras.mixed_precision.experimental import loss_scale\nbase = loss_scale.LossScale",
        # a policy's serialize is not the loss scale's
        "from tensorflow.python.keras.mixed_precision.experimental.policy import serialize",
    ],
)
def test_private_import_of_anything_else_in_the_experimental_package_stays_warned(statement):
    source = statement + "\n"
    check(source, source, codes=[w.UNSUPPORTED_USE])


def test_private_import_moved_to_lossscale_compat_runs():
    """The moved names exist, and TF 2.4's V1 class takes TF 2.4's arguments."""
    new, codes = migrate(
        "from tensorflow.python.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizerV1\n"
        "from tensorflow.python.keras.mixed_precision.loss_scale import get\n"
    )
    assert codes == [w.PRIVATE_IMPORT_NOTE] * 2
    tf = pytest.importorskip("tensorflow")
    namespace: dict = {}
    exec(compile(new, "t.py", "exec"), namespace)
    scale = namespace["get"](128)
    assert float(scale()) == 128.0
    opt = namespace["LossScaleOptimizerV1"](tf.keras.optimizers.SGD(0.1), scale)
    assert float(opt.loss_scale) == 128.0
