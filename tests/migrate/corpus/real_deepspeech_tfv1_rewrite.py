"""A TF1-graph speech trainer that imports `tensorflow.compat.v1` as `tfv1` and turns on the graph rewrite through
that alias, on a TF1 optimizer, before building per-tower gradients and a `global_step` `apply_gradients`.

Models mozilla/DeepSpeech, training/deepspeech_training/train.py at commit 0030cab22078592134ce9950c8e6fb603af0679b
(`import tensorflow as tf`, `import tensorflow.compat.v1 as tfv1`; `train()`: `optimizer =
create_optimizer(learning_rate_var)` (a `tfv1.train.AdamOptimizer`); `if FLAGS.automatic_mixed_precision: optimizer =
tfv1.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)`; `get_tower_results(iterator, optimizer,
...)` calls `optimizer.compute_gradients(avg_loss)` per tower; `optimizer.apply_gradients(avg_tower_gradients,
global_step=global_step)`; a `tfv1.Session` loop). Pattern: the `tfv1` module alias, the graph rewrite on a TF1
optimizer with the default loss scale, `compute_gradients` on the wrapped optimizer. Our own code, a linear model
on placeholders.
"""

import tensorflow as tf
import tensorflow.compat.v1 as tfv1


def create_optimizer(learning_rate_tensor):
    return tfv1.train.AdamOptimizer(learning_rate=learning_rate_tensor, beta1=0.9, beta2=0.999, epsilon=1e-8)


def tower_gradients(optimizer, features, labels, num_towers):
    tower_grads = []
    losses = []
    with tfv1.variable_scope(tfv1.get_variable_scope()):
        for i in range(num_towers):
            with tf.name_scope("tower_%d" % i):
                weights = tfv1.get_variable("w", shape=[8, 1], initializer=tfv1.zeros_initializer())
                prediction = tf.matmul(features, weights)
                loss = tf.reduce_mean(tf.square(prediction - labels))
                tower_grads.append(optimizer.compute_gradients(loss))
                losses.append(loss)
                tfv1.get_variable_scope().reuse_variables()
    return tower_grads, tf.reduce_mean(losses)


def average_gradients(tower_grads):
    averaged = []
    for grads_and_vars in zip(*tower_grads):
        grads = [g for g, _ in grads_and_vars]
        averaged.append((tf.reduce_mean(tf.stack(grads), axis=0), grads_and_vars[0][1]))
    return averaged


def train(flags, batches):
    tfv1.disable_eager_execution()
    features = tfv1.placeholder(tf.float32, [None, 8])
    labels = tfv1.placeholder(tf.float32, [None, 1])
    learning_rate_var = tfv1.get_variable("learning_rate", initializer=flags.learning_rate, trainable=False)
    optimizer = create_optimizer(learning_rate_var)

    if flags.automatic_mixed_precision:
        optimizer = tfv1.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)

    gradients, loss = tower_gradients(optimizer, features, labels, flags.num_towers)
    avg_gradients = average_gradients(gradients)
    global_step = tfv1.train.get_or_create_global_step()
    apply_gradient_op = optimizer.apply_gradients(avg_gradients, global_step=global_step)
    saver = tfv1.train.Saver(max_to_keep=3)

    with tfv1.Session() as session:
        session.run(tfv1.global_variables_initializer())
        for x, y in batches:
            _, step, batch_loss = session.run([apply_gradient_op, global_step, loss], feed_dict={features: x, labels: y})
        saver.save(session, flags.checkpoint_path, global_step=global_step)
    return batch_loss
