# Modelled on a public TF 2.x distributed classifier trainer (code-index id 12126985490; the index names no repository or path for it, and it is not yet traced to one): the optimizer set on `self` in `__init__`, wrapped by flag, and used in a per-replica step inside a `tf.function`.
import tensorflow as tf


class Trainer:
    def __init__(self, model, strategy, learning_rate, mixed_precision=False):
        self.model = model
        self.strategy = strategy
        self.mixed_precision = mixed_precision
        self.loss_metric = tf.keras.metrics.Mean()
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(reduction=tf.keras.losses.Reduction.NONE)
        with strategy.scope():
            self.optimizer = tf.keras.optimizers.Adam(learning_rate)
            if mixed_precision:
                self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.optimizer, "dynamic")

    def _compute_loss(self, labels, probs):
        per_example = self.loss_fn(labels, probs)
        return tf.nn.compute_average_loss(per_example)

    @tf.function
    def _distributed_train_step(self, dist_inputs):
        def train_step(inputs):
            with tf.GradientTape() as tape:
                probs = self.model(inputs[0], training=True)
                loss = self._compute_loss(inputs[1], probs)
                self.loss_metric.update_state(loss)
                if self.mixed_precision:
                    scaled_loss = self.optimizer.get_scaled_loss(loss)
            if self.mixed_precision:
                scaled_gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
                gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
            else:
                gradients = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
            return loss

        return self.strategy.run(train_step, args=(dist_inputs,))
