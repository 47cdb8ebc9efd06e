# Modelled on a public Kaggle notebook seen through the code index (`find_string` id 71554809395; the index names
# no repository): every TensorFlow import sits in a `try` whose `except` sets `tf = None`, so the script falls back
# to a baseline without TensorFlow; the TF 2.4 policy import is nested in a second `try` under a GPU check.
import os

try:
    import tensorflow as tf
    from tensorflow.keras import layers

    if tf.config.list_physical_devices("GPU"):
        try:
            from tensorflow.keras.mixed_precision import experimental as mixed_precision

            mixed_precision.set_policy("mixed_float16")
        except Exception:
            pass
except Exception:
    tf = None


def build(classes=5):
    """A small classifier, or None when TensorFlow cannot be imported."""
    if tf is None:
        return None
    inputs = layers.Input(shape=(32, 32, 3))
    outputs = layers.Dense(classes, activation="softmax")(layers.Flatten()(inputs))
    return tf.keras.Model(inputs, outputs)


MODEL = build(int(os.environ.get("CLASSES", "5")))
