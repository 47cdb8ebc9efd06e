"""An optimizer whose `iterations` the file sets (`opt.iterations = global_step`), which TF 2.4's class took and
Keras 3's optimizers refuse (no setter): on Keras 3 it keeps lossscale_compat's class (LSC156); tf_keras's Keras 2
class takes it."""

from __future__ import annotations

import textwrap

import pytest
from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate

# A TF 2.4 custom loop handed the global step as its optimizer's `iterations`, as TF1-style trainers did.
LOOP = """\
    import tensorflow as tf
    from tensorflow.keras.mixed_precision import experimental as mixed_precision
    global_step = tf.Variable(0, dtype=tf.int64)
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale="dynamic")
    optimizer.iterations = global_step
    @tf.function
    def train_step(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled = tape.gradient(scaled_loss, model.trainable_variables)
        grads = optimizer.get_unscaled_gradients(scaled)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
LOOP_KERAS3 = """\
    import tensorflow as tf
    import lossscale_compat

    global_step = tf.Variable(0, dtype=tf.int64)
    optimizer = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    optimizer.iterations = global_step
    @tf.function
    def train_step(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled_loss = optimizer.scale_loss(loss)
        scaled = tape.gradient(scaled_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(scaled, model.trainable_variables))
    """
# tf_keras: Keras 2's class takes the variable, so the loop keeps TF 2.4's methods as elsewhere on that target.
LOOP_TF_KERAS = LOOP.replace(
    "    from tensorflow.keras.mixed_precision import experimental as mixed_precision\n", ""
).replace(
    'mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale="dynamic")',
    "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))",
)


def test_a_loop_optimizer_given_the_global_step_as_iterations_keeps_our_class_on_keras3_only():
    check(LOOP, LOOP_KERAS3, codes=[w.ITERATIONS_SET_SHIM_NOTE])
    check(LOOP, LOOP_TF_KERAS, "tf_keras")


def test_a_fit_only_optimizer_given_iterations_keeps_our_class():
    before = """\
        import tensorflow as tf
        step = tf.compat.v1.train.get_or_create_global_step()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.Adam(), 'dynamic')
        opt.iterations = step
        model.compile(optimizer=opt, loss='mse')
        """
    modern = """\
        import tensorflow as tf
        step = tf.compat.v1.train.get_or_create_global_step()
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())
        opt.iterations = step
        model.compile(optimizer=opt, loss='mse')
        """
    shim = modern.replace("import tensorflow as tf\n", "import tensorflow as tf\n        import lossscale_compat\n\n")
    check(
        before,
        shim.replace("tf.keras.mixed_precision.LossScaleOptimizer", "lossscale_compat.KerasLossScaleOptimizer"),
        codes=[w.ITERATIONS_SET_SHIM_NOTE],
    )
    check(before, modern, "tf_keras")


def test_only_the_optimizer_whose_iterations_is_set_moves_and_assign_keeps_keras3s_class():
    """`iterations.assign(x)` works on Keras 3's class; a store through a compiled model's `optimizer` is traced."""
    before = """\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mp

        class Trainer:
            def __init__(self, model, step):
                self.opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
                self.opt.iterations = step

        other = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        other.iterations.assign(10)
        model = tf.keras.Sequential()
        model.compile(optimizer=mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic'))
        model.optimizer.iterations = tf.Variable(0, dtype=tf.int64)
        """
    after = """\
        import tensorflow as tf
        import lossscale_compat

        class Trainer:
            def __init__(self, model, step):
                self.opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())
                self.opt.iterations = step

        other = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        other.iterations.assign(10)
        model = tf.keras.Sequential()
        model.compile(optimizer=lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD()))
        model.optimizer.iterations = tf.Variable(0, dtype=tf.int64)
        """
    # LSC142 on the read: Keras 3's class does not count skipped steps in `iterations`.
    codes = [w.ITERATIONS_SET_SHIM_NOTE, w.ITERATIONS_READ_NOTE, w.ITERATIONS_SET_SHIM_NOTE]
    check(before, after, codes=codes)


def test_a_wrap_in_one_branch_whose_name_gets_iterations_keeps_our_class():
    """The store's receiver may hold the wrap (`Facts.possible_values`): TF 2.4 took the variable either way."""
    before = """\
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD()
        if use_amp:
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        opt.iterations = global_step
        """
    after = """\
        import tensorflow as tf
        import lossscale_compat

        opt = tf.keras.optimizers.SGD()
        if use_amp:
            opt = lossscale_compat.KerasLossScaleOptimizer(opt)
        opt.iterations = global_step
        """
    check(before, after, codes=[w.ITERATIONS_SET_SHIM_NOTE])


def test_the_migrated_loop_takes_the_global_step_and_advances_it():
    """The migrated example imports, builds and steps on this stack's target; the adopted variable counts the step."""
    tf = pytest.importorskip("tensorflow")
    from lossscale_compat import _flavour

    target = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"
    new, _ = migrate(LOOP, target)
    assert new == textwrap.dedent(LOOP_KERAS3 if target == "keras3" else LOOP_TF_KERAS)
    namespace: dict = {}
    exec(compile(new, "migrated.py", "exec"), namespace)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.build((None, 2))
    namespace["train_step"](model, tf.ones((4, 2)), tf.zeros((4, 1)))
    assert int(namespace["global_step"].numpy()) == 1


def test_a_fixed_scale_given_iterations_keeps_our_class_not_the_inner_optimizers_factor():
    """Keras 3's plain optimizers have no `iterations` setter either (`SGD(loss_scale_factor=...)` is no way out)."""
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 128)
        opt.iterations = step
        model.compile(optimizer=opt, loss="mse")
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic=False, initial_scale=128)
        opt.iterations = step
        model.compile(optimizer=opt, loss="mse")
        """,
        codes=[w.ITERATIONS_SET_SHIM_NOTE],
    )


def test_a_graph_rewrite_whose_optimizer_gets_iterations_keeps_our_class():
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD()
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        opt.iterations = step
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        opt = tf.keras.optimizers.SGD()
        opt = lossscale_compat.KerasLossScaleOptimizer(opt)
        opt.iterations = step
        """,
        codes=[w.GRAPH_REWRITE_NOTE, w.ITERATIONS_SET_SHIM_NOTE],
    )
