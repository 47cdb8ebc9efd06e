"""rules/custom_loop (issue 42): a loop receiver that may hold only one wrap or optimizers no TF 2.4 API wrapped
(`self.opt = opt`, then `if mixed: self.opt = LossScaleOptimizer(self.opt)`) is traced to the wrap, since TF 2.4's
loop methods exist only on a loss-scale optimizer (a plain one raises AttributeError); so is a parameter that every
call of its function in the module passes such a value; a loop method may name its argument (`loss=`)."""

from __future__ import annotations

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate

# Modelled on TensorFlowTTS's GAN trainer (`set_gen_optimizer`: the optimizer stored, then wrapped in place when
# mixed precision is on; the step scales and unscales under the same flag); our own code.
_GAN = """\
import tensorflow as tf


class GanTrainer:
    def __init__(self, gen_mixed):
        self._gen_mixed = gen_mixed
        self._generator = None

    def set_gen_optimizer(self, optimizer):
        self._gen_optimizer = optimizer
        if self._gen_mixed:
            self._gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                self._gen_optimizer, "dynamic"
            )

    def train_step(self, batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.abs(self._generator(batch["x"]) - batch["y"]))
            if self._gen_mixed:
                loss = self._gen_optimizer.get_scaled_loss(loss)
        gradients = tape.gradient(loss, self._generator.trainable_variables)
        if self._gen_mixed:
            gradients = self._gen_optimizer.get_unscaled_gradients(gradients)
        self._gen_optimizer.apply_gradients(zip(gradients, self._generator.trainable_variables))
        return loss
"""

_GAN_KERAS3 = (
    _GAN.replace(
        'tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n                self._gen_optimizer, "dynamic"\n',
        "tf.keras.mixed_precision.LossScaleOptimizer(\n                self._gen_optimizer\n",
    )
    .replace("self._gen_optimizer.get_scaled_loss(loss)", "self._gen_optimizer.scale_loss(loss)")
    .replace(
        "        if self._gen_mixed:\n            gradients = self._gen_optimizer.get_unscaled_gradients(gradients)\n",
        "",
    )
)


def test_self_attribute_wrapped_in_a_branch_keras3():
    check(_GAN, _GAN_KERAS3)


def test_self_attribute_wrapped_in_a_branch_tf_keras():
    after = _GAN.replace(
        'tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n                self._gen_optimizer, "dynamic"\n',
        "tf.keras.mixed_precision.LossScaleOptimizer(\n                self._gen_optimizer\n",
    )
    check(_GAN, after, target="tf_keras")


def test_a_second_wrap_among_the_values_stays_on_the_shim():
    source = _GAN.replace(
        "        self._gen_optimizer = optimizer\n",
        '        self._gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")\n',
    )
    new, codes = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new and ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


def test_a_value_read_from_another_object_stays_on_the_shim():
    source = _GAN.replace(
        "        self._gen_optimizer = optimizer\n", "        self._gen_optimizer = optimizer.inner\n"
    )
    new, codes = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new and ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


# Modelled on a Horovod TF 2.x ResNet-50 benchmark (the optimizer wrapped when not fp32, passed into a `tf.function`
# step as a parameter); our own code.
_STEP = """\
import tensorflow as tf


@tf.function
def train_step(model, opt, images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def main(flags, model, dataset):
    opt = tf.keras.optimizers.SGD(learning_rate=flags.learning_rate, momentum=0.9)
    if not flags.fp32:
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")
    for images, labels in dataset:
        train_step(model, opt, images, labels)
    print(opt.loss_scale)
"""

_STEP_KERAS3 = """\
import tensorflow as tf


@tf.function
def train_step(model, opt, images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
        scaled_loss = opt.scale_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    opt.apply_gradients(zip(scaled_grads, model.trainable_variables))
    return loss


def main(flags, model, dataset):
    opt = tf.keras.optimizers.SGD(learning_rate=flags.learning_rate, momentum=0.9)
    if not flags.fp32:
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
    for images, labels in dataset:
        train_step(model, opt, images, labels)
    print(opt.scale_loss(1.0))
"""


def test_parameter_passed_a_traced_optimizer_at_every_call_keras3():
    check(_STEP, _STEP_KERAS3, codes=[w.SCALE_READ_NOTE])


def test_parameter_passed_by_keyword_is_traced_too():
    source = _STEP.replace(
        "train_step(model, opt, images, labels)", "train_step(model, labels=labels, images=images, opt=opt)"
    )
    after = _STEP_KERAS3.replace(
        "train_step(model, opt, images, labels)", "train_step(model, labels=labels, images=images, opt=opt)"
    )
    check(source, after, codes=[w.SCALE_READ_NOTE])


def test_parameter_of_a_function_also_passed_on_stays_on_the_shim():
    source = _STEP.replace("    print(opt.loss_scale)\n", "    strategy.run(train_step, args=(model, opt, 1, 2))\n")
    new, codes = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new and ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


def test_parameter_of_a_function_never_called_here_stays_on_the_shim():
    source = _STEP.replace("        train_step(model, opt, images, labels)\n", "        print(images, labels)\n")
    new, codes = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new and ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


def test_parameter_passed_an_untraced_value_at_one_call_stays_on_the_shim():
    source = _STEP.replace("    print(opt.loss_scale)\n", "    train_step(model, flags.optimizer, 1, 2)\n")
    new, codes = migrate(source)
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new and ".get_scaled_loss(" in new
    assert w.LOOP_SHIM_NOTE in codes


# Modelled on TF 2.x distributed trainer classes (the wrap set on `self` by flag inside `strategy.scope()`, read in a
# per-replica step function nested in a method); the loss passed by TF 2.4's keyword. Our own code.
_NESTED = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model, mixed_precision=False):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        if mixed_precision:
            self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.optimizer, "dynamic")

    @tf.function
    def train(self, inputs):
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
                scaled = self.optimizer.get_scaled_loss(loss=loss)
            scaled_grads = tape.gradient(scaled, self.model.trainable_variables)
            grads = self.optimizer.get_unscaled_gradients(grads=scaled_grads)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss

        return step(*inputs)
"""


def test_self_read_in_a_nested_function_and_keyword_arguments_keras3():
    after = (
        _NESTED.replace(
            'tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.optimizer, "dynamic")',
            "tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)",
        )
        .replace("get_scaled_loss(loss=loss)", "scale_loss(loss=loss)")
        .replace(
            "            grads = self.optimizer.get_unscaled_gradients(grads=scaled_grads)\n"
            "            self.optimizer.apply_gradients(zip(grads, ",
            "            self.optimizer.apply_gradients(zip(scaled_grads, ",
        )
    )
    check(_NESTED, after)


def test_a_keyword_other_than_tf24s_name_stays_on_the_shim():
    new, codes = migrate(_NESTED.replace("get_scaled_loss(loss=loss)", "get_scaled_loss(value=loss)"))
    assert "lossscale_compat.KerasLossScaleOptimizer(" in new
    assert w.BAD_ARGUMENTS in codes and w.LOOP_SHIM_NOTE in codes
