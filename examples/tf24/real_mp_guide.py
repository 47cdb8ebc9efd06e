"""The TF 2.4 mixed-precision guide's flow: a module alias, a Policy, `fit`, then a custom loop with its own optimizer.

Models tensorflow/docs, site/en/guide/mixed_precision.ipynb at commit 98ab6704b16b4293662d12157df10e3596db181e
(2020-12-03): `from tensorflow.keras.mixed_precision import experimental as mixed_precision`, `Policy` +
`set_policy`, `policy.loss_scale` read in a print, `Policy('mixed_float16', loss_scale=1024)`, `compile` wrapping
the optimizer from the policy, and a `tf.function` loop over `LossScaleOptimizer(optimizer, loss_scale='dynamic')`.
Our own code, small synthetic data (MNIST replaced by 8 features, 4 classes), and SGD for the guide's RMSprop:
RMSprop's normalisation turns the float16 kernels' rounding of near-zero gradients into learning-rate-sized steps.
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
from tensorflow.keras.mixed_precision import experimental as mixed_precision

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

policy = mixed_precision.Policy('mixed_float16')
mixed_precision.set_policy(policy)
print('Compute dtype: %s' % policy.compute_dtype)
print('Variable dtype: %s' % policy.variable_dtype)

inputs = keras.Input(shape=(8,), name='digits')
dense1 = layers.Dense(16, activation='relu', name='dense_1')
x = dense1(inputs)
x = layers.Dense(4, name='dense_logits')(x)
outputs = layers.Activation('softmax', dtype='float32', name='predictions')(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(loss='sparse_categorical_crossentropy', optimizer=keras.optimizers.SGD(learning_rate=0.5),
              metrics=['accuracy'])

rng = np.random.RandomState(11)
x_train = rng.uniform(0, 1, size=(64, 8)).astype('float32')
y_train = (x_train[:, :4].argmax(axis=1)).astype('int64')
x_train[21, 3] = 7e4  # overflows float16 in dense_1: that batch's gradients are not finite and the step is skipped

initial_weights = _harness.initial_weights(model, seed=12)
fit_recorder = _harness.Recorder()
model.fit(x_train, y_train, batch_size=16, epochs=2, shuffle=False, verbose=0,
          callbacks=[_harness.recording_callback(fit_recorder)])
fit_result = fit_recorder.result(model.optimizer, model.trainable_variables)

loss_scale = policy.loss_scale
print('Loss scale: %s' % loss_scale)
new_policy = mixed_precision.Policy('mixed_float16', loss_scale=1024)
print(new_policy.loss_scale)

optimizer = keras.optimizers.SGD(learning_rate=0.5)
optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale='dynamic')
loss_object = tf.keras.losses.SparseCategoricalCrossentropy()
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


model.set_weights(initial_weights)
loop_recorder = _harness.Recorder()
for epoch in range(2):
    epoch_loss_avg = tf.keras.metrics.Mean()
    for x, y in train_dataset:
        before = _harness.weights_of(model.trainable_variables)
        loss = train_step(x, y)
        epoch_loss_avg(loss)
        loop_recorder.step_done(optimizer, before, _harness.weights_of(model.trainable_variables))
    print('Epoch {}: loss={}'.format(epoch, epoch_loss_avg.result()))

result = {"fit": fit_result, "loop": loop_recorder.result(optimizer, model.trainable_variables),
          "tensorflow": tf.__version__}
mixed_precision.set_policy('float32')
_harness.emit(result, args.json)
