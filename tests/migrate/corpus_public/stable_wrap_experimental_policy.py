# Modelled on a public TF 2.x sentiment benchmark (code-index id 40597288368; the index names no repository or path for it, and it is not yet traced to one): TF 2.4's stable wrapper and, a few lines later, the experimental policy, both under the same `data_type` switch, then compile and a timed fit.
import time

import tensorflow as tf


def run(model, x_train, y_train, data_type, batch_size, n_epochs):
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.BinaryCrossentropy()

    if data_type == "mixed":
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

    if data_type == "mixed":
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
        tf.keras.mixed_precision.experimental.set_policy(policy)

    model.compile(loss=loss_fn, optimizer=optimizer, metrics=["accuracy"])
    start = time.time()
    model.fit(x_train, y_train, batch_size=batch_size, epochs=n_epochs, verbose=0)
    return time.time() - start
