# Modelled on a public TF 2.x Kaggle trainer (code index, find_string id 23182670278): an addons LAMB or AdamW
# built with TF 2.4's `lr=` keyword, TF's automatic mixed precision turned on, and the loss-scale wrap before compile.
import tensorflow as tf
import tensorflow_addons as tfa


def compile_model(model, optimizer="LAMB", lr=2e-5, weight_decay=1e-6, amp=False):
    """Compiles `model` with a binary loss and the named optimizer."""
    if optimizer == "LAMB":
        opt = tfa.optimizers.LAMB(lr=lr, weight_decay_rate=weight_decay)
    else:
        opt = tfa.optimizers.AdamW(lr=lr, weight_decay=weight_decay)
    if amp:
        tf.config.optimizer.set_jit(True)
        tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
    model.compile(optimizer=opt, loss=tf.keras.losses.BinaryCrossentropy(), metrics=[tf.keras.metrics.AUC()])
    return model


def current_rate(model):
    """What the learning-rate callbacks log: the wrapped optimizer's rate."""
    return float(tf.keras.backend.get_value(model.optimizer.lr))
