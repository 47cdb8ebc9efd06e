"""`fit` over a finite input of exactly `steps_per_epoch` batches, for several epochs: TF 2.4 started the input again
at each epoch and ran every epoch in full.

Shaped as a Model Garden-style classifier (a `mixed_float16` policy, `compile`, a `tf.data` input built with
`from_tensor_slices(...).batch(...)` and no `.repeat()`, `steps_per_epoch` set to its number of batches), and as a
transformer trained with `fit` on NumPy arrays with `batch_size` and `steps_per_epoch`. One example overflows float16,
so a step of each epoch is skipped.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

BATCH, BATCHES = 4, 5
tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

rng = np.random.RandomState(91)
x = rng.uniform(-1, 1, size=(BATCH * BATCHES, 6)).astype("float32")
y = rng.randint(0, 3, size=(BATCH * BATCHES,)).astype("int64")
x[2 * BATCH + 1, 3] = 1e5  # the third batch of each epoch overflows float16: skipped


def run(inputs, epochs):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(3),
        tf.keras.layers.Activation("softmax", dtype="float32"),
    ])
    _harness.initial_weights(model, seed=92)
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy())
    recorder = _harness.Recorder()
    model.fit(*inputs, epochs=epochs, steps_per_epoch=BATCHES, shuffle=False, verbose=0,
              callbacks=[_harness.recording_callback(recorder)])
    return recorder.result(model.optimizer, model.trainable_variables)


result = {
    "dataset": run([tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)], epochs=3),
    "arrays": run([x, y, BATCH], epochs=2),
    "tensorflow": tf.__version__,
}
tf.keras.mixed_precision.experimental.set_policy("float32")
_harness.emit(result, args.json)
