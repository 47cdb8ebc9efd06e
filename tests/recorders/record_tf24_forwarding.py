"""Records what TF 2.4.0's Keras loss-scale optimizers passed on to inner optimizers that override their methods.

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/tf24/bin/python tests/recorders/record_tf24_forwarding.py

For both forms (`tf.keras.mixed_precision.LossScaleOptimizer` and the experimental one), over the inner optimizers of
tests/goldens/forwarding_specs.py, it writes to tests/goldens/tf24_forwarding.json each step's weights, loss scale
and `iterations`, and every call the inner optimizer's overridden methods received (positional and keyword
arguments): `apply_gradients` called in several ways, `minimize`, `get_gradients` and `_aggregate_gradients`.
"""


import tf24_recording
from tf24_recording import tf

import forwarding_specs as specs

MP = tf.keras.mixed_precision


def main():
    results = specs.run_all(
        tf, MP.LossScaleOptimizer, MP.experimental.LossScaleOptimizer, tf.mixed_precision.experimental.DynamicLossScale
    )
    tf24_recording.write_goldens("tf24_forwarding.json", "record_tf24_forwarding.py", results)


if __name__ == "__main__":
    main()
