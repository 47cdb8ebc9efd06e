"""A TF 2.4-era `fit` whose mixed_float16 Policy carries its own DynamicLossScale, which `compile` uses."""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

mixed_precision = tf.keras.mixed_precision.experimental
policy = mixed_precision.Policy(
    "mixed_float16", loss_scale=tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=256, increment_period=3))
mixed_precision.set_policy(policy)

rng = np.random.RandomState(4)
x = rng.uniform(-1, 1, size=(80, 3)).astype("float32")
y = (x @ np.array([[1.0], [-1.0], [2.0]], "float32")).astype("float32")
x[33, 2] = 1e5  # float16 overflow in this batch: the step is skipped and the scale halves

model = tf.keras.Sequential([
    tf.keras.layers.Dense(4, activation="relu", input_shape=(3,),
                          kernel_initializer=tf.keras.initializers.Constant(0.2), bias_initializer="zeros"),
    tf.keras.layers.Dense(1, dtype="float32", kernel_initializer=tf.keras.initializers.Constant(-0.1)),
])
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse")

recorder = _harness.Recorder()


class RecordSteps(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self.before = _harness.weights_of(self.model.trainable_variables)

    def on_train_batch_end(self, batch, logs=None):
        recorder.step_done(self.model.optimizer, self.before, _harness.weights_of(self.model.trainable_variables))


model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, callbacks=[RecordSteps()])
result = recorder.result(model.optimizer, model.trainable_variables,
                         policy=repr(mixed_precision.global_policy()))
mixed_precision.set_policy("float32")
_harness.emit(result, args.json)
