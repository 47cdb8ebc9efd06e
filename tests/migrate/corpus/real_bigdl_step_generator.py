"""A helper that takes a model, a loss and a plain optimizer, rebinds the optimizer parameter to its loss-scale wrap,
and returns a `tf.function` training step that closes over it (scaled loss, unscaled gradients, apply).

Models intel-analytics/BigDL's `bigdl.nano.tf.keras` `mixedprecision_train_step_generator(model, loss, optimizer)`
(code index id 28239415841): function-local imports of TensorFlow and `mixed_precision`, `optimizer =
mixed_precision.LossScaleOptimizer(optimizer)` over the parameter, inputs cast before the tape, the step returned.
Written here with TF 2.4's experimental class and a dynamic loss scale, as a TF 2.4-era caller would. Pattern: a
parameter rebound to its wrap, read by a closure. Our own code.
"""


def make_mixed_step(model, loss_fn, optimizer, input_dtype="float16"):
    import tensorflow as tf
    from tensorflow.keras.mixed_precision import experimental as mixed_precision

    optimizer = mixed_precision.LossScaleOptimizer(optimizer, loss_scale="dynamic")

    @tf.function
    def step(features, labels):
        features = tf.cast(features, input_dtype)
        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss_value = loss_fn(labels, predictions)
            scaled = optimizer.get_scaled_loss(loss_value)
        scaled_gradients = tape.gradient(scaled, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss_value

    return step
