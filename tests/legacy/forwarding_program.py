"""A TF 2.4 program, for `lossscale-compat run`: the argument-forwarding cases of tests/goldens/forwarding_specs.py
on TF 2.4's own spellings of both loss-scale optimizer forms. Writes the results as JSON to the path given."""

import json
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens"))
import forwarding_specs  # noqa: E402

mixed_precision = tf.keras.mixed_precision
results = forwarding_specs.run_all(
    tf,
    mixed_precision.LossScaleOptimizer,
    mixed_precision.experimental.LossScaleOptimizer,
    tf.mixed_precision.experimental.DynamicLossScale,
)
with open(sys.argv[1], "w") as f:
    json.dump(results, f)
