# Modelled on a public TF 2.x BERT classifier script (SerigneCisse/bert-finetune@32357094fb31b6aa111b003ce26983528593ac1d, bert_training_margin.py; code-index id 4292319043): a third-party RAdam built with `lr=`, wrapped under a module flag inside the model factory, then compiled.
import bert
import tensorflow as tf
from tensorflow.keras import layers

USE_AMP = True
LEARNING_RATE = 2e-5
NUM_CLASSES = 3


def create_model(encoder, max_len):
    tokens = layers.Input(shape=(max_len,), dtype="int32")
    hidden = encoder(tokens)
    hidden = layers.Dropout(0.1)(hidden)
    hidden = layers.Flatten()(layers.Conv1D(64, 1)(hidden))
    outputs = layers.Dense(NUM_CLASSES, activation="softmax", dtype="float32")(hidden)
    model = tf.keras.Model(inputs=tokens, outputs=outputs)

    optimizer = bert.optimizer.RAdam(lr=LEARNING_RATE)
    if USE_AMP:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")

    model.compile(loss="sparse_categorical_crossentropy", optimizer=optimizer, metrics=["accuracy"])
    return model


def warmup(epoch, warmup_epochs=2):
    return LEARNING_RATE * min(1.0, (epoch + 1) / warmup_epochs)


def train(encoder, x, y):
    model = create_model(encoder, x.shape[1])
    schedule = tf.keras.callbacks.LearningRateScheduler(warmup)
    model.fit(x, y, epochs=3, callbacks=[schedule])
