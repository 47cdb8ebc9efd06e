"""The train steps the GPU audit traces (tests/gpu), built alike on TF 2.4.0 by its recorder. Keep it Python 3.8.

Each step is one batch of TF 2.4's custom loop (`get_scaled_loss`, `get_unscaled_gradients`, `apply_gradients`),
Keras 3's (`scale_loss`, `apply_gradients`) or `fit`'s (`model.train_step`), on a small Dense model.
"""

BATCH = 4
FEATURES = 4


def make_model(tf):
    """Two Dense layers, the last in float32 as TF 2.4's guide advises under mixed_float16."""
    tf.random.set_seed(0)
    return tf.keras.Sequential(
        [tf.keras.layers.Dense(8, input_shape=(FEATURES,)), tf.keras.layers.Dense(1, dtype="float32")]
    )


def tf24_loop(tf, model, optimizer):
    variables = model.trainable_variables

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    return step


def keras3_loop(tf, model, optimizer):
    variables = model.trainable_variables

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        return loss

    return step


def fit_step(tf, model, optimizer):
    """`fit`'s own step: `model.train_step` of a model compiled with `optimizer` (None: what compile makes of SGD)."""
    model.compile(optimizer=optimizer or tf.keras.optimizers.SGD(0.1), loss="mse")
    return lambda x, y: model.train_step((x, y))


def traced(tf, step, strategy=None):
    """The GraphDef of `step` traced by tf.function, under `strategy.run` when a strategy is given."""
    x, y = tf.ones((BATCH, FEATURES)), tf.ones((BATCH, 1))
    function = tf.function(step if strategy is None else (lambda x, y: strategy.run(step, args=(x, y))))
    return function.get_concrete_function(x, y).graph.as_graph_def()
