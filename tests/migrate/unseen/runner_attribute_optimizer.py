# Modelled on a public self-supervised runner seen through the code index (`find_string` id 36709953613; the index
# names no repository): an addons AdamW on an attribute, wrapped by flag through the experimental module's alias
# with `loss_scale='dynamic'`, its learning rate and weight decay reassigned each epoch, and a tape step that scales
# and unscales only when the flag is on.
import tensorflow as tf
import tensorflow_addons as tfa
from tensorflow.keras.mixed_precision import experimental as mixed_precision


class Runner:
    def __init__(self, model, amp, weight_decay=1e-4):
        self.model = model
        self.amp = amp
        self.weight_decay = weight_decay
        self.optim = tfa.optimizers.AdamW(weight_decay=weight_decay, lr=0.0)
        if amp:
            self.optim = mixed_precision.LossScaleOptimizer(self.optim, loss_scale="dynamic")

    def begin_epoch(self, lr):
        self.optim.learning_rate = lr
        self.optim.weight_decay = self.weight_decay * lr

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, self.model(x), True))
            if self.amp:
                loss = self.optim.get_scaled_loss(loss)
        grads = tape.gradient(loss, self.model.trainable_weights)
        if self.amp:
            grads = self.optim.get_unscaled_gradients(grads)
        self.optim.apply_gradients(zip(grads, self.model.trainable_weights))
        return loss
