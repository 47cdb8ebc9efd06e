"""A TF 2.4-era `model.fit` with a dynamic LossScaleOptimizer and a batch that overflows."""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

rng = np.random.RandomState(2)
x = rng.uniform(-1, 1, size=(96, 4)).astype("float32")
y = (x @ np.array([[2.0], [-1.0], [0.5], [1.5]], "float32") - 0.5).astype("float32")
x[40, 1] = 1e30  # one bad record: its batch's loss overflows to inf and the step is skipped

model = tf.keras.Sequential([
    tf.keras.layers.Dense(
        1,
        kernel_initializer=tf.keras.initializers.Constant([[0.3], [-0.1], [0.2], [0.1]]),
        bias_initializer="zeros",
        input_shape=(4,),
    )
])
optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.1),
    tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=1024, increment_period=3),
)
model.compile(optimizer=optimizer, loss="mse")

recorder = _harness.Recorder()


class RecordSteps(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self.before = _harness.weights_of(self.model.trainable_variables)

    def on_train_batch_end(self, batch, logs=None):
        after = _harness.weights_of(self.model.trainable_variables)
        recorder.step_done(self.model.optimizer, self.before, after)


model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, callbacks=[RecordSteps()])
_harness.emit(recorder.result(model.optimizer, model.trainable_variables), args.json)
