"""OpenNMT-tf's trainer: `get_gradients` of a loss-scale optimizer inside a `tf.function`, and a run that stops and
resumes from a `tf.train.Checkpoint` of the model and the optimizer, restored before the optimizer has variables.

Models OpenNMT/OpenNMT-tf: opennmt/training.py (`_add_mixed_precision_wrapper`: `tf.keras.mixed_precision.
LossScaleOptimizer(optimizer)` when mixed precision is on; `_steps`: `forward_fn = tf.function(_forward)`, which takes
the next batch from the iterator itself; `_compute_gradients`: outside eager execution,
`optimizer.get_gradients(training_loss, model.trainable_variables)`, which scales and unscales the loss itself;
`_apply_gradients`: `apply_gradients(list(zip(gradients, trainable_variables)))`; the loop stops at `max_step`, read
from `optimizer.iterations`) and opennmt/utils/checkpoint.py (`tf.train.Checkpoint(model=model,
optimizer=optimizer)` with a `CheckpointManager`; `restore` of the latest checkpoint before training). Our own code:
a small dense regressor under `mixed_float16` instead of a Transformer, Adam with a Noam-style schedule of our own,
and a second run that builds a new model and optimizer and resumes at the checkpoint. Batches that overflow float16
are skipped on both sides of the resume.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
MAX_STEP, SAVE_AT, BATCH = 10, 4, 4


class NoamDecay(tf.keras.optimizers.schedules.LearningRateSchedule):
    """`scale * min((step + 1) ** -0.5, (step + 1) * warmup_steps ** -1.5)`."""

    def __init__(self, scale, warmup_steps):
        self.scale, self.warmup_steps = scale, warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32) + 1
        return self.scale * tf.minimum(tf.math.rsqrt(step), step * self.warmup_steps ** -1.5)

    def get_config(self):
        return {"scale": self.scale, "warmup_steps": self.warmup_steps}


rng = np.random.RandomState(81)
features = rng.uniform(-1, 1, size=(MAX_STEP * BATCH, 5)).astype("float32")
targets = (features @ rng.uniform(-1, 1, size=(5, 3))).astype("float32")
features[1 * BATCH + 2, 0] = 1e5  # step 2 overflows float16: skipped before the checkpoint
features[6 * BATCH + 1, 4] = 1e5  # step 7: skipped after the resume


class Trainer:
    """A single-device trainer: forward and apply in one `tf.function`, gradients from `get_gradients`."""

    def __init__(self, model, optimizer):
        self._model = model
        self._mixed_precision = tf.keras.mixed_precision.global_policy().name == "mixed_float16"
        if self._mixed_precision and not isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
            optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
        self._optimizer = optimizer

    def _run_model(self, source, target):
        outputs = tf.cast(self._model(source, training=True), tf.float32)
        return tf.reduce_mean(tf.square(outputs - target))

    def _compute_gradients(self, source, target):
        if tf.executing_eagerly():
            with tf.GradientTape() as tape:
                training_loss = self._optimizer.get_scaled_loss(self._run_model(source, target))
            gradients = self._optimizer.get_unscaled_gradients(
                tape.gradient(training_loss, self._model.trainable_variables))
        else:
            training_loss = self._run_model(source, target)
            # As in OpenNMT-tf: the loss-scale optimizer's get_gradients scales and unscales.
            gradients = self._optimizer.get_gradients(training_loss, self._model.trainable_variables)
        return training_loss, gradients

    def _forward(self, iterator):
        source, target = next(iterator)
        loss, gradients = self._compute_gradients(source, target)
        self._optimizer.apply_gradients(list(zip(gradients, self._model.trainable_variables)))
        return loss

    def __call__(self, dataset, max_step, recorder, on_step=None):
        iterator = iter(dataset)
        forward_fn = tf.function(lambda: self._forward(iterator))
        while True:
            before = _harness.weights_of(self._model.trainable_variables)
            try:
                forward_fn()
            except (StopIteration, tf.errors.OutOfRangeError):
                break
            recorder.step_done(self._optimizer, before, _harness.weights_of(self._model.trainable_variables))
            step = int(self._optimizer.iterations.numpy())
            if on_step is not None:
                on_step(step)
            if step == max_step:
                break


def build():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(5,)),
                                 tf.keras.layers.Dense(3)])
    _harness.initial_weights(model, seed=82)
    return model, tf.keras.optimizers.Adam(learning_rate=NoamDecay(scale=0.5, warmup_steps=4))


def dataset(skip_steps=0):
    return tf.data.Dataset.from_tensor_slices((features, targets)).batch(BATCH).skip(skip_steps)


def run(resume):
    """Trains to MAX_STEP; with `resume`, stops after SAVE_AT steps and a new model and optimizer take over."""
    recorder = _harness.Recorder()
    with tempfile.TemporaryDirectory() as model_dir:
        model, optimizer = build()
        trainer = Trainer(model, optimizer)
        checkpoint = tf.train.Checkpoint(model=model, optimizer=trainer._optimizer)
        manager = tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=2)
        if not resume:
            trainer(dataset(), MAX_STEP, recorder)
            return recorder.result(trainer._optimizer, model.trainable_variables)
        trainer(dataset(), SAVE_AT, recorder, on_step=lambda step: step == SAVE_AT and manager.save(step))
        model, optimizer = build()  # the job is preempted and starts again
        trainer = Trainer(model, optimizer)
        checkpoint = tf.train.Checkpoint(model=model, optimizer=trainer._optimizer)
        checkpoint.restore(tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=2).latest_checkpoint)
        restored = {"iterations": int(trainer._optimizer.iterations.numpy()),
                    "loss_scale": _harness.current_loss_scale(trainer._optimizer)}
        trainer(dataset(skip_steps=restored["iterations"]), MAX_STEP, recorder)
        return recorder.result(trainer._optimizer, model.trainable_variables, restored=restored)


result = {"uninterrupted": run(resume=False), "resumed": run(resume=True), "tensorflow": tf.__version__}
tf.keras.mixed_precision.experimental.set_policy("float32")
_harness.emit(result, args.json)
