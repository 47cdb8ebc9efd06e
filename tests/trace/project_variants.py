"""Copies of examples/project for the record/compare proof: as it is, or with one deliberate change.

Shared by tests/trace and tests/recorders/record_tf24_project_traces.py; keep it Python 3.8 compatible.
"""

import os
import shutil

PROJECT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "project")
# change -> (text of train.py, its replacement, how many times it occurs)
CHANGES = {
    # Another learning rate in the custom loop (both of its optimizers: before and after the checkpoint).
    "learning rate": ("SGD(learning_rate=0.05, momentum=0.9)", "SGD(learning_rate=0.04, momentum=0.9)", 2),
    # The custom loop applies the scaled gradients: get_unscaled_gradients dropped.
    "no unscaling": ("gradients = optimizer.get_unscaled_gradients(scaled_gradients)",
                     "gradients = scaled_gradients", 1),
    # `fit`'s learning rate decays with `iterations`, which TF 2.4 advanced on skipped steps too.
    "schedule": ("SGD(learning_rate=0.05), loss=",
                 "SGD(learning_rate=tf.keras.optimizers.schedules.InverseTimeDecay(0.05, 1, 0.5)), loss=", 1),
}


def copy_project(destination, change=None):
    """Copies the project's sources to `destination`, with `change` (a key of CHANGES) made; returns train.py."""
    shutil.copytree(PROJECT, destination, ignore=shutil.ignore_patterns("*.json", "*.jsonl", "__pycache__"))
    train = os.path.join(destination, "train.py")
    if change is not None:
        old, new, count = CHANGES[change]
        with open(train) as f:
            source = f.read()
        assert source.count(old) == count, "examples/project/train.py changed: update CHANGES[%r]" % change
        with open(train, "w") as f:
            f.write(source.replace(old, new))
    return train
