# Modelled on a public TF 2.x reranker (code index, find_string id 31294375273): an Estimator model_fn with a
# GradientTape step, an addons optimizer on a decaying schedule sharing the global step, wrapped for float16 by flag.
import tensorflow as tf
import tensorflow_addons as tfa
from absl import flags

FLAGS = flags.FLAGS


def build_train_op(model, features, labels, training):
    """The loss and train op of one step; float16 runs scale the loss."""
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(
        FLAGS.learning_rate, decay_steps=FLAGS.decay_steps, decay_rate=0.96, staircase=True
    )
    optimizer = tfa.optimizers.LazyAdam(schedule)
    optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
    if FLAGS.use_float16:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale="dynamic")

    with tf.GradientTape() as tape:
        logits = model(features, training=training)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        loss += tf.add_n(model.losses) if model.losses else 0.0
        if FLAGS.use_float16:
            scaled = optimizer.get_scaled_loss(loss)

    variables = model.trainable_variables
    if FLAGS.use_float16:
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
    else:
        grads = tape.gradient(loss, variables)
    step = optimizer.apply_gradients(zip(grads, variables))
    return loss, tf.group([step, tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)])


def model_fn(features, labels, mode, params):
    model = params["build_model"]()
    loss, train_op = build_train_op(model, features, labels, mode == tf.estimator.ModeKeys.TRAIN)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
