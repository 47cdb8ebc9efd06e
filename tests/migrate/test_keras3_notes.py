"""Keras 3 differences a migrated file reads (issue 25): `iterations` of Keras 3's class (LSC142)."""

from __future__ import annotations

from lossscale_compat.codemods import _warnings as w

from .helpers import check


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
