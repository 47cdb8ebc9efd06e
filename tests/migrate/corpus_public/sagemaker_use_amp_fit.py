# Modelled on a public SageMaker TF 2.x fine-tuning entry point (code-index id 1373190327; the index names no repository or path for it, and it is not yet traced to one): the Adam wrapped under a `use_amp` argument between prints, then compiled and fitted with callbacks.
import tensorflow as tf


def train(model, train_ds, valid_ds, learning_rate, epsilon, use_amp, epochs, checkpoint_path):
    callbacks = []
    if checkpoint_path:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(checkpoint_path, save_weights_only=True))

    optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate, epsilon=epsilon)
    print("use_amp {}".format(use_amp))
    if use_amp:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")

    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    metric = tf.keras.metrics.SparseCategoricalAccuracy("accuracy")
    model.compile(optimizer=optimizer, loss=loss, metrics=[metric])
    return model.fit(train_ds, validation_data=valid_ds, epochs=epochs, callbacks=callbacks)
