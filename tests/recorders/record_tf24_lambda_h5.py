"""Writes tests/goldens/tf24_lambda_model.h5: TF 2.4.0's `model.save()` of a compiled model with a Lambda layer.

The lambda, if it ever runs, creates the file `lossscale_compat_lambda_ran` in the working directory, so a
test can check that loading refused it before running it. Run with TF 2.4.0's Python from the repository root:
`/work/tf24/bin/python tests/recorders/record_tf24_lambda_h5.py`. Keep it Python 3.8 compatible.
"""

import os

import tf24_recording  # noqa: F401  (sets up TF 2.4.0; makes tests/goldens importable)
from tf24_recording import GOLDENS, tf

MARKER = "lossscale_compat_lambda_ran"


def main():
    mp = tf.keras.mixed_precision.experimental
    model = tf.keras.Sequential([
        tf.keras.Input((3,)),
        tf.keras.layers.Lambda(lambda x: (__import__("pathlib").Path("lossscale_compat_lambda_ran").touch(), x)[1]),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), "dynamic"), loss="mse")
    path = os.path.join(GOLDENS, "tf24_lambda_model.h5")
    model.save(path)
    if os.path.exists(MARKER):  # made while building the model above, not by the saved file
        os.remove(MARKER)
    print("wrote", path)


if __name__ == "__main__":
    main()
