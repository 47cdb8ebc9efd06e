"""Keras 3 differences a migrated file reads (issue 25): `iterations` (LSC142), `get_gradients` (LSC143),
checkpointed loss-scale state (LSC144)."""

from __future__ import annotations

from pathlib import Path

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source

from ..helpers import check


GET_GRADIENTS_TRAINER = """\
    import tensorflow as tf

    class Trainer:
        def __init__(self, optimizer):
            self._optimizer = optimizer

        def gradients(self, loss, variables):
            if tf.executing_eagerly():
                scaled = self._optimizer.get_scaled_loss(loss)
                return self._optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
            return self._optimizer.get_gradients(loss, variables)

        def other(self, model, loss):
            return model.optimizer.get_gradients(loss, model.trainable_variables)
    """


def _findings(name: str, target: str = "keras3") -> list[tuple[str, str]]:
    """(code, the text of its line in the input) of each finding of the corpus file `name`, migrated for `target`."""
    path = CORPUS / name
    result = migrate_source(path.read_bytes(), target, str(path))
    lines = path.read_text().splitlines()  # `migrate_source` places findings in its input
    return [(finding.code, lines[finding.line - 1].strip()) for finding in result.findings]


CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_iterations_of_a_name_bound_to_keras3s_class_gets_a_note_at_the_read():
    """Keras 3's LossScaleOptimizer does not count skipped steps in `iterations`; TF 2.4's did."""
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')

        def steps_done():
            return int(opt.iterations.numpy())
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())

        def steps_done():
            return int(opt.iterations.numpy())
        """,
        codes=[w.ITERATIONS_READ_NOTE],
    )


def test_iterations_of_a_self_attribute_and_of_the_compiled_models_optimizer_get_a_note_each():
    before = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self, model, opt):
                self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
                self.model = model
                model.compile(optimizer=self.opt, loss='mse')

            def step(self, other):
                print(other.opt.iterations)
                return self.opt.iterations
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        model.compile(opt, loss='mse')
        tf.summary.experimental.set_step(model.optimizer.iterations)
        """
    after = before.replace(".experimental.LossScaleOptimizer", ".LossScaleOptimizer").replace(", 'dynamic')", ")")
    check(before, after, codes=[w.ITERATIONS_READ_NOTE, w.ITERATIONS_READ_NOTE])
    check(before, after, "tf_keras")  # Keras 2's class counts skipped steps as TF 2.4's did


def test_iterations_of_a_model_compiled_under_a_mixed_policy_gets_a_note():
    """Keras 3's compile wraps the optimizer in its own class under `mixed_float16`, as TF 2.4's did in TF 2.4's."""
    before = """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy('mixed_float16')
        model.compile(optimizer='adam', loss='mse')
        step = model.optimizer.iterations
        """
    after = before.replace("experimental.set_policy", "set_global_policy")
    check(before, after, codes=[w.ITERATIONS_READ_NOTE])
    check(before, after, "tf_keras")
    float32 = before.replace("mixed_float16", "float32")
    check(float32, after.replace("mixed_float16", "float32"))


def test_iterations_of_a_model_compiled_with_lossscale_compats_class_under_a_mixed_policy_gets_no_note():
    """compile does not wrap an optimizer that already is a loss-scale optimizer: ours counts skipped steps."""
    before = """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy('mixed_float16')
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        model.compile(optimizer=opt, loss='mse')
        other.compile(optimizer='adam', loss='mse')
        scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        tf.print(grads)
        opt.apply_gradients(zip(grads, variables))
        print(model.optimizer.iterations, other.optimizer.iterations)
        """
    after = """\
        import tensorflow as tf
        import lossscale_compat

        tf.keras.mixed_precision.set_global_policy('mixed_float16')
        opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())
        model.compile(optimizer=opt, loss='mse')
        other.compile(optimizer='adam', loss='mse')
        scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        tf.print(grads)
        opt.apply_gradients(zip(grads, variables))
        print(model.optimizer.iterations, other.optimizer.iterations)
        """
    # One note: `other`'s optimizer is wrapped by Keras 3's compile, `model`'s is already ours.
    check(before, after, codes=[w.LOOP_SHIM_NOTE, w.GRADIENTS_LOGGED, w.ITERATIONS_READ_NOTE])


def test_iterations_of_an_optimizer_kept_on_lossscale_compats_class_gets_no_note():
    """A loop left on TF 2.4's methods keeps the optimizer on our class, which counts skipped steps."""
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        tf.print(grads)
        opt.apply_gradients(zip(grads, variables))
        print(opt.iterations)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())
        scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        tf.print(grads)
        opt.apply_gradients(zip(grads, variables))
        print(opt.iterations)
        """,
        codes=[w.LOOP_SHIM_NOTE, w.GRADIENTS_LOGGED],
    )


def test_iterations_of_an_unrelated_optimizer_gets_no_note():
    source = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        other = tf.keras.optimizers.SGD()
        print(other.iterations)
        """
    check(
        source, source.replace(".experimental.LossScaleOptimizer", ".LossScaleOptimizer").replace(", 'dynamic')", ")")
    )


def test_get_gradients_on_an_untraced_loss_scale_optimizer_is_warned_at_the_call_on_keras3():
    """OpenNMT-tf's trainer: the receiver's loop shows it is a loss-scale optimizer; Keras 3's has no get_gradients."""
    check(
        GET_GRADIENTS_TRAINER,
        GET_GRADIENTS_TRAINER,
        codes=[w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN, w.GET_GRADIENTS_GONE],
    )
    # Keras 2's class for `tf.keras.optimizers` (LossScaleOptimizerV3) has no get_gradients either (LSC149).
    check(GET_GRADIENTS_TRAINER, GET_GRADIENTS_TRAINER, "tf_keras", codes=[w.TF24_CALL_NOT_PROVEN])


def test_get_gradients_beside_an_untraced_loop_rewritten_for_keras3_is_warned():
    before = """\
        import tensorflow as tf

        def step(opt, loss, variables):
            scaled = opt.get_scaled_loss(loss)
            grads = tape.gradient(scaled, variables)
            grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, variables))

        def graph_grads(opt, loss, variables):
            return opt.get_gradients(loss, variables)

        def same_function(opt, loss, variables):
            scaled = opt.get_scaled_loss(loss)
            grads = tape.gradient(scaled, variables)
            grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, variables))
            return opt.get_gradients(loss, variables)
        """
    new_loop = """\
            scaled = opt.scale_loss(loss)
            grads = tape.gradient(scaled, variables)
            opt.apply_gradients(zip(grads, variables))"""
    old_loop = """\
            scaled = opt.get_scaled_loss(loss)
            grads = tape.gradient(scaled, variables)
            grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, variables))"""
    after = before.replace(old_loop, new_loop)
    loop = [w.UNTRACED_LOOP_NOTE, w.UNTRACED_LOOP_NOTE]
    check(before, after, codes=[*loop, *loop, w.GET_GRADIENTS_GONE])  # `graph_grads`'s `opt` is another object


def test_tf24s_final_class_in_a_file_whose_loop_keeps_tf24s_methods_names_ours_on_keras3():
    """The same spelling names Keras 3's class today, which has none of the methods the loop calls (LSC145)."""
    before = (
        GET_GRADIENTS_TRAINER
        + """
    def make(optimizer):
        wrapper = tf.keras.mixed_precision.LossScaleOptimizer
        if not isinstance(optimizer, wrapper):
            optimizer = wrapper(optimizer)
        return Trainer(optimizer)
    """
    )
    after = before.replace(
        "= tf.keras.mixed_precision.LossScaleOptimizer", "= lossscale_compat.KerasLossScaleOptimizer"
    )
    after = after.replace("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n", 1)
    check(before, after, codes=[w.RECEIVER_NOT_PROVEN, w.RECEIVER_NOT_PROVEN, w.FINAL_CLASS_SHIM_NOTE])
    check(before, before, "tf_keras", codes=[w.TF24_CALL_NOT_PROVEN])  # Keras 2's class keeps all but get_gradients


def test_a_class_check_in_a_file_whose_loop_keeps_tf24s_methods_checks_the_targets_class():
    """TF 2.4's final class, and the experimental one (LSC136), in `isinstance` stay the target's class, which answers
    for every loss-scale optimizer as TF 2.4's final class did; a second run changes nothing (issue 42)."""
    before = """\
        import tensorflow as tf

        def step(optimizer, loss, tape, variables):
            if isinstance(optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
                loss = optimizer.get_scaled_loss(loss)
            if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                return optimizer.get_gradients(loss, variables)
        """
    after = before.replace(".experimental.LossScaleOptimizer", ".LossScaleOptimizer")
    check(before, after, codes=[w.CLASS_CHECK_NOTE, w.RECEIVER_NOT_PROVEN, w.GET_GRADIENTS_GONE])


def test_tf24s_final_class_in_a_file_whose_loop_is_rewritten_stays_keras3s():
    source = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())

        def step(loss, tape, variables):
            scaled = opt.get_scaled_loss(loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
            opt.apply_gradients(zip(grads, variables))
        """
    after = source.replace("opt.get_scaled_loss(loss)", "opt.scale_loss(loss)").replace(
        "opt.get_unscaled_gradients(tape.gradient(scaled, variables))", "tape.gradient(scaled, variables)"
    )
    check(source, after, codes=[w.UNTRACED_LOOP_NOTE, w.UNTRACED_LOOP_NOTE])


def test_the_opennmt_trainers_wrapper_class_becomes_ours_on_keras3_only():
    """Its feature probe picks TF 2.4's final class, whose `get_gradients` and loop methods Keras 3's class lacks."""
    found = _findings("real_opennmt_wrapper_class.py")
    assert (w.FINAL_CLASS_SHIM_NOTE, "wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer") in found
    assert w.GET_GRADIENTS_GONE not in {code for code, _ in found}
    tf_keras = {code for code, _ in _findings("real_opennmt_wrapper_class.py", "tf_keras")}
    assert w.GET_GRADIENTS_GONE not in tf_keras and w.FINAL_CLASS_SHIM_NOTE not in tf_keras


def test_a_wrap_a_checkpoint_tracks_by_name_keeps_tf24s_class_on_keras3():
    """Keras 3's class names its scale `dynamic_scale`/`step_counter`: TF 2.4's checkpoints would not restore it."""
    before = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
        """
    check(
        before,
        """\
        import tensorflow as tf
        import lossscale_compat

        opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())
        ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
        """,
        codes=[w.CHECKPOINT_SHIM_NOTE],
    )
    modern = before.replace(".experimental.LossScaleOptimizer", ".LossScaleOptimizer").replace(", 'dynamic')", ")")
    # tf_keras: TF 2.4's checkpoints keep slots as OptimizerV2 does, so the inner optimizer stays that class (LSC153).
    legacy = modern.replace("optimizers.SGD()", "optimizers.legacy.SGD()")
    check(before, legacy, "tf_keras", codes=[w.LEGACY_OPTIMIZER_NOTE])
    unrelated = before.replace("optimizer=opt)", "optimizer=other)")
    check(unrelated, modern.replace("optimizer=opt)", "optimizer=other)"))


def test_the_tensorflowtts_setters_wraps_reach_the_checkpoint_through_getters_and_keep_tf24s_class():
    found = _findings("real_tensorflowtts_checkpoint_setter.py")
    assert [code for code, _ in found] == [w.CHECKPOINT_SHIM_NOTE, w.CHECKPOINT_SHIM_NOTE]
    path = CORPUS / "real_tensorflowtts_checkpoint_setter.py"
    new = migrate_source(path.read_bytes(), "keras3", str(path)).new.decode()
    assert new.count("= lossscale_compat.KerasLossScaleOptimizer(") == 2
    assert "keras.mixed_precision.LossScaleOptimizer" not in new


def test_a_self_attribute_checkpointed_directly_keeps_tf24s_class_and_another_class_does_not():
    before = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self, opt):
                self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
                self.ckpt = tf.train.Checkpoint(optimizer=self.opt)

        class Other:
            def __init__(self, opt):
                self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        """
    after = """\
        import tensorflow as tf
        import lossscale_compat

        class Trainer:
            def __init__(self, opt):
                self.opt = lossscale_compat.KerasLossScaleOptimizer(opt)
                self.ckpt = tf.train.Checkpoint(optimizer=self.opt)

        class Other:
            def __init__(self, opt):
                self.opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """
    check(before, after, codes=[w.CHECKPOINT_SHIM_NOTE])
