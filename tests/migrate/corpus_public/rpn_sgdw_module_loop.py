# Modelled on a public TF 2.x region-proposal training script (code-index id 33282177073; the index names no repository or path for it, and it is not yet traced to one): an addons SGDW wrapped at module level, a `tf.function` step with relaxed shapes that scales and unscales.
import tensorflow as tf
import tensorflow_addons as tfa


def make_model():
    return tf.keras.Sequential([tf.keras.layers.Conv2D(8, 3), tf.keras.layers.GlobalAveragePooling2D()])


model = make_model()
opt = tfa.optimizers.SGDW(1e-4, 1e-2)
opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")


@tf.function(experimental_relax_shapes=True)
def train_step(inputs):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(inputs))
        scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def run(dataset, steps):
    for step, batch in enumerate(dataset.take(steps)):
        loss = train_step(batch)
        if step % 10 == 0:
            print(step, float(loss))
