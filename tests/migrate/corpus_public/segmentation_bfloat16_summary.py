# Modelled on a public TF 2.x brain-tumour segmentation trainer (code-index id 28007135764; the index names no repository or path for it, and it is not yet traced to one): a bfloat16 policy set under a flag after the summary folders are made, its dtypes printed.
import os

import tensorflow as tf


def train(summary_path, mixed_precision, make_dataset, build_model, epochs):
    if not os.path.exists(summary_path):
        os.makedirs(summary_path)

    if mixed_precision:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_bfloat16")
        tf.keras.mixed_precision.experimental.set_policy(policy)
        print("Compute dtype: %s" % policy.compute_dtype)
        print("Variable dtype: %s" % policy.variable_dtype)

    with tf.name_scope("loader"):
        train_loader = make_dataset()
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-4)
    for _ in range(epochs):
        for images, masks in train_loader:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(masks, model(images, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
