"""tensorflow/models' image classifier trainer: a Policy whose loss scale comes from the config reaches `compile`,
and training resumes at the epoch `model.optimizer.iterations // train_steps` gives.

Models tensorflow/models: official/vision/image_classification/classifier_trainer.py at commit
8a9194dc851ba85666d5ce30400f9102809e108f (`initialize`: `performance.set_mixed_precision_policy(dtype,
get_loss_scale(params))`; `model.compile(optimizer=optimizer, loss=..., metrics=...)` with an unwrapped optimizer;
`resume_from_checkpoint`: `initial_epoch = model.optimizer.iterations // train_steps`; `model.fit(...,
initial_epoch=initial_epoch)`) and official/modeling/performance.py at commit
3b998e4f279a41d7490eb270a697b17e80e6fd38 (`Policy('mixed_float16', loss_scale=loss_scale)` + `set_policy`).
Our own code: a small dense classifier on synthetic data, repeated `tf.data` input as the trainer's input builder
gives it (`steps_per_epoch` with NumPy arrays and `initial_epoch` runs an epoch short on Keras 3.0-3.5), with the
run split where a preempted job resumes.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")


def set_mixed_precision_policy(dtype, loss_scale=None):
    """Sets the global policy for a compute dtype."""
    if dtype == tf.float16:
        policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=loss_scale)
        tf.keras.mixed_precision.experimental.set_policy(policy)
    elif dtype == tf.float32:
        tf.keras.mixed_precision.experimental.set_policy('float32')
    else:
        raise ValueError('Unexpected dtype: %s' % dtype)


def get_loss_scale(params):
    """The runtime's loss scale: 'dynamic', a number, or None."""
    loss_scale = params['runtime']['loss_scale']
    if loss_scale == 'dynamic':
        return loss_scale
    elif loss_scale is not None:
        return float(loss_scale)
    return None


def resume_epoch(model, train_steps):
    """The epoch a resumed job starts at, from the optimizer's step count."""
    initial_epoch = model.optimizer.iterations // train_steps
    return int(initial_epoch)


params = {'runtime': {'loss_scale': 'dynamic'}, 'train': {'epochs': 3, 'steps': 4}}
set_mixed_precision_policy(tf.float16, get_loss_scale(params))

model = tf.keras.Sequential([
    tf.keras.layers.Dense(12, activation='relu', input_shape=(5,)),
    tf.keras.layers.Dense(3),
    tf.keras.layers.Activation('softmax', dtype='float32'),
])
_harness.initial_weights(model, seed=61)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(), metrics=['accuracy'])

rng = np.random.RandomState(62)
x = rng.uniform(-1, 1, size=(32, 5)).astype('float32')
y = rng.randint(0, 3, size=(32,)).astype('int64')
x[9, 4] = 1e5  # overflows float16: the second step of each epoch is skipped and the scale halves

recorder = _harness.Recorder()
train_steps = params['train']['steps']
callback = _harness.recording_callback(recorder)
train_dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat()  # as the trainer's input builder
model.fit(train_dataset, epochs=1, steps_per_epoch=train_steps, verbose=0, callbacks=[callback])
initial_epoch = resume_epoch(model, train_steps)  # the job is preempted here and resumes
model.fit(train_dataset, epochs=params['train']['epochs'], steps_per_epoch=train_steps,
          initial_epoch=initial_epoch, verbose=0, callbacks=[callback])

result = recorder.result(model.optimizer, model.trainable_variables, initial_epoch=initial_epoch)
set_mixed_precision_policy(tf.float32)
_harness.emit(result, args.json)
