"""aws-samples' ALBERT pretraining loop: scaled gradients accumulated over micro-batches, unscaled once, clipped,
applied.

Models aws-samples/deep-learning-models: models/nlp/albert/run_pretraining.py at commit
00bce115491339d97c2fe467fc0725cfef330c6f (`train_batch`: `scaled_loss = opt.get_scaled_loss(loss)` under the tape,
`gradient_accumulator(tape.gradient(scaled_loss, ...))`; `allreduce`: `opt.get_unscaled_gradients(
gradient_accumulator.gradients)`, `tf.clip_by_global_norm(grads, clip_norm=max_grad_norm)`, `opt.apply_gradients`
of the gradients that are not None, then `gradient_accumulator.reset()`; both `tf.function`s). Our own code: a small
dense regressor under `mixed_float16` instead of ALBERT, an accumulator of our own in place of transformers', no
Horovod, and one micro-batch that overflows float16, so its step is skipped.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
MAX_GRAD_NORM = 1.0
ACCUMULATION_STEPS = 2


class GradientAccumulator:
    """Sums gradients into float32 variables made on the first call."""

    def __init__(self):
        self._sums = None

    def __call__(self, gradients):
        if self._sums is None:
            self._sums = [tf.Variable(tf.zeros_like(g), trainable=False) for g in gradients]
        for total, gradient in zip(self._sums, gradients):
            total.assign_add(gradient)

    @property
    def gradients(self):
        return [total.value() for total in self._sums]

    def reset(self):
        for total in self._sums:
            total.assign(tf.zeros_like(total))


inputs = tf.keras.Input(shape=(6,))
hidden = tf.keras.layers.Dense(8, activation="tanh")(inputs)
outputs = tf.keras.layers.Dense(1, dtype="float32")(hidden)
model = tf.keras.Model(inputs, outputs)
_harness.initial_weights(model, seed=5)

opt = tf.keras.optimizers.Adam(learning_rate=0.01)
opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")
gradient_accumulator = GradientAccumulator()

rng = np.random.RandomState(3)
features = rng.uniform(-1, 1, size=(14, ACCUMULATION_STEPS, 4, 6)).astype("float32")
targets = features.sum(axis=-1, keepdims=True)
features[5, 1, 2, 0] = 7e4  # overflows float16 in the hidden layer: this step's accumulated gradients are not finite


@tf.function
def train_batch(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    gradient_accumulator(scaled_grads)
    return loss


@tf.function
def allreduce():
    scaled_grads = gradient_accumulator.gradients
    grads = opt.get_unscaled_gradients(scaled_grads)
    (grads, grad_norm) = tf.clip_by_global_norm(grads, clip_norm=MAX_GRAD_NORM)
    opt.apply_gradients(
        [(tf.cast(grad, var.dtype), var) for (grad, var) in zip(grads, model.trainable_variables) if grad is not None]
    )
    gradient_accumulator.reset()
    return grad_norm


recorder = _harness.Recorder()
for step in range(features.shape[0]):
    before = _harness.weights_of(model.trainable_variables)
    for micro in range(ACCUMULATION_STEPS):
        train_batch(tf.constant(features[step, micro]), tf.constant(targets[step, micro]))
    allreduce()
    recorder.step_done(opt, before, _harness.weights_of(model.trainable_variables))

result = recorder.result(opt, model.trainable_variables)
tf.keras.mixed_precision.experimental.set_policy("float32")
_harness.emit(result, args.json)
