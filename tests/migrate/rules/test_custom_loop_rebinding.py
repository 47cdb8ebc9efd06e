"""rules/custom_loop (issue 42): a loop on a name rebound to its wrap (`opt = LossScaleOptimizer(opt, ...)`) is traced,
as TensorFlow's own mixed-precision guide (TF 2.4) writes it; the cases that stay untraced say so; an untraced loop
moves only the optimizers it may receive to lossscale_compat's class."""

from __future__ import annotations

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate

# Modelled on the TF 2.4 mixed-precision guide's custom training loop (tensorflow/docs,
# site/en/guide/keras/mixed_precision.ipynb): the optimizer built, then rebound to its wrap at module level.
_GUIDE = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

optimizer = tf.keras.optimizers.RMSprop()
optimizer = mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_object(y, model(x))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
"""

_GUIDE_KERAS3 = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

optimizer = tf.keras.optimizers.RMSprop()
optimizer = mixed_precision.LossScaleOptimizer(optimizer)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_object(y, model(x))
        scaled_loss = optimizer.scale_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(scaled_gradients, model.trainable_variables))
    return loss
"""


def test_guide_loop_on_a_rebound_global_keras3():
    check(_GUIDE, _GUIDE_KERAS3)


def test_guide_loop_on_a_rebound_global_tf_keras():
    after = _GUIDE.replace(
        "mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')",
        "mixed_precision.LossScaleOptimizer(optimizer)",
    )
    check(_GUIDE, after, target="tf_keras")


def test_function_defined_before_the_wrap_and_not_called_before_it():
    before = _GUIDE.replace(
        "optimizer = tf.keras.optimizers.RMSprop()\n"
        "optimizer = mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')\n",
        "",
    ) + (
        "optimizer = tf.keras.optimizers.RMSprop()\n"
        "optimizer = mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')\n"
        "train_step(1, 2)\n"
    )
    after = _GUIDE_KERAS3.replace(
        "optimizer = tf.keras.optimizers.RMSprop()\noptimizer = mixed_precision.LossScaleOptimizer(optimizer)\n", ""
    ) + (
        "optimizer = tf.keras.optimizers.RMSprop()\n"
        "optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n"
        "train_step(1, 2)\n"
    )
    check(before, after)


def test_rebinding_in_a_function_read_by_a_nested_tf_function_and_in_its_body():
    """The Adam the name holds where the wrap reads it is noted (LSC118): Keras 3 does not count skipped steps."""
    check(_IN_MAIN, _IN_MAIN_KERAS3, codes=[w.ITERATIONS_NOTE, w.SCALE_READ_NOTE])


def test_parameter_rebound_to_its_wrap_read_by_a_returned_step():
    """Modelled on BigDL's step generator (tests/migrate/corpus/real_bigdl_step_generator.py)."""
    as_parameter = {"(model, data):\n            opt = tf.keras.optimizers.Adam(1e-3)\n": "(model, data, opt):\n"}
    check(*(_replaced(source, as_parameter) for source in (_IN_MAIN, _IN_MAIN_KERAS3)), codes=[w.SCALE_READ_NOTE])


def _replaced(source: str, pairs: dict[str, str]) -> str:
    for old, new in pairs.items():
        assert old in source
        source = source.replace(old, new)
    return source


_IN_MAIN = """\
        import tensorflow as tf

        def main(model, data):
            opt = tf.keras.optimizers.Adam(1e-3)
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")

            @tf.function
            def step(x):
                with tf.GradientTape() as tape:
                    scaled = opt.get_scaled_loss(model(x))
                grads = tape.gradient(scaled, model.trainable_variables)
                grads = opt.get_unscaled_gradients(grads)
                opt.apply_gradients(zip(grads, model.trainable_variables))

            for x in data:
                step(x)
            print(opt.loss_scale)
        """
_IN_MAIN_KERAS3 = """\
        import tensorflow as tf

        def main(model, data):
            opt = tf.keras.optimizers.Adam(1e-3)
            opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)

            @tf.function
            def step(x):
                with tf.GradientTape() as tape:
                    scaled = opt.scale_loss(model(x))
                grads = tape.gradient(scaled, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))

            for x in data:
                step(x)
            print(opt.scale_loss(1.0))
        """


def test_loop_function_called_before_the_last_binding_stays_on_the_shim():
    source = _GUIDE.replace("@tf.function\n", "") + (
        "train_step(1, 2)\n"
        "optimizer = mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')\n"
    )
    new, found = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer" in new
    assert w.LOOP_SHIM_NOTE in found


def test_rebinding_in_a_branch_is_traced_to_the_wrap():
    # Without the wrap, TF 2.4's loop methods raise AttributeError: a loop call that runs, runs on the wrap.
    wrap = "optimizer = mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale='dynamic')\n"
    source = _GUIDE.replace(wrap, "if use_fp16:\n    " + wrap)
    after = _GUIDE_KERAS3.replace(
        "optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n",
        "if use_fp16:\n    optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n",
    )
    check(source, after)


def test_rebinding_through_global_to_a_plain_optimizer_is_traced_to_the_wrap():
    reset = "\n\ndef reset():\n    global optimizer\n    optimizer = tf.keras.optimizers.SGD()\n"
    check(_GUIDE + reset, _GUIDE_KERAS3 + reset)


def test_rebinding_through_global_to_a_value_not_followed_stays_on_the_shim():
    source = _GUIDE + "\n\ndef reset(settings):\n    global optimizer\n    optimizer = settings.optimizer\n"
    new, found = migrate(source)
    assert "get_scaled_loss" in new
    assert w.LOOP_SHIM_NOTE in found


def test_loss_scale_read_of_a_call_respelled_as_lossscale_compats_class_is_silent():
    """The read is TF 2.4's API on lossscale_compat's class (`LSC119`), not an unproven object (`LSC130`)."""
    check(
        """\
        import tensorflow as tf

        inner = tf.keras.optimizers.SGD()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, 128)
        print(opt.loss_scale())
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        inner = tf.keras.optimizers.SGD()
        opt = lossscale_compat.LossScaleOptimizer(inner, 128)
        print(opt.loss_scale())
        """,
        codes=[w.OPTIMIZER_SHIM_NOTE],
    )


# Per optimizer, not per file: a loop whose receiver is a parameter moves only the optimizers it may receive.
_FIT_AND_LOOP = """\
import tensorflow as tf

mp = tf.keras.mixed_precision.experimental


def fit_classifier(x, y):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.Adam(), "dynamic")
    model.compile(optimizer=opt, loss="mse")
    model.fit(x, y)


def train_step(optimizer, model, x, y):
    with tf.GradientTape() as tape:
        scaled = optimizer.get_scaled_loss(tf.reduce_mean(tf.square(model(x) - y)))
    grads = tape.gradient(scaled, model.trainable_variables)
    grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


gan_opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
"""


def test_untraced_loop_moves_only_the_optimizers_it_may_receive():
    check(
        _FIT_AND_LOOP,
        _FIT_AND_LOOP.replace(
            "import tensorflow as tf\n\nmp = tf.keras.mixed_precision.experimental\n",
            "import tensorflow as tf\nimport lossscale_compat\n\n",
        )
        .replace(
            'mp.LossScaleOptimizer(tf.keras.optimizers.Adam(), "dynamic")',
            "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())",
        )
        .replace(
            'mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")',
            "lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())",
        ),
        codes=[w.ITERATIONS_NOTE, w.LOOP_SHIM_NOTE],
    )


def test_a_compiled_optimizer_a_loop_may_reach_moves_too():
    for reach in ("    return model\n", "    print(model.optimizer)\n"):
        new, found = migrate(_FIT_AND_LOOP.replace("    model.fit(x, y)\n", reach))
        assert new.count("lossscale_compat.KerasLossScaleOptimizer(") == 2, reach
        assert found.count(w.LOOP_SHIM_NOTE) == 2, reach
