# Modelled on a public Horovod TF 2.x MNIST example with AMP (code-index id 26667375581; the index names no repository or path for it, and it is not yet traced to one): the experimental module imported as `mixed_precision`, the Adam scaled by worker count and wrapped by flag at module level, a `tf.function` step.
import argparse

import horovod.tensorflow as hvd
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

parser = argparse.ArgumentParser()
parser.add_argument("--use-amp", action="store_true")
args = parser.parse_args()

hvd.init()
if args.use_amp:
    mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))

mnist_model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10, activation="softmax", dtype="float32"),
])
loss = tf.losses.SparseCategoricalCrossentropy()

opt = tf.optimizers.Adam(0.001 * hvd.size())
if args.use_amp:
    opt = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")


@tf.function
def training_step(images, labels, first_batch):
    with tf.GradientTape() as tape:
        probs = mnist_model(images, training=True)
        loss_value = loss(labels, probs)
        scaled_loss = opt.get_scaled_loss(loss_value)
    tape = hvd.DistributedGradientTape(tape)
    scaled_grads = tape.gradient(scaled_loss, mnist_model.trainable_variables)
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients(zip(grads, mnist_model.trainable_variables))
    if first_batch:
        hvd.broadcast_variables(mnist_model.variables, root_rank=0)
        hvd.broadcast_variables(opt.variables(), root_rank=0)
    return loss_value
