"""Records what TF 2.4.0 did when a LossScaleOptimizer(SGD with momentum) checkpoint was restored into another optimizer.

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    /work/venvs/tf24/bin/python tests/recorders/record_tf24_cross_restore.py

It trains a variable for two steps with TF 2.4.0's `LossScaleOptimizer(SGD(0.1, momentum=0.9))`, saves
`tf.train.Checkpoint(optimizer=..., var=...)`, and restores that into a `LossScaleOptimizer(Adam(0.01))` and into a
plain `SGD(0.5, momentum=0.9)`. For each it writes, to tests/goldens/tf24_cross_restore.json: whether the restore
raised, what `assert_consumed` and `assert_existing_objects_matched` said, the Python warnings and the TensorFlow log
lines, and the learning rate, iterations and slots (after one step with zero gradients, which moves the variable by
the momentum alone) that the target ended up with.
"""

import logging
import os
import tempfile
import warnings

import tf24_recording
from tf24_recording import tf

TARGETS = {
    "LossScaleOptimizer(Adam(0.01))": lambda: tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.Adam(0.01)
    ),
    "SGD(0.5, momentum=0.9)": lambda: tf.keras.optimizers.SGD(0.5, momentum=0.9),
}


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _source(directory):
    var = tf.Variable([1.0, 2.0], name="var")
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1, momentum=0.9))
    for grads in ([1.0, 1.0], [0.5, 0.25]):
        optimizer.apply_gradients([(tf.constant(grads), var)])
    prefix = tf.train.Checkpoint(optimizer=optimizer, var=var).save(os.path.join(directory, "ckpt"))
    momentum = optimizer.get_slot(var, "momentum")
    return prefix, {
        "var": var.numpy().tolist(),
        "momentum_slot": momentum.numpy().tolist(),
        "keys": sorted(name for name, _ in tf.train.list_variables(prefix)),
    }


def _assertion(status, method):
    try:
        getattr(status, method)()
    except AssertionError as error:
        return {"raised": "AssertionError", "message": str(error).splitlines()[0]}
    return {"raised": None}


def _restore_into(name, build, prefix):
    lines = _Lines()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(lines)
    var = tf.Variable([0.0, 0.0], name="var")
    optimizer = build()
    result = {"target": name}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            checkpoint = tf.train.Checkpoint(optimizer=optimizer, var=var)
            status = checkpoint.restore(prefix)
        except Exception as error:  # noqa: BLE001 - what TF 2.4 raised is the recording
            result["restore_raised"] = {"type": type(error).__name__, "message": str(error).splitlines()[0]}
            logger.removeHandler(lines)
            return result
        result["restore_raised"] = None
        result["assert_existing_objects_matched"] = _assertion(status, "assert_existing_objects_matched")
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        result["after_restore"] = {
            "var": var.numpy().tolist(),
            "learning_rate": float(tf.keras.backend.get_value(inner.learning_rate)),
            "iterations": int(inner.iterations.numpy()),
        }
        optimizer.apply_gradients([(tf.constant([0.0, 0.0]), var)])
        result["assert_consumed"] = _assertion(status, "assert_consumed")
        result["after_one_zero_step"] = {
            "var": var.numpy().tolist(),
            "iterations": int(inner.iterations.numpy()),
            "slots": {slot: inner.get_slot(var, slot).numpy().tolist() for slot in inner.get_slot_names()},
        }
        del checkpoint, status, optimizer  # TF 2.4 logs unrestored values when the checkpoint is deleted
        import gc

        gc.collect()
    result["python_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    result["tensorflow_log"] = lines.lines
    logger.removeHandler(lines)
    return result


def main():
    with tempfile.TemporaryDirectory() as directory:
        prefix, source = _source(directory)
        restores = [_restore_into(name, build, prefix) for name, build in TARGETS.items()]
    tf24_recording.write_goldens("tf24_cross_restore.json", "record_tf24_cross_restore.py", {
        "source": dict(source, optimizer="LossScaleOptimizer(SGD(0.1, momentum=0.9))"),
        "restores": restores,
    })

if __name__ == "__main__":
    main()
