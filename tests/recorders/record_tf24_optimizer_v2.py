"""Records TF 2.4.0 training `OptimizerV2` optimizers, built-in and a custom subclass written against TF 2.4, in
both loss-scale optimizer forms (tests/goldens/optimizer_v2_programs.py).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_optimizer_v2.py

It writes tests/goldens/tf24_optimizer_v2.json: per case the state after each custom-loop step (eager and
tf.function), the hyperparameters read through the wrapper, the keys of a checkpoint, and a `fit`.
"""

import tempfile

import numpy as np
import tf24_recording
from tf24_recording import tf

import optimizer_v2_programs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)


def main():
    mixed_precision = tf.keras.mixed_precision
    with tempfile.TemporaryDirectory() as directory:
        cases = optimizer_v2_programs.run_all(
            tf, np, tf.keras.optimizers, mixed_precision.experimental.LossScaleOptimizer,
            mixed_precision.LossScaleOptimizer, tf.keras.optimizers.Optimizer, directory)
    tf24_recording.write_goldens("tf24_optimizer_v2.json", "record_tf24_optimizer_v2.py", {"cases": cases})


if __name__ == "__main__":
    main()
