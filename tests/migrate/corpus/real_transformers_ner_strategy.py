"""A token-classification fine-tuning loop: the loss-scale optimizer is made inside `strategy.scope()`, the gradients
are accumulated without any loss scaling, and `apply_gradients` gets the clip norm as a second positional argument;
the learning rate is read back through the wrapper as a schedule and called.

Models huggingface/transformers, examples/ner/run_tf_ner.py at commit f84dcd02195a890bb4a09fb97f5d7cb81fefa963
(`train`: under `with strategy.scope():`, `optimizer = create_optimizer(...)`, then `if args["fp16"]: optimizer =
tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")`; a `tf.function`
`apply_gradients()` calls `optimizer.apply_gradients(grads_and_vars, args["max_grad_norm"])` through
`strategy.experimental_run_v2`; `train_step` uses `tape.gradient(loss, ...)` on the unscaled loss into a
`GradientAccumulator`; `lr = optimizer.learning_rate; learning_rate = lr(step)` for TensorBoard). Pattern: a wrap
inside a strategy scope in a dict-configured script, a positional second argument to `apply_gradients`, a loop that
never calls get_scaled_loss, an attribute read through the wrapper. Our own code, a dense tagger on random data.
"""

import tensorflow as tf


def create_optimizer(init_lr, num_train_steps, warmup_steps):
    schedule = tf.keras.optimizers.schedules.PolynomialDecay(init_lr, num_train_steps, end_learning_rate=0.0)
    return tf.keras.optimizers.Adam(learning_rate=schedule, epsilon=1e-8)


class SimpleAccumulator:
    def __init__(self):
        self._gradients = None

    @property
    def gradients(self):
        return [g.value() for g in self._gradients]

    def __call__(self, gradients):
        if self._gradients is None:
            self._gradients = [tf.Variable(tf.zeros_like(g), trainable=False) for g in gradients]
        for accum, grad in zip(self._gradients, gradients):
            accum.assign_add(grad)

    def reset(self):
        for accum in self._gradients or []:
            accum.assign(tf.zeros_like(accum))


def train(args, strategy, train_dataset, model, num_train_steps):
    writer = tf.summary.create_file_writer(args["output_dir"])
    with strategy.scope():
        loss_fct = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
        optimizer = create_optimizer(args["learning_rate"], num_train_steps, args["warmup_steps"])

        if args["fp16"]:
            optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")

        loss_metric = tf.keras.metrics.Mean(name="loss", dtype=tf.float32)
        accumulator = SimpleAccumulator()

    @tf.function
    def apply_gradients():
        grads_and_vars = []
        for gradient, variable in zip(accumulator.gradients, model.trainable_variables):
            grads_and_vars.append((gradient / args["n_device"], variable))
        optimizer.apply_gradients(grads_and_vars, args["max_grad_norm"])
        accumulator.reset()

    @tf.function
    def train_step(features, labels):
        def step_fn(features, labels):
            with tf.GradientTape() as tape:
                logits = model(features, training=True)
                per_token = loss_fct(labels, logits)
                loss = tf.reduce_sum(per_token) / args["train_batch_size"]
            grads = tape.gradient(loss, model.trainable_variables)
            accumulator(grads)
            return per_token

        per_example = strategy.experimental_run_v2(step_fn, args=(features, labels))
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, per_example, axis=0)

    global_step = 0
    for epoch in range(args["num_train_epochs"]):
        for step, (features, labels) in enumerate(train_dataset, start=1):
            loss = train_step(features, labels)
            if step % args["gradient_accumulation_steps"] == 0:
                strategy.experimental_run_v2(apply_gradients)
                loss_metric(loss)
                global_step += 1
                if global_step % args["logging_steps"] == 0:
                    lr = optimizer.learning_rate
                    learning_rate = lr(step)
                    with writer.as_default():
                        tf.summary.scalar("lr", learning_rate, global_step)
                        tf.summary.scalar("loss", loss_metric.result(), global_step)
        loss_metric.reset_states()
    return global_step
