"""TF 2.4 custom loops on an optimizer held elsewhere than by a plain name (issue 42), written once: the codemod's
before/after tests (rules/test_custom_loop_holders.py) migrate them, and test_holder_runs.py trains them. Each wraps
SGD, whose update does not read the step count (Keras 3's own class does not count a skipped step; TF 2.4's did)."""

# Modelled on TF 2.x trainer classes (an `Optimizer`/`Trainer` wrapper that builds its loss-scale optimizer in
# `__init__` and scales in a `tf.function` train step); our own code.
TRAINER = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


class Trainer:
    def __init__(self, model, hparams):
        self.model = model
        self.optimizer = mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(hparams.learning_rate), loss_scale="dynamic")

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
            scaled_loss = self.optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
        gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        return loss
"""


# Modelled on TF 2.4's mixed-precision guide (a model compiled with the wrap) and custom loops that read the
# compiled model's `optimizer`; our own code.
COMPILED = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), loss_scale="dynamic")
model.compile(optimizer=optimizer, loss="mse")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = model.optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = model.optimizer.get_unscaled_gradients(scaled_gradients)
    model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
"""


# Modelled on TF 2.x training scripts that build their optimizer in a factory of the same module (`get_optimizer`,
# `configure_optimizer`) and run a custom loop on what it returns; our own code.
FACTORY = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


def get_optimizer(learning_rate):
    optimizer = tf.keras.optimizers.SGD(learning_rate)
    optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")
    return optimizer


def train(model, dataset):
    optimizer = get_optimizer(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    for x, y in dataset:
        train_step(x, y)
"""
