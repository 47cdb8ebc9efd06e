# Modelled on a public Horovod TF 2.x ResNet-50 synthetic benchmark (aws-samples/deep-learning-models@4967e8830e18f5997c7851050a419fb44f2c4083, models/resnet/tensorflow2/train_tf2_resnet.py; code-index id 14497866363): the optimizer passed into a step function as a parameter, scaled only when not fp32.
import horovod.tensorflow as hvd
import tensorflow as tf


@tf.function
def train_step(model, opt, loss_func, images, labels, first_batch, fp32=False):
    with tf.GradientTape() as tape:
        probs = model(images, training=True)
        loss_value = loss_func(labels, probs)
        if not fp32:
            scaled_loss = opt.get_scaled_loss(loss_value)
    tape = hvd.DistributedGradientTape(tape)
    if fp32:
        grads = tape.gradient(loss_value, model.trainable_variables)
    else:
        grads = opt.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
    opt.apply_gradients(zip(grads, model.trainable_variables))
    if first_batch:
        hvd.broadcast_variables(model.variables, root_rank=0)
        hvd.broadcast_variables(opt.variables(), root_rank=0)
    return loss_value


def main(flags, ds):
    hvd.init()
    model = tf.keras.applications.ResNet50(weights=None, classes=1000)
    opt = tf.keras.optimizers.SGD(learning_rate=flags.learning_rate * hvd.size(), momentum=0.1)
    if not flags.fp32:
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")
    loss_func = tf.keras.losses.SparseCategoricalCrossentropy()
    for batch, (images, labels) in enumerate(ds):
        loss = train_step(model, opt, loss_func, images, labels, batch == 0, flags.fp32)
        if hvd.local_rank() == 0 and batch % 10 == 0:
            print(batch, float(loss))
