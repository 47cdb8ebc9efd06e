"""Records what TF 2.4.0 did in the custom loop that the codemod rewrites on an untraced receiver (issue 9).

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /tmp/tf24/bin/python tests/recorders/record_tf24_untraced_loop.py

It runs `specs.UNTRACED_LOOP` on TF 2.4.0's `tf.keras.mixed_precision.LossScaleOptimizer` over
`specs.UNTRACED_LOOP_BATCHES` and writes the weights and loss scale after each batch to
tests/goldens/untraced_loop.json, for tests/migrate/test_real_code_runs.py.
"""

import json
import os
import runpy
import sys
import tempfile

import tf24_recording
from tf24_recording import tf

import specs  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)


def main():
    settings = specs.UNTRACED_LOOP_OPTIMIZER
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(settings["learning_rate"]),
        initial_scale=settings["initial_scale"],
        dynamic_growth_steps=settings["dynamic_growth_steps"],
    )
    w = tf.Variable(specs.UNTRACED_LOOP_WEIGHTS, name="w")
    with tempfile.TemporaryDirectory() as tmp:  # a file, as the test runs it: autograph reads the loop's source
        path = os.path.join(tmp, "untraced_loop.py")
        with open(path, "w") as f:
            f.write(specs.UNTRACED_LOOP)
        steps = specs.run_untraced_loop(tf, runpy.run_path(path)["train"], optimizer, w)
    goldens = {
        "meta": {"tensorflow": tf.__version__, "git_version": tf.version.GIT_VERSION,
                 "python": sys.version.split()[0], "recorded_by": "tests/recorders/record_tf24_untraced_loop.py"},
        "steps": steps,
    }
    with open(os.path.join(tf24_recording.GOLDENS, "untraced_loop.json"), "w") as f:
        json.dump(goldens, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
