"""Records what TF 2.4.0 did when a loss-scale optimizer's checkpoint was restored into one that had already stepped.

Run it with Python 3.8 and tensorflow-cpu==2.4.0 (see docs/goldens.md), from the repository root:

    python tests/recorders/record_tf24_stepped_restore.py  # a Python 3.8 with tensorflow-cpu==2.4.0

The shape is a trainer's resume into a live job (TensorFlowTTS's `load_checkpoint`, OpenNMT-tf's `restore` called
again): a first job trains `LossScaleOptimizer(Adam(0.05), "dynamic")` over a dense layer for three batches and
saves `tf.train.Checkpoint(steps=..., optimizer=...)` (optimizer only) and, beside it, one that also holds the model.
A second job, a new model with the same starting weights and a new optimizer, takes two steps of its own (the second
overflows, so its scale halves) and then restores each checkpoint and trains three more batches (one overflows). The
checkpoint with the model is also restored without it (`model_saved_not_restored`: the model is in the file, not in
the restoring `tf.train.Checkpoint`). For each it writes, to tests/goldens/tf24_stepped_restore.json: `iterations`, the
loss scale and its counter, Adam's slots and the weights before the restore, right after it, and after the last step.
"""

import os
import tempfile

import tf24_recording
from tf24_recording import tf

import stepped_restore_program as program  # noqa: E402  (tests/goldens/, put on the path by tf24_recording)

FIRST_JOB, SECOND_JOB_OWN, AFTER_RESTORE, train = (
    program.FIRST_JOB,
    program.SECOND_JOB_OWN,
    program.AFTER_RESTORE,
    program.train,
)


def build():
    return program.build(lambda inner: tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic"))


def state(model, optimizer):
    """What the golden keeps of a job at one moment."""
    variables = model.trainable_variables
    return {
        "iterations": int(optimizer.iterations.numpy()),
        "loss_scale": float(optimizer.loss_scale.numpy()),
        "counter": int(optimizer.dynamic_counter.numpy()),
        "slots": {name: [optimizer.get_slot(v, name).numpy().tolist() for v in variables] for name in ("m", "v")},
        "weights": [w.tolist() for w in model.get_weights()],
    }


def record(with_model, directory, restore_model=None):
    model, optimizer = build()
    train(model, optimizer, FIRST_JOB)
    saved = {"model": model} if with_model else {}
    prefix = tf.train.Checkpoint(steps=tf.Variable(len(FIRST_JOB)), optimizer=optimizer, **saved).save(
        os.path.join(directory, "with_model" if with_model else "optimizer_only")
    )
    second_model, second = build()
    train(second_model, second, SECOND_JOB_OWN)
    result = {"saved": state(model, optimizer), "before_restore": state(second_model, second)}
    restored = {"model": second_model} if (with_model if restore_model is None else restore_model) else {}
    tf.train.Checkpoint(steps=tf.Variable(0), optimizer=second, **restored).restore(prefix)
    result["after_restore"] = state(second_model, second)
    train(second_model, second, AFTER_RESTORE)
    result["after_training"] = state(second_model, second)
    return result


with tempfile.TemporaryDirectory() as tmp:
    data = {
        "batches": {"first_job": FIRST_JOB, "second_job_own": SECOND_JOB_OWN, "after_restore": AFTER_RESTORE},
        "optimizer_only": record(False, tmp),
        "with_model": record(True, tmp),
        "model_saved_not_restored": record(True, tmp, restore_model=False),
    }
tf24_recording.write_goldens("tf24_stepped_restore.json", "record_tf24_stepped_restore.py", data)
