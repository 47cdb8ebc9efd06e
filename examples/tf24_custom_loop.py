"""A TF 2.4-era mixed-precision custom training loop, run unchanged on today's TensorFlow.

The only change from the TF 2.4 original is where `DynamicLossScale` comes from:
`lossscale_compat` today, `tf.mixed_precision.experimental` on TF 2.4.0.

    python examples/tf24_custom_loop.py           # train and print the loss-scale trajectory
    python examples/tf24_custom_loop.py --check   # ...and compare with what TF 2.4.0 did
    python examples/tf24_custom_loop.py --record  # on TF 2.4.0: write the golden
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

try:
    import lossscale_compat as loss_scale_api  # today's TensorFlow
except ImportError:  # TF 2.4.0, recording the golden
    loss_scale_api = tf.mixed_precision.experimental

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens", "tf24_custom_loop.json")


def data():
    """Deterministic regression data; batch 6 holds an outlier whose loss overflows float32."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(12, 8, 4)).astype("float32")
    y = (x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32")).astype("float32")
    x[6, 0, 0] = 1e20
    return x, y


def train(steps=12):
    x, y = data()
    kernel = tf.Variable(tf.zeros([4, 1]), name="kernel")
    loss_scale = loss_scale_api.DynamicLossScale(initial_loss_scale=2.0 ** 15, increment_period=3)
    learning_rate = 0.1

    @tf.function
    def step(features, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(features, kernel) - targets))
            # The loss goes through float16, as in a mixed_float16 model: a large scale overflows it.
            scaled_loss = tf.cast(loss, tf.float16) * tf.cast(loss_scale(), tf.float16)
        scaled_grads = tape.gradient(scaled_loss, [kernel])
        grads = [tf.cast(g, tf.float32) / loss_scale() for g in scaled_grads]
        _, should_apply = loss_scale.update(grads)
        if should_apply:
            kernel.assign_sub(learning_rate * grads[0])
        return loss, should_apply

    history = []
    for i in range(steps):
        loss, applied = step(x[i % len(x)], y[i % len(y)])
        history.append({"step": i, "loss": float(loss), "applied": bool(applied),
                        "loss_scale": float(loss_scale())})
    return {"history": history, "kernel": kernel.numpy().ravel().tolist()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the TF 2.4.0 golden")
    parser.add_argument("--record", action="store_true", help="write the golden (run on TF 2.4.0)")
    args = parser.parse_args(argv)
    result = train()
    for row in result["history"]:
        print("step {step:2d}  loss {loss:10.4f}  applied {applied!s:5}  loss scale {loss_scale:g}".format(**row))
    print("kernel", result["kernel"])
    if args.record:
        with open(GOLDEN, "w") as f:
            json.dump(dict(result, tensorflow=tf.__version__), f, indent=1)
            f.write("\n")
        return 0
    if args.check:
        with open(GOLDEN) as f:
            golden = json.load(f)
        same_trajectory = [(r["applied"], r["loss_scale"]) for r in result["history"]] == [
            (r["applied"], r["loss_scale"]) for r in golden["history"]]
        same_weights = np.allclose(result["kernel"], golden["kernel"], rtol=1e-5, atol=1e-6)
        print("TF {} golden: loss-scale trajectory and skipped steps {}, weights {}".format(
            golden["tensorflow"], "match" if same_trajectory else "DIFFER",
            "match" if same_weights else "DIFFER"))
        return 0 if same_trajectory and same_weights else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
