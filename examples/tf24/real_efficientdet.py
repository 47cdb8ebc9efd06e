"""google/automl's EfficientDet Keras trainer: a `train_step` override that asks `isinstance` of the experimental
class before scaling, an optimizer wrapped with a `DynamicLossScale` object, and a Policy built with `loss_scale=None`.

Models google/automl at commit e419394a4719816643d5cf7c9c5c22b108bfbca5: efficientdet/keras/train.py
(`tf.keras.mixed_precision.experimental.Policy(precision)` + `set_policy`), efficientdet/keras/train_lib.py
(`get_optimizer`: `tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer,
loss_scale=tf.mixed_precision.experimental.DynamicLossScale(params['loss_scale']))`; `EfficientDetNetTrainHparams
.train_step`: `isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer)` around
`get_scaled_loss` and `get_unscaled_gradients`, a learning rate read at `self.optimizer.iterations`, global-norm
clipping) and efficientdet/utils.py (`set_precision_policy`: `tf2.keras.mixed_precision.experimental.Policy(
policy_name, loss_scale=None)` for evaluation, with `tensorflow.compat.v2` imported as `tf2`). Our own code, a
two-layer model on synthetic data instead of the detector.
"""

import numpy as np
import tensorflow as tf
import tensorflow.compat.v2 as tf2

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")


def set_precision_policy(policy_name=None, loss_scale=False):
    """Sets the global policy; evaluation policies carry no loss scale."""
    if not policy_name:
        return
    if loss_scale:
        policy = tf2.keras.mixed_precision.experimental.Policy(policy_name)
    else:
        policy = tf2.keras.mixed_precision.experimental.Policy(policy_name, loss_scale=None)
    tf2.keras.mixed_precision.experimental.set_policy(policy)


def get_optimizer(params):
    """The SGD optimizer, wrapped for loss scaling under mixed_float16."""
    optimizer = tf.keras.optimizers.SGD(params['learning_rate'], momentum=params['momentum'])
    if params['precision'] == 'mixed_float16' and params['loss_scale']:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            optimizer, loss_scale=tf.mixed_precision.experimental.DynamicLossScale(params['loss_scale']))
    return optimizer


class TrainHparams(tf.keras.Model):
    """A model whose train_step scales the loss itself when its optimizer scales."""

    def __init__(self, clip_norm, lr_schedule):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8, activation='relu')
        self.head = tf.keras.layers.Dense(2)
        self.clip_norm = clip_norm
        self.lr_schedule = lr_schedule

    def call(self, inputs, training=False):
        return tf.cast(self.head(self.hidden(inputs)), tf.float32)

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            outputs = self(images, training=True)
            total_loss = tf.reduce_mean(tf.square(outputs - labels))
            if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
                scaled_loss = self.optimizer.get_scaled_loss(total_loss)
            else:
                scaled_loss = total_loss
        loss_vals = {'loss': total_loss, 'learning_rate': self.lr_schedule(self.optimizer.iterations)}
        trainable_vars = self.trainable_variables
        scaled_gradients = tape.gradient(scaled_loss, trainable_vars)
        if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
            gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = scaled_gradients
        gradients, _ = tf.clip_by_global_norm(gradients, self.clip_norm)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return loss_vals


params = {'precision': 'mixed_float16', 'loss_scale': 2 ** 10, 'learning_rate': 0.05, 'momentum': 0.9,
          'clip_gradients_norm': 10.0}
policy = tf.keras.mixed_precision.experimental.Policy(params['precision'])
tf.keras.mixed_precision.experimental.set_policy(policy)

lr_schedule = tf.keras.optimizers.schedules.PiecewiseConstantDecay([4], [0.05, 0.01])
model = TrainHparams(params['clip_gradients_norm'], lr_schedule)
model(np.zeros((1, 4), 'float32'))  # builds the layers (Keras 3's Model.build does not, for a subclass)
_harness.initial_weights(model, seed=41)
model.compile(optimizer=get_optimizer(params))

rng = np.random.RandomState(42)
x = rng.uniform(-1, 1, size=(48, 4)).astype('float32')
y = np.stack([x.sum(axis=1), x[:, 0] - x[:, 1]], axis=1).astype('float32')
x[13, 0] = 1e5  # overflows float16: that batch is skipped and the scale halves

recorder = _harness.Recorder()
model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[_harness.recording_callback(recorder)])
result = recorder.result(model.optimizer, model.trainable_variables)

set_precision_policy('mixed_float16', loss_scale=False)  # the evaluation policy: no loss scale
result['eval_policy_loss_scale'] = repr(tf.keras.mixed_precision.experimental.global_policy().loss_scale)
result['eval_output'] = np.asarray(model(x[:2])).ravel().tolist()
set_precision_policy('float32')
_harness.emit(result, args.json)
