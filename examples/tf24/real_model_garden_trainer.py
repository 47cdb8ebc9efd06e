"""tensorflow/models' (Model Garden's) custom-loop trainer interrupted mid-training: a `CheckpointManager` counting
by the optimizer's `iterations` and `restore_or_initialize` before the optimizer has variables, then training on.

Models tensorflow/models at commit 3b998e4f279a41d7490eb270a697b17e80e6fd38: official/modeling/performance.py
(`configure_optimizer` wrapping with `tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer,
loss_scale=...)`), official/vision/image_classification/resnet/resnet_runnable.py (`self.global_step =
self.optimizer.iterations` taken before the wrap, `tf.train.Checkpoint(model=..., optimizer=...)`, a `strategy.run`
step with a tape over `get_scaled_loss` and `get_unscaled_gradients`) and resnet_ctl_imagenet_main.py with Orbit's
controller (`tf.train.CheckpointManager(checkpoint, directory=model_dir, max_to_keep=..., step_counter=global_step,
checkpoint_interval=...)`, `restore_or_initialize()` when the controller starts, a `tf.function` loop of
`steps_per_loop` steps, a checkpoint saved after a loop once the interval has passed). The restore runs in the
strategy's scope: the slots it creates must be, on TF 2.4. Our
own code: a small dense regressor under `mixed_float16` and a `OneDeviceStrategy`, Adam with a piecewise-constant
rate, `steps_per_loop=1` so that each step is recorded. The resumed run is preempted one step after its last
checkpoint (saved at steps 1, 3 and 5); a new job restores it and redoes that step (its lost record is dropped).
Batches that overflow float16 are skipped on both sides of the resume. Each run also records the loss scale's
counter and Adam's slots at the end; the resumed one what `restore_or_initialize` gave back.
"""

import tempfile

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")

TRAIN_STEPS, CHECKPOINT_INTERVAL, PREEMPTED_AT, BATCH = 10, 2, 6, 4

rng = np.random.RandomState(91)
features = rng.uniform(-1, 1, size=(TRAIN_STEPS * BATCH, 5)).astype("float32")
targets = (features @ rng.uniform(-1, 1, size=(5, 2))).astype("float32")
features[1 * BATCH + 3, 2] = 1e5  # step 2 overflows float16: skipped before the checkpoint
features[6 * BATCH + 0, 1] = 1e5  # step 7: skipped after the resume


def configure_optimizer(optimizer, use_float16=False, loss_scale="dynamic"):
    """Wraps the optimizer for float16 training."""
    if use_float16:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=loss_scale)
    return optimizer


class Runnable:
    """Model, optimizer, global step (the optimizer's `iterations`) and a strategy-run train loop."""

    def __init__(self, strategy):
        self.strategy = strategy
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(5,)),
                                          tf.keras.layers.Dense(2, dtype="float32")])
        _harness.initial_weights(self.model, seed=92)
        rate = tf.keras.optimizers.schedules.PiecewiseConstantDecay(boundaries=[3, 7], values=[0.05, 0.02, 0.01])
        self.optimizer = tf.keras.optimizers.Adam(learning_rate=rate)
        self.global_step = self.optimizer.iterations
        self.optimizer = configure_optimizer(self.optimizer, use_float16=True, loss_scale="dynamic")
        self.checkpoint = tf.train.Checkpoint(model=self.model, optimizer=self.optimizer)

    def train_step(self, iterator):
        def step_fn(inputs):
            x, y = inputs
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                scaled_loss = self.optimizer.get_scaled_loss(loss)
            grads = tape.gradient(scaled_loss, self.model.trainable_variables)
            grads = self.optimizer.get_unscaled_gradients(grads)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

        self.strategy.run(step_fn, args=(next(iterator),))

    @tf.function
    def train_loop(self, iterator, num_steps):
        for _ in tf.range(num_steps):
            self.train_step(iterator)


def loss_scale_counter(optimizer):
    """The dynamic loss scale's count of good steps since its last change."""
    for attribute in ("dynamic_counter", "step_counter"):
        value = getattr(optimizer, attribute, None)
        if value is not None:
            return int(np.asarray(value))
    return None


def slots_of(optimizer, variables):
    """Adam's `m` then `v` slots of `variables`, flattened into one list."""
    return [float(x) for name in ("m", "v") for v in variables for x in np.ravel(optimizer.get_slot(v, name).numpy())]


def run_job(model_dir, recorder, stop_at):
    """One job: builds the trainer, restores or initializes, trains until `stop_at`; returns it and what it restored."""
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        runnable = Runnable(strategy)
        manager = tf.train.CheckpointManager(runnable.checkpoint, model_dir, max_to_keep=3,
                                             step_counter=runnable.global_step,
                                             checkpoint_interval=CHECKPOINT_INTERVAL)
        restored_from = manager.restore_or_initialize()  # before the optimizer has slots (TF 2.4: in the scope)
    restored = {"iterations": int(runnable.global_step.numpy()),
                "loss_scale": _harness.current_loss_scale(runnable.optimizer),
                "counter": loss_scale_counter(runnable.optimizer)}
    dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(BATCH).skip(restored["iterations"])
    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    del recorder.loss_scales[restored["iterations"]:]
    recorder.skipped = [step for step in recorder.skipped if step < restored["iterations"]]
    recorder.steps = restored["iterations"]  # the preempted job's steps after its last checkpoint are lost
    while int(runnable.global_step.numpy()) < stop_at:
        before = _harness.weights_of(runnable.model.trainable_variables)
        runnable.train_loop(iterator, tf.constant(1))
        recorder.step_done(runnable.optimizer, before, _harness.weights_of(runnable.model.trainable_variables))
        manager.save(checkpoint_number=runnable.global_step, check_interval=True)
    return runnable, restored if restored_from else None


def run(preempt):
    """Trains to TRAIN_STEPS; with `preempt`, the job stops at PREEMPTED_AT and a new one resumes."""
    recorder = _harness.Recorder()
    with tempfile.TemporaryDirectory() as model_dir:
        if preempt:
            run_job(model_dir, recorder, PREEMPTED_AT)
        runnable, restored = run_job(model_dir, recorder, TRAIN_STEPS)
    variables = runnable.model.trainable_variables
    extra = {"restored": restored} if preempt else {}
    return recorder.result(runnable.optimizer, variables, counter=loss_scale_counter(runnable.optimizer),
                           slots=slots_of(runnable.optimizer, variables), **extra)


tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
result = {"uninterrupted": run(preempt=False), "resumed": run(preempt=True), "tensorflow": tf.__version__}
tf.keras.mixed_precision.experimental.set_policy("float32")
_harness.emit(result, args.json)
