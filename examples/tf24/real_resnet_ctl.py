"""tensorflow/models' ResNet custom training loop: a Policy with a run-time loss scale, an optimizer wrapped
through a helper, `isinstance` against the experimental class, and a loop driven by the optimizer's `iterations`.

Models tensorflow/models at commit 3b998e4f279a41d7490eb270a697b17e80e6fd38:
official/modeling/performance.py (`configure_optimizer`, `set_mixed_precision_policy` building
`Policy('mixed_float16', loss_scale=loss_scale)` with loss_scale None), official/vision/image_classification/resnet/
resnet_runnable.py (`self.global_step = self.optimizer.iterations` taken before the wrap, the loop runs until it
reaches the step count) and official/staging/training/grad_utils.py (`minimize_using_explicit_allreduce`: the
experimental-class `isinstance`, `get_scaled_loss`, a float16 all-reduce, `get_unscaled_gradients`,
`apply_gradients(..., experimental_aggregate_gradients=False)`). Our own code, a two-layer model on synthetic data.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")


def configure_optimizer(optimizer, use_float16=False, use_graph_rewrite=False, loss_scale='dynamic'):
    """Wraps the optimizer for float16 training or for the graph rewrite."""
    if use_float16:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=loss_scale)
    if use_graph_rewrite:
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
    return optimizer


def set_mixed_precision_policy(dtype, loss_scale=None):
    """Sets the global policy for a compute dtype."""
    if dtype == tf.float16:
        policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=loss_scale)
        tf.keras.mixed_precision.experimental.set_policy(policy)
    elif dtype == tf.float32:
        tf.keras.mixed_precision.experimental.set_policy('float32')
    else:
        raise ValueError('Unexpected dtype: %s' % dtype)


def minimize_using_explicit_allreduce(tape, optimizer, loss, trainable_variables):
    """One step: scaled loss, float16 all-reduce of the scaled gradients, unscale, apply."""
    if isinstance(optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
        with tape:
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_grads = tape.gradient(scaled_loss, trainable_variables)
        grads = [tf.cast(g, 'float16') for g in scaled_grads]
        grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grads)
        grads = [tf.cast(g, 'float32') for g in grads]
        grads = optimizer.get_unscaled_gradients(grads)
    else:
        grads = tape.gradient(loss, trainable_variables)
        grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grads)
    optimizer.apply_gradients(zip(grads, trainable_variables), experimental_aggregate_gradients=False)


class ResnetRunnable:
    """The trainer: model, optimizer, global step and a strategy-run train step."""

    def __init__(self, dtype, loss_scale):
        self.strategy = tf.distribute.get_strategy()
        self.dtype = dtype
        self.model = tf.keras.Sequential([
            tf.keras.layers.Dense(8, activation='relu', input_shape=(6,)),
            tf.keras.layers.Dense(3),
            tf.keras.layers.Activation('softmax', dtype='float32'),
        ])
        _harness.initial_weights(self.model, seed=21)
        self.optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        self.global_step = self.optimizer.iterations
        self.optimizer = configure_optimizer(self.optimizer, use_float16=self.dtype == tf.float16,
                                             use_graph_rewrite=False, loss_scale=loss_scale)

    @tf.function
    def train_step(self, images, labels):
        def step_fn(images, labels):
            with tf.GradientTape() as tape:
                logits = self.model(images, training=True)
                loss = tf.reduce_sum(tf.keras.losses.sparse_categorical_crossentropy(labels, logits)) * (1.0 / 8)
            minimize_using_explicit_allreduce(tape, self.optimizer, loss, self.model.trainable_variables)

        self.strategy.run(step_fn, args=(images, labels))


set_mixed_precision_policy(tf.float16)
runnable = ResnetRunnable(tf.float16, loss_scale='dynamic')  # --loss_scale=dynamic

rng = np.random.RandomState(22)
images = rng.uniform(-1, 1, size=(12, 8, 6)).astype('float32')
labels = rng.randint(0, 3, size=(12, 8)).astype('int64')
images[4, 2, 1] = np.nan  # a corrupt record: the step is skipped and the scale halves
images[9, 0, 5] = 1e5  # overflows float16: skipped too

recorder = _harness.Recorder()
train_steps = 10
batch = 0
while int(runnable.global_step.numpy()) < train_steps:  # the controller's loop: until the global step is reached
    before = _harness.weights_of(runnable.model.trainable_variables)
    runnable.train_step(images[batch], labels[batch])
    recorder.step_done(runnable.optimizer, before, _harness.weights_of(runnable.model.trainable_variables))
    batch += 1

result = recorder.result(runnable.optimizer, runnable.model.trainable_variables,
                         global_step=int(runnable.global_step.numpy()))
set_mixed_precision_policy(tf.float32)
_harness.emit(result, args.json)
