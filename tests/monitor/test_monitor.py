"""Skipped steps and the loss scale made visible: `skipped_steps`, `LossScaleMonitor`, and the custom-loop calls."""

import errno
import logging
import os

import numpy as np
import pytest
import tensorflow as tf
from tf24_optimizers import KERAS3

import lossscale_compat
from lossscale_compat import _flavour


def data(bad_rows=(), rows=64):
    """A linear problem; each bad row overflows its batch's loss, so that step is skipped."""
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, size=(rows, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
    for row in bad_rows:
        x[row, 0] = 1e30
    return x, y


def stack_native_optimizer(inner):
    """The stack's own loss-scale optimizer (Keras 3's, tf_keras's or Keras 2's), which counts nothing."""
    return _flavour.keras_loss_scale_optimizer()(inner, initial_scale=8.0, dynamic_growth_steps=2)


OPTIMIZERS = {
    "ours": lambda: lossscale_compat.KerasLossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05), initial_scale=8.0, dynamic_growth_steps=2
    ),
    "stack's own": lambda: stack_native_optimizer(tf.keras.optimizers.SGD(0.05)),
}


class WeightsWatcher(tf.keras.callbacks.Callback):
    """The ground truth: a skipped step leaves every weight bit-identical."""

    def __init__(self):
        super().__init__()
        self.skipped, self.logged = [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.before = [w.numpy() for w in self.model.trainable_weights]

    def on_train_batch_end(self, batch, logs=None):
        after = [w.numpy() for w in self.model.trainable_weights]
        self.skipped.append(all(np.array_equal(a, b) for a, b in zip(self.before, after)))
        self.logged.append((logs["loss_scale"], logs["skipped_steps"]))


def fit(optimizer, callbacks, bad_rows, epochs=2):
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
    x, y = data(bad_rows)
    history = model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks)
    return model, history


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_fit_logs_the_scale_and_every_skipped_step(kind):
    """Per batch and per epoch (progress bar and History), against weights that did not move."""
    optimizer = OPTIMIZERS[kind]()
    watcher = WeightsWatcher()
    model, history = fit(optimizer, [lossscale_compat.LossScaleMonitor(), watcher], bad_rows=(9, 30, 41))
    skips = list(np.cumsum(watcher.skipped))
    assert len(watcher.logged) == len(skips) == 16
    assert [count for _, count in watcher.logged] == skips
    assert skips[-1] == 6  # three bad batches in each of two epochs
    assert [scale for scale, _ in watcher.logged][-1] == float(_flavour.current_loss_scale(model.optimizer))
    assert history.history["skipped_steps"] == [3, 6]
    assert len(history.history["loss_scale"]) == 2
    if kind == "ours":
        assert int(model.optimizer.skipped_steps) == 6


@pytest.mark.tf_checkpoint
def test_our_optimizer_counts_skips_in_a_checkpointed_variable_under_xla(tmp_path):
    optimizer, variable = OPTIMIZERS["ours"](), tf.Variable([1.0, 2.0])

    @tf.function(jit_compile=True)
    def step(grad):
        optimizer.apply_gradients([(grad, variable)])

    for grad in ([1.0, 1.0], [np.inf, 1.0], [1.0, 0.5], [np.nan, 0.0]):
        step(tf.constant(grad))
    assert int(optimizer.skipped_steps) == 2
    prefix = tf.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "ckpt"))
    restored = OPTIMIZERS["ours"]()
    assert int(restored.skipped_steps) == 0
    tf.train.Checkpoint(optimizer=restored).restore(prefix)
    assert int(restored.skipped_steps) == 2


def test_skipped_steps_are_counted_once_under_mirrored_strategy(mirrored):
    with mirrored.scope():
        optimizer, layer = OPTIMIZERS["ours"](), tf.keras.layers.Dense(1)
        layer.build((None, 2))
    variables = layer.trainable_variables

    @tf.function
    def step(value):
        def replica():
            optimizer.apply_gradients([(tf.fill(v.shape, value), v) for v in variables])

        mirrored.run(replica)

    for value in (np.inf, 1.0, np.nan):
        step(tf.constant(value))
    assert int(optimizer.skipped_steps.numpy()) == 2


def test_tensorboard_event_files_hold_the_scale_the_skips_and_the_epoch_counts(tmp_path):
    monitor = lossscale_compat.LossScaleMonitor(log_dir=str(tmp_path))
    watcher = WeightsWatcher()
    fit(OPTIMIZERS["ours"](), [monitor, watcher], bad_rows=(9,), epochs=1)
    scalars = read_scalars(tmp_path)
    assert [value for _, value in scalars["skipped_steps"]] == list(np.cumsum(watcher.skipped))
    assert [value for _, value in scalars["loss_scale"]] == [scale for scale, _ in watcher.logged]
    assert [step for step, _ in scalars["loss_scale"]] == list(range(1, 9))
    assert scalars["skipped_steps_per_epoch"] == [(0, 1)]
    scales = [8.0] + [scale for scale, _ in watcher.logged]
    increases = sum(b > a for a, b in zip(scales, scales[1:]))
    decreases = sum(b < a for a, b in zip(scales, scales[1:]))
    assert increases and decreases, "the run must grow and cut the scale, or the counts prove nothing"
    assert scalars["loss_scale_increases"] == [(0, increases)]
    assert scalars["loss_scale_decreases"] == [(0, decreases)]


def read_scalars(log_dir):
    """{tag: [(step, value), ...]} read back from the event files under `log_dir`."""
    scalars = {}
    for path in sorted(tf.io.gfile.glob(str(log_dir / "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                scalars.setdefault(value.tag, []).append((event.step, float(tf.make_ndarray(value.tensor))))
    return scalars


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_a_diverged_run_is_stopped_with_the_step_and_what_to_check(kind, caplog):
    """Every batch overflows: the scale falls to its floor and each step is skipped; the run stops there."""
    monitor = lossscale_compat.LossScaleMonitor(stop_after_skipped=3)
    model, history = fit(OPTIMIZERS[kind](), [monitor], bad_rows=range(0, 64, 8), epochs=5)
    assert model.stop_training
    assert len(history.history["loss"]) == 1  # stopped in the first of five epochs
    step = int(model.optimizer.iterations.numpy())  # Keras <= 3.2's variables have no __int__
    assert step < 8
    assert f"Training stopped at step {step}" in monitor.stop_reason
    assert "learning rate" in monitor.stop_reason
    assert monitor.stop_reason in caplog.text


def test_a_healthy_run_is_not_stopped():
    monitor = lossscale_compat.LossScaleMonitor(stop_after_skipped=1)
    model, history = fit(OPTIMIZERS["ours"](), [monitor], bad_rows=(9,), epochs=2)
    assert monitor.stop_reason is None and len(history.history["loss"]) == 2


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "3"])
def test_stop_after_skipped_must_be_a_positive_int(value):
    with pytest.raises(ValueError, match="positive int"):
        lossscale_compat.LossScaleMonitor(stop_after_skipped=value)


def test_a_model_without_loss_scaling_is_an_error_that_says_what_to_do():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    x, y = data()
    with pytest.raises(ValueError, match="needs a loss-scale optimizer.*mixed_float16"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[lossscale_compat.LossScaleMonitor()])


def test_custom_loops_read_and_write_the_same_numbers_inside_tf_function(tmp_path):
    optimizer, variable = OPTIMIZERS["ours"](), tf.Variable([1.0, 2.0])
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function(jit_compile=True)
    def step(grad):
        optimizer.apply_gradients([(grad, variable)])
        return lossscale_compat.loss_scale_metrics(optimizer)

    @tf.function
    def log():
        with writer.as_default():
            lossscale_compat.write_loss_scale_summaries(optimizer)

    seen = []
    for grad in ([1.0, 1.0], [np.inf, 1.0], [1.0, 1.0]):
        metrics = step(tf.constant(grad))
        seen.append((float(metrics["loss_scale"]), int(metrics["skipped_steps"])))
        assert seen[-1] == (float(optimizer.loss_scale), int(optimizer.skipped_steps))
        log()
    writer.flush()
    assert [count for _, count in seen] == [0, 1, 1]
    scalars = read_scalars(tmp_path)
    assert scalars["loss_scale"] == [(i + 1, scale) for i, (scale, _) in enumerate(seen)]
    assert scalars["skipped_steps"] == [(i + 1, count) for i, (_, count) in enumerate(seen)]


def test_loss_scale_metrics_of_the_stacks_own_optimizer_have_no_count():
    optimizer = stack_native_optimizer(tf.keras.optimizers.SGD(0.1))
    metrics = lossscale_compat.loss_scale_metrics(optimizer)
    assert set(metrics) == {"loss_scale"} and float(metrics["loss_scale"]) == 8.0


def test_loss_scale_metrics_of_a_plain_optimizer_is_an_error():
    with pytest.raises(ValueError, match="scales no loss.*loss-scale optimizer"):
        lossscale_compat.loss_scale_metrics(tf.keras.optimizers.SGD(0.1))


def test_keras3_fixed_scale_reads_as_the_loss_scale_factor():
    if not KERAS3:
        pytest.skip("`loss_scale_factor` is Keras 3's fixed scale")
    metrics = lossscale_compat.loss_scale_metrics(tf.keras.optimizers.SGD(0.1, loss_scale_factor=128.0))
    assert float(metrics["loss_scale"]) == 128.0


def test_an_empty_log_dir_is_an_error_not_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"LossScaleMonitor\(log_dir=''\) names no directory.*log_dir=None"):
        lossscale_compat.LossScaleMonitor(log_dir="")
    assert list(tmp_path.iterdir()) == []


def test_a_log_dir_that_cannot_be_written_fails_at_construction(tmp_path):
    """Under a regular file, so that it cannot be made even by root; before, `fit` failed with TensorFlow's error."""
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=r"log_dir=.*file/logs'\) cannot write there: .*Pass a directory you can"):
        lossscale_compat.LossScaleMonitor(log_dir=str(tmp_path / "file" / "logs"))


def test_a_log_dir_is_made_at_construction(tmp_path):
    lossscale_compat.LossScaleMonitor(log_dir=str(tmp_path / "a" / "b"))
    assert (tmp_path / "a" / "b").is_dir()


def test_a_full_disk_under_log_dir_warns_once_and_training_goes_on(tmp_path, monkeypatch, caplog):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tf.summary, "scalar", full_disk)
    monitor = lossscale_compat.LossScaleMonitor(log_dir=str(tmp_path))
    watcher = WeightsWatcher()
    with caplog.at_level(logging.WARNING, logger="lossscale_compat"):
        model, history = fit(OPTIMIZERS["ours"](), [monitor, watcher], bad_rows=(9,), epochs=2)
    assert len(history.history["loss_scale"]) == 2  # both epochs trained
    (record,) = [r for r in caplog.records if "stopped writing" in r.getMessage()]
    assert "No space left on device" in record.getMessage() and "pass another log_dir" in record.getMessage()
