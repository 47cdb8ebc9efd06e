"""Loss-scale observability: the scale and the skipped steps of any loss-scale optimizer, in `fit` and custom loops."""

from __future__ import annotations

import logging
import os
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour

_LOG = logging.getLogger("lossscale_compat")
# A dynamic scale at or below this has nothing left to give: TF 2.4's floor (Keras 3 has none).
_FLOOR = 1.0


def loss_scale_metrics(optimizer: Any) -> dict[str, tf.Tensor]:
    """The optimizer's `loss_scale` (float32) and, where it counts them, `skipped_steps` (int64), as tensors.

    Works on ours and on Keras 3's, tf_keras's and Keras 2's own loss-scale optimizers, eagerly or
    inside a `tf.function`.
    """
    scale = _flavour.current_loss_scale(optimizer)
    if scale is None:
        raise ValueError(
            f"{type(optimizer).__name__} scales no loss. Pass the loss-scale optimizer (e.g. "
            "`model.optimizer` after compiling under a mixed_float16 policy), not its inner optimizer."
        )
    metrics = {"loss_scale": scale}
    skipped = getattr(optimizer, "skipped_steps", None)
    if skipped is not None:
        metrics["skipped_steps"] = tf.convert_to_tensor(skipped)
    return metrics


def write_loss_scale_summaries(optimizer: Any, step: Any = None) -> None:
    """Writes `loss_scale_metrics(optimizer)` with `tf.summary.scalar` at `step` (default: `optimizer.iterations`)."""
    step = optimizer.iterations if step is None else step
    for name, value in loss_scale_metrics(optimizer).items():
        tf.summary.scalar(name, value, step=step)


class _Reading:
    """One host-side reading of an optimizer's scale, counter, skipped steps and iterations."""

    def __init__(self, optimizer: Any) -> None:
        self.scale = float(_flavour.current_loss_scale(optimizer))
        state = _flavour.loss_scale_state_variables(optimizer)
        self.counter = None if state is None or state[1] is None else int(state[1].numpy())
        skipped = getattr(optimizer, "skipped_steps", None)
        self.skipped = None if skipped is None else int(skipped.numpy())
        self.iterations = int(optimizer.iterations.numpy())


def _skipped_between(before: _Reading, after: _Reading) -> int:
    """Steps skipped between two readings: counted where the optimizer counts them, else derived from the scale.

    A dynamic scale halves on every skipped step and its counter restarts at 0, so a drop in the scale, or
    an unchanged scale with a counter back at 0, is a skip. Readings are taken once per batch; with
    `steps_per_execution` above 1 a derived count is a lower bound.
    """
    if after.skipped is not None and before.skipped is not None:
        return after.skipped - before.skipped
    if after.scale < before.scale:
        return 1
    return int(after.scale == before.scale and after.counter == 0 and before.counter is not None)


def _make_log_dir(log_dir: Any) -> None:
    """Makes `log_dir` now, so that a directory that cannot be written fails here, not when `fit` starts."""
    if not isinstance(log_dir, (str, os.PathLike)) or not os.fspath(log_dir):
        raise ValueError(
            f"LossScaleMonitor(log_dir={log_dir!r}) names no directory. Pass a directory for the TensorBoard "
            "event files, such as log_dir='logs/scale', or log_dir=None to only add the numbers to fit's logs."
        )
    path = os.fspath(log_dir)
    if "://" in str(path):  # gs://, s3://, hdfs://: TensorFlow's file systems, checked by TensorFlow
        return
    try:
        os.makedirs(path, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(f"Permission denied: {path!r}")
    except OSError as error:
        raise ValueError(
            f"LossScaleMonitor(log_dir={log_dir!r}) cannot write there: {error.strerror or error}. Pass a directory "
            "you can write to, or log_dir=None to only add the numbers to fit's logs."
        ) from error


class LossScaleMonitor(_flavour.keras_callback_class()):  # type: ignore[misc]
    """Adds `loss_scale` and `skipped_steps` to `fit`'s logs, writes them to TensorBoard, and stops divergence.

    With `log_dir`, it writes per step the loss scale and the total of skipped steps, and per epoch the
    steps skipped in it and how often the scale rose and fell. With `stop_after_skipped=N`, training
    stops once N steps in a row were skipped with the scale at its floor of 1: nothing is being learned.
    """

    def __init__(self, log_dir: str | None = None, stop_after_skipped: int | None = None) -> None:
        super().__init__()
        if stop_after_skipped is not None and (
            isinstance(stop_after_skipped, bool) or not isinstance(stop_after_skipped, int) or stop_after_skipped < 1
        ):
            raise ValueError(
                f"`stop_after_skipped` must be a positive int (a number of steps) or None, got {stop_after_skipped!r}."
            )
        if log_dir is not None and not _flavour.has_summary_writing():
            raise ImportError(
                "LossScaleMonitor(log_dir=...) writes TensorBoard event files, which needs the "
                "tensorboard package: `pip install tensorboard` (or lossscale-compat[tensorboard]), "
                "or pass log_dir=None to only add the numbers to fit's logs."
            )
        if log_dir is not None:
            _make_log_dir(log_dir)
        self.log_dir = log_dir
        self.stop_after_skipped = stop_after_skipped
        self.stop_reason: str | None = None
        self.skipped_steps = 0
        self._writer: Any = None

    def on_train_begin(self, logs: Any = None) -> None:
        optimizer = self.model.optimizer
        if _flavour.current_loss_scale(optimizer) is None:
            raise ValueError(
                f"LossScaleMonitor needs a loss-scale optimizer, but the model trains with "
                f"{type(optimizer).__name__}. Compile under a mixed_float16 policy, or wrap the "
                "optimizer in a LossScaleOptimizer."
            )
        self._last = _Reading(optimizer)
        self.skipped_steps, self._streak = 0, 0
        if self.log_dir is not None and self._writer is None:
            self._writer = tf.summary.create_file_writer(self.log_dir)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._epoch = {"skipped": 0, "increases": 0, "decreases": 0}

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        now = _Reading(self.model.optimizer)
        skipped = _skipped_between(self._last, now)
        self.skipped_steps += skipped
        self._epoch["skipped"] += skipped
        self._epoch["increases"] += int(now.scale > self._last.scale)
        self._epoch["decreases"] += int(now.scale < self._last.scale)
        applied = now.iterations - self._last.iterations
        if _flavour.skips_advance_iterations(self.model.optimizer):
            applied -= skipped
        self._streak = self._streak + skipped if skipped and not applied and now.scale <= _FLOOR else 0
        self._last = now
        if logs is not None:
            logs.update(loss_scale=now.scale, skipped_steps=self.skipped_steps)
        self._write({"loss_scale": now.scale, "skipped_steps": self.skipped_steps}, now.iterations)
        if self.stop_after_skipped is not None and self._streak >= self.stop_after_skipped:
            self._stop(now)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if logs is not None:
            logs.update(loss_scale=self._last.scale, skipped_steps=self.skipped_steps)
        epoch_counts = {
            "skipped_steps_per_epoch": self._epoch["skipped"],
            "loss_scale_increases": self._epoch["increases"],
            "loss_scale_decreases": self._epoch["decreases"],
        }
        self._write(epoch_counts, epoch, flush=True)

    def on_train_end(self, logs: Any = None) -> None:
        self._write({}, 0, flush=True)

    def _write(self, scalars: dict[str, Any], step: Any, flush: bool = False) -> None:
        """Writes `scalars` to the event file; a write error (a full disk) is logged once and training goes on."""
        if self._writer is None:
            return
        try:
            with self._writer.as_default():
                for tag, value in scalars.items():
                    tf.summary.scalar(tag, value, step=step)
            if flush:
                self._writer.flush()
        except OSError as error:
            self._writer = None
            _LOG.warning(
                "LossScaleMonitor stopped writing to log_dir=%r: %s. Training goes on and fit's logs still get the "
                "numbers; free space there, or pass another log_dir.",
                self.log_dir,
                error.strerror or error,
            )

    def _stop(self, now: _Reading) -> None:
        self.model.stop_training = True
        self.stop_reason = (
            f"Training stopped at step {now.iterations}: the last {self._streak} steps were all skipped because "
            f"their gradients were inf or NaN, with the loss scale at its floor ({now.scale:g}), so the weights "
            "have not changed. Training has diverged: the loss or gradients are non-finite even unscaled. Check "
            "the learning rate, the input data for inf/NaN, and that the last layer and the loss compute in "
            "float32 under mixed_float16 (`dtype='float32'` on the output layer)."
        )
        _LOG.warning(self.stop_reason)
