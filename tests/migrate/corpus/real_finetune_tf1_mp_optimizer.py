"""A TF1-style `optimize_loss` that wraps a custom `tf.compat.v1`-era optimizer class (looked up in a dict) in
`tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer` with a `DynamicLossScale` built inline through
the same `tf.compat.v1.train.experimental` path, then applies `tf.gradients` output itself.

Models IndicoDataSolutions/finetune, finetune/util/optimize_loss.py (the version stored in our search index; the
index lists commit c845d77f5aa238a10f9cf8f23ca95f98f7211877 for that path): `get_optimizer(...)`: `Optimizer =
OPTIMIZERS.get(optimizer_name)`, `opt = Optimizer(learning_rate=..., weight_decay=..., decay_var_list=...)`, `if
mixed_precision: opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(opt,
tf.compat.v1.train.experimental.DynamicLossScale(increment_period=100))`; `optimize_loss` computes
`tf.gradients(ys=loss, xs=variables)`, clips, and calls `opt.apply_gradients(gradients, name="train")` under a
`global_step.assign_add(1)` control dependency. Pattern: the v1 loss-scale optimizer with a positional loss-scale
object, a class chosen from a dict, gradients not taken from the wrapper. Our own code.
"""

import tensorflow as tf


class DecoupledAdam(tf.compat.v1.train.AdamOptimizer):
    def __init__(self, learning_rate, weight_decay=0.0, decay_var_list=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.weight_decay = weight_decay
        self.decay_var_list = decay_var_list or []


OPTIMIZERS = {"AdamW": DecoupledAdam, "SGD": tf.compat.v1.train.GradientDescentOptimizer}


def get_optimizer(optimizer_name, learning_rate, l2_reg, mixed_precision):
    Optimizer = OPTIMIZERS.get(optimizer_name, None)
    if Optimizer is None:
        raise ValueError("Unknown optimizer {}".format(optimizer_name))
    decay_var_list = [v for v in tf.compat.v1.global_variables() if len(v.get_shape()) > 1]
    if Optimizer is DecoupledAdam:
        opt = Optimizer(learning_rate=learning_rate, weight_decay=l2_reg * learning_rate, decay_var_list=decay_var_list)
    else:
        opt = Optimizer(learning_rate)
    if mixed_precision:
        opt = tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
            opt,
            tf.compat.v1.train.experimental.DynamicLossScale(
                increment_period=100
            ),
        )
    return opt


def optimize_loss(loss, learning_rate, optimizer_name, clip_norm, l2_reg, mixed_precision):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    with tf.compat.v1.variable_scope("OptimizeLoss", [loss, global_step]):
        tf.compat.v1.summary.scalar("loss", loss)
        opt = get_optimizer(optimizer_name, learning_rate, l2_reg, mixed_precision)
        variables = tf.compat.v1.trainable_variables()
        gradients = list(zip(tf.gradients(ys=loss, xs=variables, name="gradients"), variables))
        grads, variables = zip(*gradients)
        clipped, _ = tf.clip_by_global_norm(grads, clip_norm)
        with tf.compat.v1.control_dependencies([global_step.assign_add(1)]):
            return opt.apply_gradients(list(zip(clipped, variables)), name="train")
