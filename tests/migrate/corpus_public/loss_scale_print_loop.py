# Modelled on a public TF 2.x mixed-precision tutorial script (code-index id 33746363220; the index names no repository or path for it, and it is not yet traced to one): a wrapped optimizer whose loss scale is read and printed before each step of an eager loop, the first read before any step.
import tensorflow as tf
from tensorflow.keras import mixed_precision

mixed_precision.experimental.set_policy("mixed_float16")

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.01), loss_scale="dynamic")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.get_scaled_loss(loss)
    variables = model.trainable_variables
    scaled_gradients = tape.gradient(scaled_loss, variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss


def run(train_dataset, epochs=2):
    for epoch in range(epochs):
        for i, (x, y) in enumerate(train_dataset):
            loss_scale = optimizer.loss_scale().numpy()
            loss = train_step(x, y)
            print("epoch {}: step {}: loss={}, loss_scale={}".format(epoch, i, loss, loss_scale))
