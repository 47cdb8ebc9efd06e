# Modelled on public TF 2.x GAN code (code index, search "get_scaled_loss" wrapper `Optimizer` classes of hparams-driven GAN trainers): an optimizer wrapper class that builds Adam, wraps it when mixed precision is on, and passes TF 2.4's loop methods through under their own names; the step scales through the wrapper, which unscales and applies. Our own code.
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision
from tensorflow.keras.optimizers import Adam


class Optimizer:
    def __init__(self, hparams, model):
        self.model = model
        self.mixed_precision = hparams.mixed_precision
        self.optimizer = Adam(hparams.learning_rate, beta_1=0.5)
        if self.mixed_precision:
            self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer, loss_scale="dynamic")

    def get_scaled_loss(self, loss):
        return self.optimizer.get_scaled_loss(loss)

    def get_unscaled_gradients(self, scaled_gradients):
        return self.optimizer.get_unscaled_gradients(scaled_gradients)

    def minimize(self, loss, tape):
        gradients = tape.gradient(loss, self.model.trainable_variables)
        if self.mixed_precision:
            gradients = self.get_unscaled_gradients(gradients)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))


def train_step(generator, optimizer, noise, real):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(generator(noise) - real))
        scaled = optimizer.get_scaled_loss(loss) if optimizer.mixed_precision else loss
    optimizer.minimize(scaled, tape)
    return loss
