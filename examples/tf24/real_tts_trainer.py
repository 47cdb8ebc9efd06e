"""TensorFlowTTS's Seq2Seq trainer: `strategy.run` over a `tf.gradients` step, an `AdamWeightDecay` that clips in its
own `apply_gradients`, and a job that resumes mid-training into a new trainer with a new optimizer.

Models TensorSpeech/TensorFlowTTS: tensorflow_tts/trainers/base_trainer.py (`Seq2SeqBasedTrainer`: `set_optimizer`
wraps in `tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")`; `_one_step_forward`, a
`tf.function`, runs `strategy.run(_one_step_forward_per_replica)` and reduces the losses; the step takes
`tf.gradients(optimizer.get_scaled_loss(loss), trainable_variables)`, `get_unscaled_gradients`, then
`apply_gradients(zip(gradients, trainable_variables), 1.0)`; `create_checkpoint_manager`:
`tf.train.Checkpoint(steps=tf.Variable(1), epochs=tf.Variable(1), optimizer=...)` in the strategy's scope;
`load_checkpoint`: `ckpt.restore(path)`, `self._optimizer = self.ckpt.optimizer`,
`self._optimizer.iterations.assign(tf.cast(self.steps, tf.int64))`, then the model's weights) and
tensorflow_tts/optimizers/adamweightdecay.py (`AdamWeightDecay(tf.keras.optimizers.Adam)` whose
`apply_gradients(grads_and_vars, clip_norm=0.5, ...)` clips by global norm) and the training scripts'
`PolynomialDecay` rate. Our own code: a small dense regressor instead of a TTS model, `OneDeviceStrategy` on the CPU,
the model's weights kept in memory where TensorFlowTTS writes an `.h5` file, and an `AdamWeightDecay` without its
weight-decay `_resource_apply_*` hooks (on Keras 3 there are none to override). The resumed trainer restores before
its optimizer has variables, so slots, step count and loss scale come back through deferred restoration. One batch
before the checkpoint and one after it overflow, so a step is skipped on each side of the resume.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

STEPS, RESUME_AT, BATCH = 10, 5, 4


class AdamWeightDecay(tf.keras.optimizers.Adam):
    """Adam whose `apply_gradients` clips the gradients by their global norm first."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay_rate=0.0,
                 name="AdamWeightDecay", **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, name=name,
                         **kwargs)
        self.weight_decay_rate = weight_decay_rate

    def apply_gradients(self, grads_and_vars, clip_norm=0.5, **kwargs):
        grads, tvars = list(zip(*grads_and_vars))
        grads, _ = tf.clip_by_global_norm(grads, clip_norm=clip_norm)
        return super().apply_gradients(zip(grads, tvars), **kwargs)


rng = np.random.RandomState(71)
features = rng.uniform(-1, 1, size=(STEPS, BATCH, 6)).astype("float32")
targets = (features @ rng.uniform(-1, 1, size=(6, 2)).astype("float32")).astype("float32")
features[2, 1, 3] = np.inf  # before the checkpoint: skipped, the scale halves
features[7, 0, 0] = np.inf  # after the resume: skipped again


class Trainer:
    """One training job: a model, an optimizer in a loss-scale optimizer, a checkpoint of steps, epochs, optimizer."""

    def __init__(self, strategy, steps=0, epochs=0):
        self.steps, self.epochs = steps, epochs
        self._strategy = strategy
        self._model = None
        self._optimizer = None
        self._one_step_forward = tf.function(self._forward)

    def compile(self, model, optimizer):
        self._model = model
        self._optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
        self._trainable_variables = model.trainable_variables

    def create_checkpoint_manager(self, saved_path, with_model):
        self.saved_path = saved_path
        # TensorFlowTTS's checkpoint holds no model, so it holds no slots: TF 2.4 resumed with Adam's moments at zero.
        model = {"model": self._model} if with_model else {}
        self.ckpt = tf.train.Checkpoint(steps=tf.Variable(1), epochs=tf.Variable(1), optimizer=self._optimizer, **model)
        self.ckp_manager = tf.train.CheckpointManager(self.ckpt, saved_path, max_to_keep=2)

    def save_checkpoint(self):
        self.ckpt.steps.assign(self.steps)
        self.ckpt.epochs.assign(self.epochs)
        self.ckp_manager.save(checkpoint_number=self.steps)
        return self._model.get_weights()  # TensorFlowTTS: model-<steps>.h5

    def load_checkpoint(self, pretrained_path, model_weights):
        self.ckpt.restore(pretrained_path)
        self.steps = int(self.ckpt.steps.numpy())
        self.epochs = int(self.ckpt.epochs.numpy())
        self._optimizer = self.ckpt.optimizer
        self._optimizer.iterations.assign(tf.cast(self.steps, tf.int64))  # as TensorFlowTTS re-assigns it
        self._model.set_weights(model_weights)

    def _forward(self, x, y):
        per_replica_losses = self._strategy.run(self._forward_per_replica, args=(x, y))
        return self._strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    def _forward_per_replica(self, x, y):
        per_example_losses = tf.reduce_mean(tf.square(self._model(x, training=True) - y), axis=-1)
        loss = tf.nn.compute_average_loss(per_example_losses, global_batch_size=BATCH)
        scaled_loss = self._optimizer.get_scaled_loss(loss)
        scaled_gradients = tf.gradients(scaled_loss, self._trainable_variables)
        gradients = self._optimizer.get_unscaled_gradients(scaled_gradients)
        self._optimizer.apply_gradients(zip(gradients, self._trainable_variables), 1.0)
        return loss

    def train(self, until, recorder):
        while self.steps < until:
            before = _harness.weights_of(self._trainable_variables)
            self._one_step_forward(features[self.steps], targets[self.steps])
            self.steps += 1
            recorder.step_done(self._optimizer, before, _harness.weights_of(self._trainable_variables))


def new_trainer(strategy, saved_path, with_model):
    """A trainer as the training script builds one: a new model, a new optimizer, the checkpoint manager."""
    trainer = Trainer(strategy)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(5, activation="tanh", input_shape=(6,)),
                                     tf.keras.layers.Dense(2)])
        _harness.initial_weights(model, seed=72)
        rate = tf.keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate=0.05, decay_steps=STEPS, end_learning_rate=0.005)
        trainer.compile(model, AdamWeightDecay(learning_rate=rate, weight_decay_rate=0.001))
        trainer.create_checkpoint_manager(saved_path, with_model)
    return trainer


def run(resume, with_model=False):
    """Trains STEPS steps; with `resume`, a second trainer takes over from the checkpoint at RESUME_AT (a checkpoint
    that also holds the model, and with it the slots, `with_model`)."""
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    recorder = _harness.Recorder()
    with tempfile.TemporaryDirectory() as saved_path:
        trainer = new_trainer(strategy, saved_path, with_model)
        if resume:
            trainer.train(RESUME_AT, recorder)
            weights = trainer.save_checkpoint()
            trainer = new_trainer(strategy, saved_path, with_model)  # the job is preempted and starts again
            with strategy.scope():
                trainer.load_checkpoint(tf.train.latest_checkpoint(saved_path), weights)
        trainer.train(STEPS, recorder)
        return recorder.result(trainer._optimizer, trainer._trainable_variables, resumed_at=RESUME_AT if resume else None)


_harness.emit({"uninterrupted": run(resume=False), "resumed": run(resume=True),
               "resumed_with_model": run(resume=True, with_model=True), "tensorflow": tf.__version__}, args.json)
