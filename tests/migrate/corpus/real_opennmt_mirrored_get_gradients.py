"""A MirroredStrategy trainer whose loss-scale optimizer is built from the checkpoint's optimizer and trained through
`get_gradients` (which scales inside), with gradient accumulation and `iterations` as the training step.

Models OpenNMT/OpenNMT-tf, opennmt/training.py at commit 00e6dc451d3fc96973d13839a71290f007c0b9d7
(`Trainer.__init__`: `optimizer = checkpoint.optimizer`; `if mixed_precision: optimizer =
tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")`; `self._optimizer = optimizer`;
`_ = self._optimizer.iterations` under `self._strategy.scope()`; `_accumulate_gradients_on_replica`:
`self._optimizer.get_gradients(training_loss, variables)` run by `self._strategy.experimental_run_v2`;
`_apply_gradients_on_replica`: `self._optimizer.apply_gradients(grads_and_vars)`; `step =
self._optimizer.iterations.numpy()`; `self._optimizer.learning_rate` reported). Pattern: a local name wrapped then
stored on `self`, no explicit get_scaled_loss, TF 2.0-2.1's `experimental_run_v2`, iterations read as the step.
Our own code, a small model and a plain accumulator.
"""

import tensorflow as tf


class Accumulator:
    def __init__(self):
        self.gradients = []
        self.step = tf.Variable(0, trainable=False, dtype=tf.int64)

    def __call__(self, gradients):
        if not self.gradients:
            self.gradients = [tf.Variable(tf.zeros_like(g), trainable=False) for g in gradients]
        for accum, grad in zip(self.gradients, gradients):
            accum.assign_add(grad)
        self.step.assign_add(1)

    def reset(self):
        for accum in self.gradients:
            accum.assign(tf.zeros_like(accum))
        self.step.assign(0)


class MirroredTrainer:
    def __init__(self, checkpoint, devices=None, mixed_precision=False):
        self._checkpoint = checkpoint
        self._model = checkpoint.model
        self._strategy = tf.distribute.MirroredStrategy(devices=devices)
        optimizer = checkpoint.optimizer
        if optimizer is None:
            raise ValueError("No optimizer is defined")
        if mixed_precision:
            optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
        self._optimizer = optimizer
        with self._strategy.scope():
            _ = self._optimizer.iterations
            self._accumulator = Accumulator()

    def _accumulate_on_replica(self, features, labels):
        logits = self._model(features, training=True)
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        gradients = self._optimizer.get_gradients(loss, self._model.trainable_variables)
        self._accumulator(gradients)
        return loss

    @tf.function
    def _accumulate(self, features, labels):
        per_replica = self._strategy.experimental_run_v2(self._accumulate_on_replica, args=(features, labels))
        return self._strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, None)

    def _apply_on_replica(self):
        scale = tf.cast(self._accumulator.step * self._strategy.num_replicas_in_sync, tf.float32)
        grads_and_vars = [(g / scale, v) for g, v in zip(self._accumulator.gradients, self._model.trainable_variables)]
        self._optimizer.apply_gradients(grads_and_vars)
        self._accumulator.reset()

    @tf.function
    def _apply(self):
        self._strategy.experimental_run_v2(self._apply_on_replica)

    def __call__(self, dataset, accum_steps=1, report_steps=100, max_step=None):
        last_step = 0
        for i, (features, labels) in enumerate(dataset):
            loss = self._accumulate(features, labels)
            if (i + 1) % accum_steps == 0:
                self._apply()
            step = self._optimizer.iterations.numpy()
            if step == last_step:
                continue
            last_step = step
            if step % report_steps == 0:
                tf.get_logger().info("step %d lr %s loss %f", step, self._optimizer.learning_rate, loss)
            if step == max_step:
                break
        self._checkpoint.save(last_step)
