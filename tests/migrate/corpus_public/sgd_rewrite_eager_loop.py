# Modelled on a public TF 2.x resumed-training script (code-index id 13293434183; the index names no repository or path for it, and it is not yet traced to one): a Keras SGD handed to the graph rewrite at module level, then a hand-written epoch/batch loop that applies gradients.
import argparse
import time

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--learning_rate", type=float, default=0.1)
parser.add_argument("--epoch_start", type=int, default=0)
parser.add_argument("--epoch_end", type=int, default=2)
args = parser.parse_args()

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.SGD(learning_rate=args.learning_rate)
opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)


def train_batch(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(args.epoch_start, args.epoch_end):
    started = time.time()
    for batch_num in range(4):
        x = tf.random.normal((8, 4))
        train_batch(x, tf.reduce_sum(x, axis=1, keepdims=True))
    print("epoch", epoch, time.time() - started)
