"""A GAN vocoder trainer that wraps each optimizer in a setter and scales with it in other, per-replica methods.

Models TensorSpeech/TensorFlowTTS, tensorflow_tts/trainers/base_trainer.py at commit
7ae5572b5f41f1a0eff0bfb6dc7544fcdcfb921c (`GanBasedTrainer.set_gen_optimizer` / `set_dis_optimizer` assign
`self._gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self._gen_optimizer, "dynamic")`
behind a per-model flag; `_calculate_generator_gradient_per_batch` calls `self._gen_optimizer.get_scaled_loss(...)`
and, in a separate `if`, `tf.gradients(...)` then `self._gen_optimizer.get_unscaled_gradients(...)`; the step runs
under `self._strategy.run` inside a `tf.function` made at the first step; `apply_gradients` in the replica function).
Pattern: attribute receivers on `self` wrapped in one method and used in others, `tf.gradients` instead of a tape,
positional "dynamic", a wrap that is conditional on a flag. Our own code: toy dense models, no data pipeline.
"""

import tensorflow as tf


class VocoderGanTrainer:
    def __init__(self, config, strategy, gen_mixed=False, dis_mixed=False):
        self.config = config
        self._strategy = strategy
        self._gen_mixed = gen_mixed
        self._dis_mixed = dis_mixed
        self._generator = None
        self._discriminator = None
        self.step_fn = None

    def set_gen_optimizer(self, optimizer):
        self._gen_optimizer = optimizer
        if self._gen_mixed:
            self._gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                self._gen_optimizer, "dynamic"
            )

    def set_dis_optimizer(self, optimizer):
        self._dis_optimizer = optimizer
        if self._dis_mixed:
            self._dis_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                self._dis_optimizer, "dynamic"
            )

    def get_gen_optimizer(self):
        return self._gen_optimizer

    def compile(self, generator, discriminator, gen_opt, dis_opt):
        self._generator = generator
        self._discriminator = discriminator
        self.set_gen_optimizer(gen_opt)
        self.set_dis_optimizer(dis_opt)

    def _generator_gradients(self, batch):
        fake = self._generator(batch["mel"], training=True)
        per_example = tf.reduce_mean(tf.abs(fake - batch["audio"]), axis=-1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=self.config["batch_size"])
        if self._gen_mixed:
            scaled_loss = self._gen_optimizer.get_scaled_loss(loss)
        if self._gen_mixed:
            scaled_gradients = tf.gradients(scaled_loss, self._generator.trainable_variables)
            gradients = self._gen_optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = tf.gradients(loss, self._generator.trainable_variables)
        return gradients, loss

    def _discriminator_gradients(self, batch):
        real = self._discriminator(batch["audio"], training=True)
        fake = self._discriminator(self._generator(batch["mel"]), training=True)
        per_example = tf.reduce_mean(tf.square(real - 1.0) + tf.square(fake), axis=-1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=self.config["batch_size"])
        if self._dis_mixed:
            scaled_loss = self._dis_optimizer.get_scaled_loss(loss)
        if self._dis_mixed:
            scaled_gradients = tf.gradients(scaled_loss, self._discriminator.trainable_variables)
            gradients = self._dis_optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = tf.gradients(loss, self._discriminator.trainable_variables)
        return gradients, loss

    def _replica_step(self, batch):
        gen_grads, gen_loss = self._generator_gradients(batch)
        self._gen_optimizer.apply_gradients(zip(gen_grads, self._generator.trainable_variables))
        dis_grads, dis_loss = self._discriminator_gradients(batch)
        self._dis_optimizer.apply_gradients(zip(dis_grads, self._discriminator.trainable_variables))
        return gen_loss + dis_loss

    def _forward(self, batch):
        losses = self._strategy.run(self._replica_step, args=(batch,))
        return self._strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    def train_step(self, batch):
        if self.step_fn is None:
            self.step_fn = tf.function(self._forward)
        return self.step_fn(batch)
