"""A TF 2.4-era program reading and setting an optimizer's learning rate the ways TF 2.4 allowed.

Each read goes through a plain optimizer, the experimental `LossScaleOptimizer(opt, loss_scale)` and the
non-experimental `LossScaleOptimizer(opt)`: `float(opt.lr)`, `opt.lr.numpy()`, `tf.keras.backend.get_value` and
`set_value`, `opt.lr = x`, `opt.learning_rate.assign(x)`, and a schedule's `opt.learning_rate(step)` and `opt.lr(step)`. Each result is
the value read, or the name of the error raised.
"""

import tensorflow as tf

import _harness

K = tf.keras.backend


def attempt(read):
    """Returns `read()` as a float, or the name of the exception it raised."""
    try:
        return float(read())
    except Exception as error:  # noqa: BLE001 - which error TF 2.4 raised is part of the record
        return type(error).__name__


def constant_reads(wrap):
    """The reads and writes of a constant learning rate through `wrap(SGD(0.1))`."""
    opt = wrap(tf.keras.optimizers.SGD(learning_rate=0.1))
    out = {
        "float_lr": attempt(lambda: float(opt.lr)),
        "float_learning_rate": attempt(lambda: float(opt.learning_rate)),
        "lr_numpy": attempt(lambda: opt.lr.numpy()),
        "get_value_lr": attempt(lambda: K.get_value(opt.lr)),
        "get_value_learning_rate": attempt(lambda: K.get_value(opt.learning_rate)),
    }
    out["after_set_value"] = attempt(lambda: (K.set_value(opt.lr, 0.2), float(opt.lr))[1])
    opt.lr = 0.05
    out["after_lr_assignment"] = attempt(lambda: float(opt.lr))
    out["after_lr_assignment_get_value"] = attempt(lambda: K.get_value(opt.learning_rate))
    opt.learning_rate.assign(0.07)
    out["after_assign"] = attempt(lambda: float(opt.lr))
    out["after_assign_numpy"] = attempt(lambda: opt.learning_rate.numpy())
    opt.learning_rate = 0.03
    out["after_learning_rate_assignment"] = attempt(lambda: K.get_value(opt.lr))
    return out


def schedule_reads(wrap):
    """A schedule's `opt.learning_rate(step)` through `wrap(SGD(schedule))`."""
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    opt = wrap(tf.keras.optimizers.SGD(learning_rate=schedule))
    out = {"step_%d" % step: attempt(lambda step=step: opt.learning_rate(step)) for step in (0, 5, 10, 20)}
    out.update({"lr_step_%d" % step: attempt(lambda step=step: opt.lr(step)) for step in (0, 5, 10, 20)})
    return out


WRAPS = {
    "plain": lambda opt: opt,
    "experimental_lso": lambda opt: tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic"),
    "lso": lambda opt: tf.keras.mixed_precision.LossScaleOptimizer(opt),
}



def reads(wraps):
    """Every read through each of `wraps` (name -> function wrapping a new optimizer)."""
    return {name: dict(constant_reads(wrap), schedule=schedule_reads(wrap)) for name, wrap in wraps.items()}


if __name__ == "__main__":
    args = _harness.parse_args(__doc__)
    tf.config.set_visible_devices([], "GPU")
    _harness.emit(dict(reads(WRAPS), tensorflow=tf.__version__), args.json)
