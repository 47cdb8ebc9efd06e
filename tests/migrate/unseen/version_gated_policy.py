# Modelled on a public Horovod elastic MNIST trainer seen through the code index (`find_string` id 1068509980; the
# index names no repository): the stable policy API behind a `LooseVersion(tf.__version__) >= "2.4.0"` check, TF
# 2.4's experimental one in the `else`, at module level under a command-line flag.
import argparse
from distutils.version import LooseVersion

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--use-mixed-precision", action="store_true")
args = parser.parse_args([])

if args.use_mixed_precision:
    if LooseVersion(tf.__version__) >= LooseVersion("2.4.0"):
        from tensorflow.keras import mixed_precision

        mixed_precision.set_global_policy("mixed_float16")
    else:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
        tf.keras.mixed_precision.experimental.set_policy(policy)

model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10, activation="softmax")])
model.compile(loss="sparse_categorical_crossentropy", optimizer=tf.optimizers.Adam(1e-3))
