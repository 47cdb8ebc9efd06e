# Modelled on a public TF 2.x metric-learning model (code-index id 35100672530; the index names no repository or path for it, and it is not yet traced to one): a Model subclass that asks `isinstance` of the experimental class around `tf.gradients`, inside its own `train_step`.
import tensorflow as tf


class ContrastiveModel(tf.keras.Model):
    def __init__(self, encoder, temperature=0.1):
        super().__init__()
        self.encoder = encoder
        self.temperature = temperature

    def _apply(self, total_loss):
        if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
            scaled_loss = self.optimizer.get_scaled_loss(total_loss)
        else:
            scaled_loss = total_loss
        scaled_gradients = tf.gradients(scaled_loss, self.trainable_variables)
        if isinstance(self.optimizer, tf.keras.mixed_precision.experimental.LossScaleOptimizer):
            gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
        else:
            gradients = scaled_gradients
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))

    @tf.function
    def train_step(self, data):
        data = data[0]
        features = self(data["x"], training=True)
        logits = tf.matmul(features, features, transpose_b=True) / self.temperature
        labels = tf.range(tf.shape(logits)[0])
        total_loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        self._apply(total_loss)
        return {"loss": total_loss}
