"""DreamerV2's optimizer wrapper: TF 2.4's final `LossScaleOptimizer` held on `self`, a replica all-reduce,
clipping, weight decay, and `apply_gradients(..., experimental_aggregate_gradients=False)`.

Models danijar/dreamerv2: dreamerv2/common/tfutils.py at commit 6124db46d6be27d209060e2a11677661a218294d
(`Optimizer.__init__`: `prec.LossScaleOptimizer(self._opt, dynamic=True)` when the global policy computes in
float16; `__call__`: `get_scaled_loss` under the caller's tape, `get_unscaled_gradients`, the loss scale read into the
metrics, `context.all_reduce('mean', grads)`, `tf.clip_by_global_norm(grads, clip, norm)`, weight decay by
`var.assign((1 - wd) * var)`, then `apply_gradients(zip(grads, varibs), experimental_aggregate_gradients=False)`;
`variables` returns `self._opt.variables()`). Our own code: a small dense model under `mixed_float16`, one
synthetic batch that overflows float16 (its step is skipped), and a `tf.function` train step.
"""

import numpy as np
import tensorflow as tf
from tensorflow.keras import mixed_precision as prec

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")
prec.set_global_policy("mixed_float16")


class Optimizer(tf.Module):
    """Wraps a Keras optimizer with loss scaling, clipping and weight decay, as one call per training step."""

    def __init__(self, name, lr, clip=None, wd=None):
        self._name = name
        self._clip = clip
        self._wd = wd
        self._opt = tf.optimizers.Adam(lr, epsilon=1e-4)
        self._mixed = prec.global_policy().compute_dtype == tf.float16
        if self._mixed:
            self._opt = prec.LossScaleOptimizer(self._opt, dynamic=True)

    @property
    def variables(self):
        return self._opt.variables()

    def __call__(self, tape, loss, varibs):
        metrics = {}
        if self._mixed:
            with tape:
                loss = self._opt.get_scaled_loss(loss)
        grads = tape.gradient(loss, varibs)
        if self._mixed:
            grads = self._opt.get_unscaled_gradients(grads)
            metrics[self._name + "_loss_scale"] = self._opt.loss_scale
        context = tf.distribute.get_replica_context()
        if context:
            grads = context.all_reduce("mean", grads)
        norm = tf.linalg.global_norm(grads)
        if self._clip:
            grads, _ = tf.clip_by_global_norm(grads, self._clip, norm)
        metrics[self._name + "_grad_norm"] = norm
        if self._wd:
            for var in varibs:
                var.assign((1 - self._wd) * var)
        self._opt.apply_gradients(zip(grads, varibs), experimental_aggregate_gradients=False)
        return metrics


inputs = tf.keras.Input(shape=(5,))
hidden = tf.keras.layers.Dense(8, activation="elu")(inputs)
outputs = tf.keras.layers.Dense(2, dtype="float32")(hidden)
model = tf.keras.Model(inputs, outputs)
_harness.initial_weights(model, seed=9)
optimizer = Optimizer("model", 3e-3, clip=100.0)  # DreamerV2 decays weights before a step it may skip

rng = np.random.RandomState(4)
features = rng.uniform(-1, 1, size=(10, 8, 5)).astype("float32")
targets = np.stack([features.sum(-1), features.max(-1)], axis=-1).astype("float32")
features[3, 6, 1] = 7e4  # overflows float16 in the hidden layer: this step's gradients are not finite


@tf.function
def train(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    return optimizer(tape, loss, model.trainable_variables)


recorder = _harness.Recorder()
for step in range(features.shape[0]):
    before = _harness.weights_of(model.trainable_variables)
    train(tf.constant(features[step]), tf.constant(targets[step]))
    recorder.step_done(optimizer._opt, before, _harness.weights_of(model.trainable_variables))

result = recorder.result(optimizer._opt, model.trainable_variables, optimizer_variables=len(optimizer.variables))
prec.set_global_policy("float32")
_harness.emit(result, args.json)
