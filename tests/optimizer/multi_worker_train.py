"""One worker of the MultiWorkerMirroredStrategy test: trains with our optimizer, writes what it saw.

Run by tests/optimizer/test_multi_worker.py as separate processes (TF_CONFIG says which worker this is),
or alone as the single-worker reference. Usage: multi_worker_train.py OUT.json
"""

import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import lossscale_compat  # noqa: E402

GLOBAL_BATCH = 8
STEPS = 6
BAD_STEP, BAD_ROW = 2, 5  # a NaN in the second half of the global batch: worker 1's share when there are two


def global_batches():
    rs = np.random.RandomState(0)
    for step in range(STEPS):
        x = rs.uniform(-1, 1, size=(GLOBAL_BATCH, 3)).astype("float32")
        y = (x @ np.array([[1.5], [-2.0], [0.5]], "float32")).astype("float32")
        if step == BAD_STEP:
            x[BAD_ROW, 0] = np.nan
        yield x, y


def main(out_path):
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    workers = strategy.num_replicas_in_sync
    worker = strategy.cluster_resolver.task_id if workers > 1 else 0
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
        model.set_weights([np.full((3, 1), 0.1, "float32"), np.zeros((1,), "float32")])
        optimizer = lossscale_compat.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.1), lossscale_compat.DynamicLossScale(initial_loss_scale=4, increment_period=2))
    variables = model.trainable_variables

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(model(x) - y)) / GLOBAL_BATCH
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        optimizer.apply_gradients(zip(grads, variables))

    @tf.function
    def step(x, y):
        strategy.run(replica_step, args=(x, y))

    share = GLOBAL_BATCH // workers
    history = []
    for x, y in global_batches():
        rows = slice(worker * share, (worker + 1) * share)
        step(tf.constant(x[rows]), tf.constant(y[rows]))
        history.append({"loss_scale": float(optimizer.loss_scale), "iterations": int(optimizer.iterations.numpy()),
                        "weights": [np.asarray(v.numpy()).ravel().tolist() for v in variables]})
    with open(out_path, "w") as f:
        json.dump({"workers": workers, "worker": worker, "history": history}, f)


if __name__ == "__main__":
    main(sys.argv[1])
