# Modelled on janilbols-w/ngc-tensorflow-collection@1f952e8d3556408f25f18c0d2dc842012c1bf956,
# nvidia-examples/cnn/nvutils/runner_ctl.py (TF 2.2-2.4 era): version-guarded private imports, a `keras` alias,
# a function-level import of the experimental module.
from packaging.version import Version

import tensorflow as tf
from tensorflow import keras

if Version(tf.__version__) >= Version("2.4.0"):
    from tensorflow.python.keras.mixed_precision import device_compatibility_check
else:
    from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check
device_compatibility_check._logged_compatibility_check = True


def set_precision(precision, loss_scale):
    """Sets the global policy for `precision`."""
    if precision == "fp16":
        from tensorflow.keras.mixed_precision import experimental as mixed_precision

        policy = mixed_precision.Policy("mixed_float16", loss_scale)
        mixed_precision.set_policy(policy)


def train_step(model, opt, images, labels, loss_func):
    with tf.GradientTape() as tape:
        loss = loss_func(labels, model(images, training=True))
        scaled = opt.get_scaled_loss(loss)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def build_optimizer(momentum):
    opt = keras.optimizers.SGD(learning_rate=0.1, momentum=momentum)
    return keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
