"""Writes tests/goldens/count_variable_ckpt/: checkpoints of our Keras 2 loss-scale optimizer in the layout this
package wrote until 2026-11-27, where the skipped-step count was a variable of its own (`optimizer/skipped_steps`
over a legacy inner optimizer, `optimizer/_skipped_steps` over today's), so that tests can check they still
restore. It must run with that older package on the path, and was run so, once, on TF 2.15:

    git worktree add /tmp/old 097478b
    PYTHONPATH=/tmp/old .nox/tests-stack-tf215-keras2/bin/python tests/recorders/write_count_variable_checkpoints.py

It writes each checkpoint's state beside it (state.json) for the tests to compare with.
"""

import json
import os

import tensorflow as tf

import lossscale_compat

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens", "count_variable_ckpt")
GRADIENTS = (float("nan"), 1.0, float("inf"), 0.5)


def main():
    assert "skipped_steps" in str(lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.5))
                                  ._trackable_children()), "run this with the package as of 097478b (see above)"
    os.makedirs(OUT, exist_ok=True)
    states = {}
    for name, inner in (("todays_inner", tf.keras.optimizers.SGD(0.5)),
                        ("legacy_inner", tf.keras.optimizers.legacy.SGD(0.5))):
        var = tf.Variable([1.0])
        opt = lossscale_compat.KerasLossScaleOptimizer(inner, initial_scale=4.0, dynamic_growth_steps=2)
        for gradient in GRADIENTS:
            opt.apply_gradients([(tf.constant([gradient]), var)])
        path = tf.train.Checkpoint(var=var, optimizer=opt).write(os.path.join(OUT, name))
        states[name] = {"skipped_steps": int(opt.skipped_steps), "iterations": int(opt.iterations),
                        "loss_scale": float(opt.loss_scale), "var": float(var.numpy()[0]),
                        "keys": sorted(n for n, _ in tf.train.list_variables(path))}
    with open(os.path.join(OUT, "state.json"), "w") as f:
        json.dump({"written_by": "lossscale_compat at 097478b, TF " + tf.__version__, "gradients": list(map(str, GRADIENTS)),
                   "states": states}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
