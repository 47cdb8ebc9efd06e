# Modelled on a public bert4keras reading-comprehension (QA) script (code-index id 40746424659; the index names no repository or path for it, and it is not yet traced to one): a Keras Adam made at module level and handed straight to the graph rewrite ("AMP"), compiled later with the model.
import tensorflow as tf
from tensorflow.keras.optimizers import Adam

learning_rate = 2e-5

opt = Adam(learning_rate)
opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)


def build(encoder, num_labels):
    outputs = tf.keras.layers.Dense(num_labels, activation="softmax")(encoder.output)
    model = tf.keras.Model(encoder.input, outputs)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=opt)
    return model
