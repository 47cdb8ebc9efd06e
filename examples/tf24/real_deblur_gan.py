"""A GAN trainer that wraps its two optimizers in one method and scales with them in another.

Models elpapi42/deep-deblurring-model at commit 0a532fe5e2d5d9fab84f2f8f5286085008cb86ae:
deblurrer/scripts/training/trainer.py (`from tensorflow.keras.mixed_precision import experimental as
mixed_precision`, `from tensorflow.keras.mixed_precision.experimental import global_policy`; `__init__` sets
`self.gen_optimizer = mixed_precision.LossScaleOptimizer(gen_optimizer, loss_scale='dynamic')` (and the
discriminator's) when `global_policy().name` is mixed; `update_weights` calls `self.gen_optimizer.get_scaled_loss(
loss=gen_loss)` and `get_unscaled_gradients` from a `tf.function` train step with two tapes) and
deblurrer/scripts/training/train.py (`mixed_precision.set_policy(mixed_precision.Policy('mixed_float16'))`).
Our own code, two small dense models on synthetic data instead of the FPN generator and the discriminator.
"""

import numpy as np
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision
from tensorflow.keras.mixed_precision.experimental import global_policy

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")


class Trainer:
    """Trains the generator and the discriminator together."""

    def __init__(self, generator, discriminator, gen_optimizer, disc_optimizer):
        self.generator = generator
        self.discriminator = discriminator
        gp_name = global_policy().name
        self.mixed_presicion = gp_name in {'mixed_float16', 'mixed_bfloat16'}
        if self.mixed_presicion:
            self.gen_optimizer = mixed_precision.LossScaleOptimizer(gen_optimizer, loss_scale='dynamic')
            self.disc_optimizer = mixed_precision.LossScaleOptimizer(disc_optimizer, loss_scale='dynamic')
        else:
            self.gen_optimizer = gen_optimizer
            self.disc_optimizer = disc_optimizer

    @tf.function
    def train_step(self, blur, sharp):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            fake = tf.cast(self.generator(blur, training=True), tf.float32)
            real_output = tf.cast(self.discriminator(sharp, training=True), tf.float32)
            fake_output = tf.cast(self.discriminator(fake, training=True), tf.float32)
            gen_loss = tf.reduce_mean(tf.square(fake_output - 1.0)) + tf.reduce_mean(tf.abs(fake - sharp))
            disc_loss = tf.reduce_mean(tf.square(real_output - 1.0)) + tf.reduce_mean(tf.square(fake_output))
            self.update_weights(gen_loss, disc_loss, gen_tape, disc_tape)
        return gen_loss, disc_loss

    def update_weights(self, gen_loss, disc_loss, gen_tape, disc_tape):
        if self.mixed_presicion:
            gen_loss = self.gen_optimizer.get_scaled_loss(loss=gen_loss)
            disc_loss = self.disc_optimizer.get_scaled_loss(loss=disc_loss)
        gen_grads = gen_tape.gradient(gen_loss, self.generator.trainable_variables)
        disc_grads = disc_tape.gradient(disc_loss, self.discriminator.trainable_variables)
        if self.mixed_presicion:
            gen_grads = self.gen_optimizer.get_unscaled_gradients(gen_grads)
            disc_grads = self.disc_optimizer.get_unscaled_gradients(disc_grads)
        self.gen_optimizer.apply_gradients(zip(gen_grads, self.generator.trainable_variables))
        self.disc_optimizer.apply_gradients(zip(disc_grads, self.discriminator.trainable_variables))


policy = mixed_precision.Policy('mixed_float16')
mixed_precision.set_policy(policy)

generator = tf.keras.Sequential([tf.keras.layers.Dense(8, activation='relu', input_shape=(6,)),
                                 tf.keras.layers.Dense(6)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(4, activation='relu', input_shape=(6,)),
                                     tf.keras.layers.Dense(1)])
_harness.initial_weights(generator, seed=51)
_harness.initial_weights(discriminator, seed=52)
trainer = Trainer(generator, discriminator, tf.keras.optimizers.Adam(1e-3, beta_1=0.5),
                  tf.keras.optimizers.Adam(1e-3, beta_1=0.5))

rng = np.random.RandomState(53)
sharp = rng.uniform(-1, 1, size=(8, 8, 6)).astype('float32')
blur = (sharp + rng.normal(0, 0.2, size=sharp.shape)).astype('float32')
blur[3, 1, 4] = 1e5  # overflows float16 in the generator: both losses are not finite, both steps are skipped

gen_recorder, disc_recorder = _harness.Recorder(), _harness.Recorder()
for i in range(len(sharp)):
    gen_before = _harness.weights_of(generator.trainable_variables)
    disc_before = _harness.weights_of(discriminator.trainable_variables)
    trainer.train_step(blur[i], sharp[i])
    gen_recorder.step_done(trainer.gen_optimizer, gen_before, _harness.weights_of(generator.trainable_variables))
    disc_recorder.step_done(trainer.disc_optimizer, disc_before,
                            _harness.weights_of(discriminator.trainable_variables))

result = {"generator": gen_recorder.result(trainer.gen_optimizer, generator.trainable_variables),
          "discriminator": disc_recorder.result(trainer.disc_optimizer, discriminator.trainable_variables),
          "tensorflow": tf.__version__}
mixed_precision.set_policy('float32')
_harness.emit(result, args.json)
