# Modelled on a public TF1-style Bi-LSTM sequence classifier script (code-index id 57681718090; the index names no repository or path for it, and it is not yet traced to one): a TF1 Adam handed to the graph rewrite, `minimize` with a global step, summaries merged.
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def build_graph(vocab_size, num_classes, lr, writer_path):
    x = tf.placeholder(tf.int32, [None, None], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    embedded = tf.reduce_mean(tf.keras.layers.Embedding(vocab_size, 64)(x), axis=1)
    logits = tf.keras.layers.Dense(num_classes)(embedded)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), "float"))
    tf.summary.scalar("loss", loss)
    global_step = tf.Variable(0, trainable=False, name="global_step")
    opt = tf.train.AdamOptimizer(lr)
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    train_step = opt.minimize(loss, global_step=global_step)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(writer_path, tf.get_default_graph())
    return dict(x=x, y=y, loss=loss, accuracy=accuracy, train_step=train_step, merged=merged, writer=writer)
