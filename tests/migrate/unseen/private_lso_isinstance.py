# Modelled on a public gradient-inspection helper seen through the code index (`find_string` id 41362912303; the
# index names no repository): TF 2.4's private `loss_scale_optimizer` module imported as `lso`, and `isinstance`
# checks against its class around a replica of Keras' own train step.
import tensorflow as tf
from tensorflow.python.keras.mixed_precision.experimental import (
    loss_scale_optimizer as lso)


def gradients_of(model, x, y, params):
    """The gradients `fit` would apply for one batch, unscaled."""
    optimizer = model.optimizer
    with tf.GradientTape() as tape:
        loss = model.compiled_loss(y, model(x, training=True), regularization_losses=model.losses)
        if isinstance(optimizer, lso.LossScaleOptimizer):
            loss = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(loss, params)
    if isinstance(optimizer, lso.LossScaleOptimizer):
        grads = optimizer.get_unscaled_gradients(grads)
    return [g.numpy() for g in grads]
