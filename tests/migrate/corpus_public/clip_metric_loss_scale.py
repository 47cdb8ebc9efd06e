# Modelled on a public TF 2.x vertebrae-segmentation training loop (christianpayer/MedicalDataAugmentationTool-VerSe@f5ce1338c6a9e6a19e3d249634cc4a804e823a77, verse2020/training/main_vertebrae_segmentation.py; code-index id 20912012994): an optimizer wrapped in the constructor when mixed precision is on; the step unscales, clips by norm and reports the loss scale among its metrics.
import tensorflow as tf


class Learner:
    def __init__(self, network, learning_rate, use_mixed_precision=False):
        self.network = network
        self.use_mixed_precision = use_mixed_precision
        self.optimizer = tf.keras.optimizers.Adam(learning_rate)
        if use_mixed_precision:
            self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.optimizer, "dynamic")

    @tf.function
    def step(self, batch, clip_norm=40.0):
        metric_dict = {}
        variables = self.network.trainable_variables
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.network(batch["obs"]) - batch["target"]))
            if self.use_mixed_precision:
                scaled_loss = self.optimizer.get_scaled_loss(loss)
        if self.use_mixed_precision:
            scaled_grads = tape.gradient(scaled_loss, variables)
            grads = self.optimizer.get_unscaled_gradients(scaled_grads)
            grads, norm = tf.clip_by_global_norm(grads, clip_norm)
            metric_dict.update({"loss_scale": self.optimizer.loss_scale()})
        else:
            grads = tape.gradient(loss, variables)
            grads, norm = tf.clip_by_global_norm(grads, clip_norm)
        self.optimizer.apply_gradients(zip(grads, variables))
        metric_dict.update({"loss": loss, "grad_norm": norm})
        return metric_dict
