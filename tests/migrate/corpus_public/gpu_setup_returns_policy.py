# Modelled on a public TF 2.x GPU set-up helper (code-index id 21002838468; the index names no repository or path for it, and it is not yet traced to one): memory growth on the first GPU, then a float16 policy set globally and returned; float32 when no GPU is present.
import tensorflow as tf


def setup_gpu():
    physical_devices = tf.config.list_physical_devices("GPU")
    if not physical_devices:
        return tf.keras.mixed_precision.experimental.Policy("float32")

    tf.config.experimental.set_memory_growth(physical_devices[0], True)

    policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
    tf.keras.mixed_precision.experimental.set_policy(policy)
    return policy
