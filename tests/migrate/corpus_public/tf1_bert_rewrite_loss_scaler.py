# Modelled on a public TF1-style BERT optimization module (HuiResearch/tfbert@55d6b0d31828b7c3ffe46b8054aadb51786bb075, tfbert/optimization/create_optimizer.py; code-index id 6993908437): a `DynamicLossScale` built from flags, given to the graph rewrite with the optimizer, and its value exposed as a named tensor.
import tensorflow.compat.v1 as tf


def create_optimizer(learning_rate, optimizer_type="adam", mixed_precision=False, init_loss_scale=2 ** 32):
    if optimizer_type == "adam":
        optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate, epsilon=1e-6)
    elif optimizer_type == "momentum":
        optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)
    else:
        raise ValueError("Unsupported optimizer option: %s" % optimizer_type)

    if mixed_precision:
        loss_scaler = tf.train.experimental.DynamicLossScale(
            initial_loss_scale=init_loss_scale, increment_period=1000, multiplier=2.0)
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, loss_scaler)
        tf.identity(loss_scaler(), name="loss_scale")
    return optimizer


def create_train_op(optimizer, grads_and_vars, max_grad=1.0):
    global_step = tf.train.get_or_create_global_step()
    grads, tvars = zip(*grads_and_vars)
    grads, _ = tf.clip_by_global_norm(grads, clip_norm=max_grad)
    return optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
