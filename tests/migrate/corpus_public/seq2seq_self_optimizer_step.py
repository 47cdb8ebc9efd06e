# Modelled on a public TF 2.x seq2seq model (code-index id 63089871410; the index names no repository or path for it, and it is not yet traced to one): a Model subclass whose own step scales with `self.optimizer`, compiled with a wrapped Adam under a global float16 policy.
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))


class Seq2Seq(tf.keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.train_metric = tf.keras.metrics.SparseCategoricalAccuracy()

    def _train_step(self, inputs):
        source, target = inputs
        with tf.GradientTape() as tape:
            state = self.encoder(source, training=True)
            logits = self.decoder([target[:, :-1], state], training=True)
            loss = self.compiled_loss(target[:, 1:], logits)
            scaled_loss = self.optimizer.get_scaled_loss(loss)
        scaled_grads = tape.gradient(scaled_loss, self.trainable_variables)
        grads = self.optimizer.get_unscaled_gradients(scaled_grads)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.train_metric.update_state(target[:, 1:], logits)
        return {"loss": loss, "accuracy": self.train_metric.result()}

    def train_step(self, data):
        return self._train_step(data)


def build(encoder, decoder):
    model = Seq2Seq(encoder, decoder)
    opt = tf.keras.optimizers.Adam(1e-3)
    opt = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")
    model.compile(optimizer=opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model
