# Modelled on a public TF 2.x discrete soft actor-critic agent (code-index id 3147593555; the index names no repository or path for it, and it is not yet traced to one): a Q-network optimizer wrapped in the constructor, a scaled Huber loss, gradients unscaled, clipped by norm, applied.
import tensorflow as tf


class DQN:
    def __init__(self, q_net, target_net, lr=1e-4, gamma=0.99, gradient_clipping=True, clip_norm=10.0):
        self.q_net = q_net
        self.target_net = target_net
        self.gamma = gamma
        self.gradient_clipping = gradient_clipping
        self.clip_norm = clip_norm
        qf_optimizer = tf.keras.optimizers.Adam(lr)
        self.qf_optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(qf_optimizer, loss_scale="dynamic")

    @tf.function
    def update(self, obs, acts, rews, next_obs, dones):
        qf_optimizer = self.qf_optimizer
        target_q = rews + self.gamma * (1.0 - dones) * tf.reduce_max(self.target_net(next_obs), axis=1)
        with tf.GradientTape() as tape:
            q = self.q_net(obs)
            q_selected = tf.gather_nd(q, tf.expand_dims(acts, axis=1), batch_dims=1)
            q_loss = tf.reduce_mean(tf.keras.losses.huber(target_q, q_selected))
            scaled_q_loss = qf_optimizer.get_scaled_loss(q_loss + tf.reduce_sum(self.q_net.losses))
        scaled_gradients = tape.gradient(scaled_q_loss, self.q_net.trainable_weights)
        gradients = qf_optimizer.get_unscaled_gradients(scaled_gradients)
        if self.gradient_clipping:
            gradients, _ = tf.clip_by_global_norm(gradients, self.clip_norm)
        qf_optimizer.apply_gradients(zip(gradients, self.q_net.trainable_weights))
        return q_loss
