# Modelled on a public TF 2.x detector trainer (bioothod/object_detection@dda56dee6a0f49a4cf5ba9bf201d83ac8565dd33, detection.py; code-index id 15062595066): RAdam inside Lookahead, wrapped when fp16 is on, and put in a `tf.train.Checkpoint` with a step counter and a manager.
import tensorflow as tf
import tensorflow_addons as tfa


def train(model, dataset, learning_rate, min_learning_rate, use_fp16, checkpoint_dir, steps):
    global_step = tf.Variable(1, trainable=False, dtype=tf.int64)
    opt = tfa.optimizers.RectifiedAdam(lr=learning_rate, min_lr=min_learning_rate)
    opt = tfa.optimizers.Lookahead(opt, sync_period=6, slow_step_size=0.5)
    if use_fp16:
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")

    checkpoint = tf.train.Checkpoint(step=global_step, optimizer=opt, model=model)
    manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir, max_to_keep=20)
    checkpoint.restore(manager.latest_checkpoint)

    @tf.function
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, model(images, training=True)))
            if use_fp16:
                loss_to_differentiate = opt.get_scaled_loss(loss)
            else:
                loss_to_differentiate = loss
        grads = tape.gradient(loss_to_differentiate, model.trainable_variables)
        if use_fp16:
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        global_step.assign_add(1)
        return loss

    for images, labels in dataset.take(steps):
        step(images, labels)
        if int(global_step) % 100 == 0:
            manager.save()
