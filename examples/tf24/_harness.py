"""Stack-neutral plumbing shared by the TF 2.4-era example programs: flags, state readers, JSON out."""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402


def parse_args(doc, writes_checkpoint=False):
    """Returns the parsed flags of an example program: `--json PATH`, and `--write-checkpoint` if it takes one."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the result here (default: stdout)")
    if writes_checkpoint:
        parser.add_argument("--write-checkpoint", action="store_true",
                            help="first write the checkpoint it resumes from (TF 2.4.0 only)")
    return parser.parse_args()


def current_loss_scale(optimizer):
    """Returns the optimizer's loss scale as a float on TF 2.4, tf_keras and Keras 3 alike."""
    for attribute in ("dynamic_scale", "loss_scale", "loss_scale_factor"):
        value = getattr(optimizer, attribute, None)
        if value is not None:
            value = value() if callable(value) else value
            return float(np.asarray(value))
    return None


def weights_of(variables):
    """Returns the variables' values as float32 numpy arrays."""
    return [np.array(v.numpy(), dtype=np.float32) for v in variables]


def same_weights(before, after):
    """Returns whether two weight lists are bit-identical (a skipped step changes nothing)."""
    return all(np.array_equal(a, b) for a, b in zip(before, after))


class Recorder:
    """Collects the per-step loss scale and skips, then the final state."""

    def __init__(self):
        self.loss_scales = []
        self.skipped = []
        self.steps = 0

    def step_done(self, optimizer, before, after):
        """Records one optimizer step given the weights before and after it."""
        if same_weights(before, after):
            self.skipped.append(self.steps)
        self.loss_scales.append(current_loss_scale(optimizer))
        self.steps += 1

    def result(self, optimizer, variables, **extra):
        """Returns the JSON-ready result of a run."""
        import tensorflow as tf

        out = {
            "steps": self.steps,
            "loss_scale": self.loss_scales,
            "skipped": self.skipped,
            "iterations": int(optimizer.iterations.numpy()),
            "weights": [w.ravel().tolist() for w in weights_of(variables)],
            "tensorflow": tf.__version__,
        }
        out.update(extra)
        return out


def record_loop(step, variables, optimizer, features, targets):
    """Runs `step(x, y)` on each batch and returns the run's result; `optimizer` gives the optimizer (a callable, read
    after each step)."""
    recorder = Recorder()
    for x, y in zip(features, targets):
        before = weights_of(variables)
        step(x, y)
        recorder.step_done(optimizer(), before, weights_of(variables))
    return recorder.result(optimizer(), variables)


def emit(result, path):
    """Writes `result` as JSON to `path`, or to stdout."""
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def recording_callback(recorder):
    """Returns a Keras callback that records each `fit` batch of its model's optimizer into `recorder`."""
    import tensorflow as tf

    class RecordSteps(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.before = weights_of(self.model.trainable_variables)

        def on_train_batch_end(self, batch, logs=None):
            recorder.step_done(self.model.optimizer, self.before, weights_of(self.model.trainable_variables))

    return RecordSteps()


def initial_weights(model, seed):
    """Sets `model`'s weights to seeded uniform values, the same on every stack; returns them."""
    rng = np.random.RandomState(seed)
    values = [rng.uniform(-0.5, 0.5, size=w.shape).astype("float32") for w in model.get_weights()]
    model.set_weights(values)
    return values
