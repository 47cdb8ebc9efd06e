# Modelled on a public TF 2.x segmentation training entry point (code-index id 35062649403; the index names no repository or path for it, and it is not yet traced to one): the float16 policy set at the top of `train`, its dtypes logged, before any model is built.
import logging

import tensorflow as tf

logger = logging.getLogger(__name__)


def train(config, build_model, datasets):
    logger.info("Setting training policy.")
    policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
    tf.keras.mixed_precision.experimental.set_policy(policy)
    logger.info(f"Compute dtype : {policy.compute_dtype}")
    logger.info(f"Variable dtype : {policy.variable_dtype}")

    model = build_model(config)
    model.compile(optimizer=tf.keras.optimizers.Adam(config.lr), loss="categorical_crossentropy")
    return model.fit(datasets["train"], validation_data=datasets["valid"], epochs=config.epochs)
