# Modelled on a public TF 2.x image trainer (code-index id 21891924627; the index names no repository or path for it, and it is not yet traced to one): the optimizer looked up in a dict by a command-line name, wrapped through the module alias when `--rtx` is given, then compiled.
import argparse

import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="adam")
parser.add_argument("--rtx", action="store_true")
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()

if args.rtx:
    mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))

schedule = tf.keras.optimizers.schedules.ExponentialDecay(args.lr, 1000, 0.9)
optimizers = {
    "sgd": tf.keras.optimizers.SGD(schedule, momentum=0.9),
    "adam": tf.keras.optimizers.Adam(args.lr),
    "rmsprop": tf.keras.optimizers.RMSprop(schedule),
}

opt = optimizers[args.optimizer]
if args.rtx:
    opt = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")

model = tf.keras.applications.ResNet50(weights=None, classes=10)
model.compile(optimizer=opt, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
