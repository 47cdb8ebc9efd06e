"""A Horovod pre-training script: a Policy carrying `loss_scale="dynamic"`, an optimizer wrapped again with its own
loss scale and passed as a parameter into a `tf.function` step, a checkpoint of the wrapper, `iterations` reset and
read back into a step counter, and the wrapper's `loss_scale` printed in the log line.

Models NVIDIA/DeepLearningExamples, TensorFlow2/LanguageModeling/ELECTRA/run_pretraining.py at commit
180b7c0fed48477fd3f98f41dec04db4e1202937 (`main`: `policy = tf.keras.mixed_precision.experimental.Policy(
"mixed_float16", loss_scale="dynamic")` + `tf.keras.mixed_precision.experimental.set_policy(policy)` and prints of
`policy.compute_dtype` / `policy.variable_dtype`; `optimizer = tf.keras.mixed_precision.experimental.
LossScaleOptimizer(optimizer, "dynamic")`; `tf.train.Checkpoint(step=..., phase2=..., optimizer=optimizer,
model=model)`; `optimizer.iterations.assign(0)` for phase 2; `checkpoint.step.assign(int(optimizer.iterations))`;
`loss_scale=optimizer.loss_scale if config.amp else 1` in a format string; `train_one_step(config, model, optimizer,
...)`: `optimizer.get_scaled_loss` / `get_unscaled_gradients` under `if config.amp`, `hvd.allreduce` of accumulated
gradients, clip, `apply_gradients`, `hvd.broadcast_variables(optimizer.variables(), root_rank=0)`). Our own code.
"""

import horovod.tensorflow as hvd
import tensorflow as tf


class Config:
    amp = True
    gradient_accumulation_steps = 1
    learning_rate = 5e-4
    num_train_steps = 100
    log_freq = 10
    phase2 = False


@tf.function
def train_one_step(config, model, optimizer, features, labels, accumulator, first_step, take_step, clip_norm=1.0):
    with tf.GradientTape() as tape:
        total_loss = tf.reduce_mean(tf.square(model(features, training=True) - labels))
        unscaled_loss = tf.stop_gradient(total_loss)
        if config.amp:
            total_loss = optimizer.get_scaled_loss(total_loss)
    gradients = tape.gradient(total_loss, model.trainable_variables)
    if config.amp:
        gradients = optimizer.get_unscaled_gradients(gradients)
    accumulator(gradients)
    if first_step or take_step:
        reduced = [None if g is None else hvd.allreduce(g / tf.cast(config.gradient_accumulation_steps, g.dtype))
                   for g in accumulator.gradients]
        clipped, _ = tf.clip_by_global_norm(reduced, clip_norm=clip_norm)
        optimizer.apply_gradients(zip(clipped, model.trainable_variables))
        accumulator.reset()
    if first_step:
        hvd.broadcast_variables(model.variables, root_rank=0)
        hvd.broadcast_variables(optimizer.variables(), root_rank=0)
    return unscaled_loss


def main(config, model, dataset, accumulator, checkpoints_dir):
    hvd.init()
    if config.amp:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale="dynamic")
        tf.keras.mixed_precision.experimental.set_policy(policy)
        print('Compute dtype: %s' % policy.compute_dtype)
        print('Variable dtype: %s' % policy.variable_dtype)

    optimizer = tf.keras.optimizers.Adam(learning_rate=config.learning_rate)
    if config.amp:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")

    checkpoint = tf.train.Checkpoint(step=tf.Variable(0), phase2=tf.Variable(False), optimizer=optimizer, model=model)
    manager = tf.train.CheckpointManager(checkpoint, checkpoints_dir, max_to_keep=3)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint)
    if config.phase2 and not bool(checkpoint.phase2):
        optimizer.iterations.assign(0)
        checkpoint.step.assign(0)
        checkpoint.phase2.assign(True)

    iterator = iter(dataset)
    local_step = 0
    while int(checkpoint.step) <= config.num_train_steps:
        step = int(checkpoint.step)
        features, labels = next(iterator)
        loss = train_one_step(config, model, optimizer, features, labels, accumulator,
                              local_step == 1, take_step=local_step % config.gradient_accumulation_steps == 0)
        if step % config.log_freq == 0:
            print('Step:{step:6d}, Loss:{loss:10.6f}, Loss Scaler: {loss_scale}'.format(
                step=step, loss=float(loss), loss_scale=optimizer.loss_scale if config.amp else 1))
        if local_step % config.gradient_accumulation_steps == 0:
            checkpoint.step.assign(int(optimizer.iterations))
        local_step += 1
    if hvd.rank() == 0:
        manager.save(checkpoint_number=int(checkpoint.step))
