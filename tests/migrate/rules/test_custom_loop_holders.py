"""rules/custom_loop (issue 42): a loop on an optimizer held elsewhere than by a plain name is traced
(`Facts.held_value`): `self.x` set once in a class and read in its other methods, a compiled model's `optimizer`,
and an optimizer a function of the module returns. The cases that stay untraced keep lossscale_compat's class."""

from __future__ import annotations

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate
from ..holder_loops import COMPILED, FACTORY, TRAINER

_TRAINER_KERAS3 = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model, hparams):
        self.model = model
        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(hparams.learning_rate))

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
            scaled_loss = self.optimizer.scale_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(scaled_gradients, self.model.trainable_variables))
        return loss
"""


def test_self_attribute_set_once_in_init_keras3():
    check(TRAINER, _TRAINER_KERAS3)


def test_self_attribute_set_once_in_init_tf_keras():
    after = TRAINER.replace(
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n", ""
    ).replace(
        "mixed_precision.LossScaleOptimizer(\n"
        '            tf.keras.optimizers.SGD(hparams.learning_rate), loss_scale="dynamic")',
        "tf.keras.mixed_precision.LossScaleOptimizer(\n            tf.keras.optimizers.SGD(hparams.learning_rate))",
    )
    check(TRAINER, after, target="tf_keras")


def test_self_attribute_set_in_a_build_method_through_a_local_name():
    before = TRAINER.replace(
        "        self.model = model\n"
        "        self.optimizer = mixed_precision.LossScaleOptimizer(\n"
        '            tf.keras.optimizers.SGD(hparams.learning_rate), loss_scale="dynamic")\n',
        "        self.model = model\n\n"
        "    def build(self, hparams):\n"
        "        optimizer = tf.keras.optimizers.SGD(hparams.learning_rate)\n"
        '        optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")\n'
        "        self.optimizer = optimizer\n",
    )
    after = _TRAINER_KERAS3.replace(
        "        self.model = model\n"
        "        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(\n"
        "            tf.keras.optimizers.SGD(hparams.learning_rate))\n",
        "        self.model = model\n\n"
        "    def build(self, hparams):\n"
        "        optimizer = tf.keras.optimizers.SGD(hparams.learning_rate)\n"
        "        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)\n"
        "        self.optimizer = optimizer\n",
    )
    check(before, after)


def _stays_on_shim(before: str) -> None:
    new, codes = migrate(before)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new
    assert ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


def test_self_attribute_set_again_to_a_plain_optimizer_is_traced_to_the_wrap():
    # After `reset`, TF 2.4's loop methods raise AttributeError: a loop call that runs, runs on the wrap.
    reset = "\n    def reset(self):\n        self.optimizer = tf.keras.optimizers.SGD(0.1)\n"
    check(TRAINER + reset, _TRAINER_KERAS3 + reset)


def test_self_attribute_set_again_to_another_wrap_is_not_followed():
    _stays_on_shim(
        TRAINER
        + "\n    def reset(self):\n"
        + "        self.optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 'dynamic')\n"
    )


def test_self_attribute_set_on_an_instance_outside_the_class_is_not_followed():
    _stays_on_shim(TRAINER + "\n\ntrainer = Trainer(None, None)\ntrainer.optimizer = make_optimizer()\n")


def test_optimizer_attribute_of_a_class_with_a_base_is_not_followed():
    # A Keras `Model` subclass's `compile` sets `self.optimizer` too.
    _stays_on_shim(TRAINER.replace("class Trainer:", "class Trainer(tf.keras.Model):"))


def test_self_attribute_read_in_another_class_is_not_followed():
    _stays_on_shim(
        TRAINER.replace("self.optimizer.", "self.trainer.optimizer.").replace(
            "class Trainer:", "class Other:\n    pass\n\n\nclass Trainer:"
        )
    )


_COMPILED_KERAS3 = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
model.compile(optimizer=optimizer, loss="mse")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = model.optimizer.scale_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    model.optimizer.apply_gradients(zip(scaled_gradients, model.trainable_variables))
    return loss
"""


def test_compiled_models_optimizer_keras3():
    check(COMPILED, _COMPILED_KERAS3)


def test_compiled_models_optimizer_given_positionally_and_inline():
    before = COMPILED.replace(
        "optimizer = mixed_precision.experimental.LossScaleOptimizer("
        'tf.keras.optimizers.SGD(0.1), loss_scale="dynamic")\n'
        'model.compile(optimizer=optimizer, loss="mse")\n',
        "model.compile(\n"
        '    mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale="dynamic"),\n'
        '    loss="mse")\n',
    )
    after = _COMPILED_KERAS3.replace(
        "optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))\n"
        'model.compile(optimizer=optimizer, loss="mse")\n',
        'model.compile(\n    mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1)),\n    loss="mse")\n',
    )
    check(before, after)


def test_model_compiled_twice_is_not_followed():
    _stays_on_shim(COMPILED + 'model.compile(optimizer="sgd", loss="mse")\n')


def test_model_passed_on_is_not_followed():
    # What a callee does with the model (compile it again, set its optimizer) is out of sight.
    _stays_on_shim(COMPILED + "fit_more(model)\n")


def test_models_optimizer_bound_is_not_followed():
    _stays_on_shim(COMPILED + "model.optimizer = tf.keras.optimizers.SGD(0.1)\n")


# The loop's Keras 3 form: `scale_loss`, and `apply_gradients` given the scaled gradients (it unscales them).
_FACTORY_KERAS3 = (
    FACTORY.replace("from tensorflow.keras.mixed_precision import experimental as mixed_precision\n", "")
    .replace(
        'mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")',
        "tf.keras.mixed_precision.LossScaleOptimizer(optimizer)",
    )
    .replace("optimizer.get_scaled_loss(loss)", "optimizer.scale_loss(loss)")
    .replace("        gradients = optimizer.get_unscaled_gradients(scaled_gradients)\n", "")
    .replace("zip(gradients, model", "zip(scaled_gradients, model")
)


def test_optimizer_returned_by_a_function_of_the_module_keras3():
    check(FACTORY, _FACTORY_KERAS3)


def test_factory_with_two_returns_is_not_followed():
    _stays_on_shim(
        FACTORY.replace(
            "    optimizer = tf.keras.optimizers.SGD(learning_rate)\n",
            "    optimizer = tf.keras.optimizers.SGD(learning_rate)\n"
            "    if not learning_rate:\n"
            "        return optimizer\n",
        )
    )


def test_factory_rebound_is_not_followed():
    _stays_on_shim(FACTORY + "\n\nget_optimizer = tf.keras.optimizers.get\n")
