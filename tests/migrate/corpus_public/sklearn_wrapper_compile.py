# Modelled on a public TF 2.x text-classifier wrapper (code-index id 15689932723: by its header and imports a late-2019 copy of HuggingFace's `transformers/pipelines.py`, its `TextClassificationPipeline`; the index names no repository for it, and which copy is not yet traced): a class compiles its model in a method, wrapping the Adam it made there when AMP is on.
import tensorflow as tf

USE_AMP = True


class TextClassifier:
    def __init__(self, model, learning_rate=3e-5, adam_epsilon=1e-8):
        self.model = model
        self.learning_rate = learning_rate
        self.adam_epsilon = adam_epsilon
        self.is_compiled = False

    def compile(self):
        opt = tf.keras.optimizers.Adam(learning_rate=self.learning_rate, epsilon=self.adam_epsilon)
        if USE_AMP:
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
        loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        metric = tf.keras.metrics.SparseCategoricalAccuracy("accuracy")
        self.model.compile(optimizer=opt, loss=loss, metrics=[metric])
        self.is_compiled = True

    def fit(self, x, y, epochs=1):
        if not self.is_compiled:
            self.compile()
        return self.model.fit(x, y, epochs=epochs)
