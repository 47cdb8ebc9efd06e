# Modelled on a public TF 2.x video-model trainer (code index, find_string id 6760090152): the global policy chosen
# from a config and the GPUs present, an optimizer named `loss_fn` wrapped by config, compiled in a strategy's scope.
import math

import tensorflow as tf


def setup_model(model, cfg):
    """Compiles `model` with the configured optimizer, loss-scaled when the config asks for mixed precision."""
    if cfg.TRAIN.OPTIMIZER.lower() == "sgd":
        loss_fn = tf.keras.optimizers.SGD(learning_rate=0.0, momentum=cfg.TRAIN.MOMENTUM)
    else:
        loss_fn = tf.keras.optimizers.Adam(learning_rate=0.0)
    if cfg.NETWORK.MIXED_PRECISION:
        loss_fn = tf.keras.mixed_precision.experimental.LossScaleOptimizer(loss_fn, "dynamic")
    model.compile(optimizer=loss_fn, loss=tf.keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
    return model


def train(cfg, build_model, dataset):
    gpus = tf.config.list_physical_devices("GPU")
    precision = "mixed_float16" if cfg.NETWORK.MIXED_PRECISION and gpus else "float32"
    policy = tf.keras.mixed_precision.experimental.Policy(precision)
    tf.keras.mixed_precision.experimental.set_policy(policy)

    def cosine(epoch, lr):
        return cfg.TRAIN.BASE_LR * (0.5 * math.cos(math.pi * epoch / cfg.TRAIN.EPOCHS) + 0.5)

    strategy = tf.distribute.MirroredStrategy() if len(gpus) > 1 else tf.distribute.get_strategy()
    with strategy.scope():
        model = setup_model(build_model(cfg), cfg)
    return model.fit(dataset, epochs=cfg.TRAIN.EPOCHS, callbacks=[tf.keras.callbacks.LearningRateScheduler(cosine)])
