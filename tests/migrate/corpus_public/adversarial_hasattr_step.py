# Modelled on a public TF 2.x adversarial text-training model (code-index id 7029508655; the index names no repository or path for it, and it is not yet traced to one): a `train_step` that scales through `self.optimizer` only when it has `get_scaled_loss`, compiled with a wrapped optimizer.
import tensorflow as tf


class AdversarialModel(tf.keras.Model):
    epsilon = 1.0

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        embedding_gradients = tape.gradient(loss, [self.trainable_variables[0]])[0]
        delta = self.epsilon * embedding_gradients / (tf.norm(embedding_gradients) + 1e-8)
        self.trainable_variables[0].assign_add(delta)
        with tf.GradientTape() as tape2:
            y_pred = self(x, training=True)
            new_loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            if hasattr(self.optimizer, "get_scaled_loss"):
                new_loss = self.optimizer.get_scaled_loss(new_loss)
        gradients = tape2.gradient(new_loss, self.trainable_variables)
        if hasattr(self.optimizer, "get_unscaled_gradients"):
            gradients = self.optimizer.get_unscaled_gradients(gradients)
        self.trainable_variables[0].assign_sub(delta)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def compile_model(model, learning_rate):
    optimizer = tf.keras.optimizers.Adam(learning_rate)
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
    model.compile(optimizer=optimizer, loss="binary_crossentropy", metrics=["accuracy"])
    return model
