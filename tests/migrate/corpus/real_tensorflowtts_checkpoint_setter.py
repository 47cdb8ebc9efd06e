"""An earlier GAN trainer: optimizers wrapped in setters go into a tf.train.Checkpoint through getters, and a
restore puts the checkpoint's objects back onto the same attributes.

Models TensorSpeech/TensorFlowTTS, tensorflow_tts/trainers/base_trainer.py at commit
04329b8e431a3175d24cf410991287027ec90426 (`set_gen_optimizer`: `self.gen_optimizer = generator_optimizer`, then
`self.gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.gen_optimizer, 'dynamic')` when
`self.is_generator_mixed_precision`; `create_checkpoint_manager` builds `tf.train.Checkpoint(...,
gen_optimizer=self.get_gen_optimizer(), dis_optimizer=self.get_dis_optimizer())`; `load_checkpoint` does
`self.gen_optimizer = self.ckpt.gen_optimizer`). Pattern: public attribute receivers, single-quoted 'dynamic',
a wrapped optimizer tracked by a checkpoint and reassigned from it. Our own code, no models or data.
"""

import os

import tensorflow as tf


class GanTrainerBase:
    def __init__(self, config, gen_mixed=False, dis_mixed=False):
        self.config = config
        self.is_generator_mixed_precision = gen_mixed
        self.is_discriminator_mixed_precision = dis_mixed
        self.steps = 0

    def set_gen_optimizer(self, generator_optimizer):
        self.gen_optimizer = generator_optimizer
        if self.is_generator_mixed_precision:
            self.gen_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                self.gen_optimizer, 'dynamic')

    def get_gen_optimizer(self):
        return self.gen_optimizer

    def set_dis_optimizer(self, discriminator_optimizer):
        self.dis_optimizer = discriminator_optimizer
        if self.is_discriminator_mixed_precision:
            self.dis_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
                self.dis_optimizer, 'dynamic')

    def get_dis_optimizer(self):
        return self.dis_optimizer

    def create_checkpoint_manager(self, generator, discriminator, saved_path=None, max_to_keep=3):
        if saved_path is None:
            saved_path = os.path.join(self.config["outdir"], "checkpoints")
        self.ckpt = tf.train.Checkpoint(steps=tf.Variable(1),
                                        generator=generator,
                                        discriminator=discriminator,
                                        gen_optimizer=self.get_gen_optimizer(),
                                        dis_optimizer=self.get_dis_optimizer())
        self.ckp_manager = tf.train.CheckpointManager(self.ckpt, saved_path, max_to_keep=max_to_keep)

    def save_checkpoint(self):
        self.ckpt.steps.assign(self.steps)
        self.ckp_manager.save(checkpoint_number=self.steps)

    def load_checkpoint(self, path):
        self.ckpt.restore(path)
        self.steps = int(self.ckpt.steps.numpy())
        self.gen_optimizer = self.ckpt.gen_optimizer
        self.dis_optimizer = self.ckpt.dis_optimizer

