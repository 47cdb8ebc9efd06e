# Modelled on two public TF1-style Estimator trainers seen through the code index (`find_string` ids 46202997132
# and 12691909959; the index names no repository): TF's automatic mixed precision on a `tf.compat.v1` Adam with
# `loss_scale='dynamic'`, and per-head `tf.train.experimental.DynamicLossScale()` objects wrapped by TF1's
# `MixedPrecisionLossScaleOptimizer`, each under a flag.
import tensorflow as tf


def wide_optimizer(amp, lr=0.2):
    opt = tf.compat.v1.train.FtrlOptimizer(learning_rate=lr)
    if amp:
        loss_scale = tf.train.experimental.DynamicLossScale()
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    return opt


def model_fn(features, labels, mode, params):
    logits = tf.compat.v1.layers.dense(features["x"], 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode != tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss)
    solver = tf.compat.v1.train.AdamOptimizer(learning_rate=params["lr"])
    solver = tf.train.experimental.enable_mixed_precision_graph_rewrite(solver, loss_scale="dynamic")
    grads_and_vars = solver.compute_gradients(loss)
    train_op = solver.apply_gradients(grads_and_vars, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
