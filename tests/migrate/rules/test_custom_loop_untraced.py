"""rules/custom_loop, untraced receivers: custom loops on an optimizer the codemod cannot trace (issue 9), rewritten
for Keras 3 as a whole, or warned."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


NOTE = w.UNTRACED_LOOP_NOTE

_UNSCALED_ONWARDS = """\
    import tensorflow as tf

    def train_step(optimizer, tape, loss, variables):
        with tape:
            scaled_loss = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled_loss, variables)
        grads = optimizer.get_unscaled_gradients(grads)
        {use}
        optimizer.apply_gradients(zip(grads, variables))
    """


def test_self_optimizer_in_two_methods_of_one_class_is_rewritten():
    check(
        """\
        import tensorflow as tf

        class Trainer:
            def compute_loss(self, x, y):
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
                return loss, self.optimizer.get_scaled_loss(loss)

            @tf.function
            def train_step(self, x, y):
                with tf.GradientTape() as tape:
                    loss, scaled = self.compute_loss(x, y)
                grads = tape.gradient(scaled, self.model.trainable_variables)
                grads = self.optimizer.get_unscaled_gradients(grads)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                return loss
        """,
        """\
        import tensorflow as tf

        class Trainer:
            def compute_loss(self, x, y):
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
                return loss, self.optimizer.scale_loss(loss)

            @tf.function
            def train_step(self, x, y):
                with tf.GradientTape() as tape:
                    loss, scaled = self.compute_loss(x, y)
                grads = tape.gradient(scaled, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                return loss
        """,
        codes=[NOTE, NOTE],
    )


def test_parameter_receiver_takes_the_scaled_gradients_name():
    check(
        """\
        def train_step(opt, tape, loss, variables):
            with tape:
                scaled_loss = opt.get_scaled_loss(loss)
            scaled_grads = tape.gradient(scaled_loss, variables)
            grads = opt.get_unscaled_gradients(scaled_grads)
            opt.apply_gradients(zip(grads, variables))
            return loss
        """,
        """\
        def train_step(opt, tape, loss, variables):
            with tape:
                scaled_loss = opt.scale_loss(loss)
            scaled_grads = tape.gradient(scaled_loss, variables)
            opt.apply_gradients(zip(scaled_grads, variables))
            return loss
        """,
        codes=[NOTE, NOTE],
    )


def test_model_optimizer_with_a_branch_per_precision_keeps_the_branch():
    """`gradients` is bound in both branches: the call becomes its argument, the `else` stays as it is."""
    check(
        """\
        def train_step(model, x, y, mixed):
            with tf.GradientTape() as tape:
                loss = model.compiled_loss(y, model(x, training=True))
                if mixed:
                    scaled_loss = model.optimizer.get_scaled_loss(loss)
            if mixed:
                scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
                gradients = model.optimizer.get_unscaled_gradients(scaled_gradients)
            else:
                gradients = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        """,
        """\
        def train_step(model, x, y, mixed):
            with tf.GradientTape() as tape:
                loss = model.compiled_loss(y, model(x, training=True))
                if mixed:
                    scaled_loss = model.optimizer.scale_loss(loss)
            if mixed:
                scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
                gradients = scaled_gradients
            else:
                gradients = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        """,
        codes=[NOTE, NOTE],
    )


def test_closure_over_a_conditionally_rebound_name_drops_the_guard_of_the_unscaling():
    check(
        """\
        import tensorflow as tf

        def train(model, data, lr, use_amp):
            optimizer = tf.keras.optimizers.Adam(learning_rate=lr)
            if use_amp:
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer, dynamic=True)

            @tf.function
            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                    if use_amp:
                        loss = optimizer.get_scaled_loss(loss)
                grads = tape.gradient(loss, model.trainable_variables)
                if use_amp:
                    grads = optimizer.get_unscaled_gradients(grads)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in data:
                step(x, y)
        """,
        """\
        import tensorflow as tf

        def train(model, data, lr, use_amp):
            optimizer = tf.keras.optimizers.Adam(learning_rate=lr)
            if use_amp:
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer, dynamic=True)

            @tf.function
            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                    if use_amp:
                        loss = optimizer.scale_loss(loss)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in data:
                step(x, y)
        """,
        codes=[NOTE, NOTE],
    )


def test_unscaled_gradients_all_reduced_by_horovod_then_applied_are_rewritten():
    check(
        """\
        import horovod.tensorflow as hvd

        def train_step(model, optimizer, tape, loss):
            with tape:
                scaled_loss = optimizer.get_scaled_loss(loss)
            grads = tape.gradient(scaled_loss, model.trainable_variables)
            grads = optimizer.get_unscaled_gradients(grads)
            reduced = [hvd.allreduce(g, op=hvd.Average) for g in grads]
            optimizer.apply_gradients(zip(reduced, model.trainable_variables))
        """,
        """\
        import horovod.tensorflow as hvd

        def train_step(model, optimizer, tape, loss):
            with tape:
                scaled_loss = optimizer.scale_loss(loss)
            grads = tape.gradient(scaled_loss, model.trainable_variables)
            reduced = [hvd.allreduce(g, op=hvd.Average) for g in grads]
            optimizer.apply_gradients(zip(reduced, model.trainable_variables))
        """,
        codes=[NOTE, NOTE],
    )


def test_unscaled_gradients_all_reduced_in_a_replica_context_then_applied_are_rewritten():
    check(
        """\
        def replica_step(optimizer, tape, loss, variables):
            with tape:
                scaled_loss = optimizer.get_scaled_loss(loss)
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, variables))
            grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grads)
            optimizer.apply_gradients(zip(grads, variables))
        """,
        """\
        def replica_step(optimizer, tape, loss, variables):
            with tape:
                scaled_loss = optimizer.scale_loss(loss)
            grads = tape.gradient(scaled_loss, variables)
            grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grads)
            optimizer.apply_gradients(zip(grads, variables))
        """,
        codes=[NOTE, NOTE],
    )


@pytest.mark.parametrize(
    "use, code",
    [
        ("grads, _ = tf.clip_by_global_norm(grads, 1.0)", w.GRADIENTS_CLIPPED),
        ("tf.summary.scalar('grad_norm', tf.linalg.global_norm(grads))", w.GRADIENTS_NORM_TAKEN),
        ("return grads", w.UNSCALED_GRADIENTS_USED),
        ("grads = [hvd.allreduce(g, compression=hvd.Compression.fp16) for g in grads]", w.UNSCALED_GRADIENTS_USED),
        ("grads = [hvd.allreduce(g, op=hvd.Product) for g in grads]", w.UNSCALED_GRADIENTS_USED),
    ],
)
def test_unscaled_gradients_going_elsewhere_leave_the_whole_loop_with_the_flow_code(use, code):
    """The `get_scaled_loss` call of the same object keeps LSC113: `scale_loss` beside TF 2.4's unscaling fails."""
    source = _UNSCALED_ONWARDS.format(use=use)
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN, code])


def test_a_receiver_with_only_the_scaled_loss_call_keeps_lsc113():
    source = """\
        def compute_loss(optimizer, loss):
            return optimizer.get_scaled_loss(loss)

        def train_step(optimizer, tape, scaled_loss, variables):
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, variables))
            optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])


def test_two_classes_with_the_same_receiver_text_are_not_merged():
    source = """\
        class Scaler:
            def loss(self, loss):
                return self.optimizer.get_scaled_loss(loss)

        class Applier:
            def apply(self, tape, scaled_loss, variables):
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, variables))
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])


def test_two_receivers_in_one_function_are_rewritten_or_kept_each_as_a_whole():
    check(
        """\
        def gan_step(gen_opt, dis_opt, tape, gen_loss, dis_loss, gen_vars, dis_vars):
            with tape:
                scaled_gen = gen_opt.get_scaled_loss(gen_loss)
                scaled_dis = dis_opt.get_scaled_loss(dis_loss)
            gen_grads = gen_opt.get_unscaled_gradients(tape.gradient(scaled_gen, gen_vars))
            gen_opt.apply_gradients(zip(gen_grads, gen_vars))
            dis_grads = dis_opt.get_unscaled_gradients(tape.gradient(scaled_dis, dis_vars))
            print(dis_grads)
            dis_opt.apply_gradients(zip(dis_grads, dis_vars))
        """,
        """\
        def gan_step(gen_opt, dis_opt, tape, gen_loss, dis_loss, gen_vars, dis_vars):
            with tape:
                scaled_gen = gen_opt.scale_loss(gen_loss)
                scaled_dis = dis_opt.get_scaled_loss(dis_loss)
            gen_grads = tape.gradient(scaled_gen, gen_vars)
            gen_opt.apply_gradients(zip(gen_grads, gen_vars))
            dis_grads = dis_opt.get_unscaled_gradients(tape.gradient(scaled_dis, dis_vars))
            print(dis_grads)
            dis_opt.apply_gradients(zip(dis_grads, dis_vars))
        """,
        codes=[NOTE, w.RECEIVER_NOT_PROVEN, NOTE, w.GRADIENTS_LOGGED],
    )


def test_a_loop_call_with_a_keyword_argument_keeps_the_group_warned():
    """TF 2.4's own name for the argument (`loss=`) is taken (test_custom_loop_branch_wrap.py); another is not."""
    source = """\
        def train_step(opt, tape, loss, variables):
            scaled = opt.get_scaled_loss(value=loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
            opt.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])


def test_untraced_loop_in_a_file_on_lossscale_compats_optimizer_is_left_alone():
    """The file builds our class (TF 2.4's contract), so its loops stay as they are, silently."""
    source = """\
        import lossscale_compat

        class Trainer:
            def __init__(self, inner):
                self.optimizer = lossscale_compat.KerasLossScaleOptimizer(inner)

            def step(self, tape, loss, variables):
                with tape:
                    scaled = self.optimizer.get_scaled_loss(loss)
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[])


def test_tf_keras_target_leaves_untraced_loops_unchanged():
    source = """\
        class Trainer:
            def step(self, tape, loss, variables):
                with tape:
                    scaled = self.optimizer.get_scaled_loss(loss)
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, "tf_keras", codes=[])


def test_second_run_over_a_rewritten_untraced_loop_is_silent_and_unchanged():
    first, codes = migrate(
        """\
        class Trainer:
            def step(self, tape, loss, variables):
                with tape:
                    scaled = self.optimizer.get_scaled_loss(loss)
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    )
    assert codes == [NOTE, NOTE] and "scale_loss(loss)" in first
    assert migrate(first) == (first, [])


def test_gradients_clipped_inside_apply_gradients_are_not_taken_for_applied_ones():
    source = """\
        import tensorflow as tf

        def train_step(optimizer, tape, loss, variables):
            with tape:
                scaled_loss = optimizer.get_scaled_loss(loss)
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, variables))
            optimizer.apply_gradients(zip([tf.clip_by_norm(g, 1.0) for g in grads], variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN, w.GRADIENTS_CLIPPED])


@pytest.mark.parametrize(
    "unscale",
    [
        "grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))",
        "grads = opt.get_unscaled_gradients(grads)\n    grads = [hvd.allreduce(g) for g in grads]",
    ],
)
def test_a_traced_optimizer_keeps_the_narrow_rule_and_our_class(unscale):
    """Its construction would become Keras 3's class (no `iterations` setter, other strategy handling), so only
    the statement-dropping rewrite applies there; anything else keeps the file on our class (LSC120)."""
    loop = f"""\
def step(tape, loss, variables, grads=None):
    with tape:
        scaled = opt.get_scaled_loss(loss)
    grads = tape.gradient(scaled, variables)
    {unscale}
    opt.apply_gradients(zip(grads, variables))
"""
    before = "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
    after = "import tensorflow as tf\nimport lossscale_compat\n\nopt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"
    new, codes = migrate(before + loop)
    assert new == after + loop
    assert codes == [w.LOOP_SHIM_NOTE, w.UNSCALED_GRADIENTS_USED]


def test_a_keyword_only_parameter_receiver_is_grouped_by_its_function():
    check(
        """\
        class Trainer:
            def step(self, *, opt, tape, loss, variables):
                scaled = opt.get_scaled_loss(loss)
                opt.apply_gradients(zip(opt.get_unscaled_gradients(tape.gradient(scaled, variables)), variables))
        """,
        """\
        class Trainer:
            def step(self, *, opt, tape, loss, variables):
                scaled = opt.scale_loss(loss)
                opt.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        """,
        codes=[NOTE, NOTE],
    )


def test_an_isinstance_guard_of_the_unscaling_goes_with_it():
    check(
        """\
        import tensorflow as tf

        class Trainer:
            def train_step(self, tape, loss, variables):
                with tape:
                    if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                        loss = self.optimizer.get_scaled_loss(loss)
                grads = tape.gradient(loss, variables)
                if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                    grads = self.optimizer.get_unscaled_gradients(grads)
                self.optimizer.apply_gradients(zip(grads, variables))
        """,
        """\
        import tensorflow as tf

        class Trainer:
            def train_step(self, tape, loss, variables):
                with tape:
                    if isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                        loss = self.optimizer.scale_loss(loss)
                grads = tape.gradient(loss, variables)
                self.optimizer.apply_gradients(zip(grads, variables))
        """,
        codes=[NOTE, NOTE],
    )


def test_a_guard_that_is_more_than_a_flag_keeps_its_block_as_pass():
    check(
        """\
        def train_step(opt, tape, loss, variables, amp, step):
            with tape:
                scaled = opt.get_scaled_loss(loss) if amp else loss
            grads = tape.gradient(scaled, variables)
            if amp and step > 0:
                grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, variables))
        """,
        """\
        def train_step(opt, tape, loss, variables, amp, step):
            with tape:
                scaled = opt.scale_loss(loss) if amp else loss
            grads = tape.gradient(scaled, variables)
            if amp and step > 0:
                pass
            opt.apply_gradients(zip(grads, variables))
        """,
        codes=[NOTE, NOTE],
    )


@pytest.mark.parametrize(
    "module",
    ["keras.src.mixed_precision", "tf_keras.src.mixed_precision"],  # keras.mixed_precision: test_private_modules_kept
)
def test_a_loop_checked_for_keras_2s_own_class_is_left_warned(module):
    """Written for Keras 2's or tf_keras's class, which has no `scale_loss` and does not unscale in `apply_gradients`."""
    source = f"""\
        from {module} import loss_scale_optimizer

        def train_step(model, tape, loss, variables):
            with tape:
                if isinstance(model.optimizer, loss_scale_optimizer.LossScaleOptimizer):
                    loss = model.optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, variables)
            if isinstance(model.optimizer, loss_scale_optimizer.LossScaleOptimizer):
                grads = model.optimizer.get_unscaled_gradients(grads)
            model.optimizer.apply_gradients(zip(grads, variables))
        """
    # Keras 3 has no `loss_scale_optimizer` module of Keras 2's (recorded, codemods/target_names/): the verifier warns
    # the import (LSC150); tf_keras is not on the Keras 3 stack's record, so its import is not judged.
    left = [] if module.startswith("tf_keras") else [w.NAME_LEFT]
    check(source, source, codes=[*left, w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])
