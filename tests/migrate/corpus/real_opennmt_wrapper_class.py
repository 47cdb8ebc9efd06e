"""A trainer that picks the loss-scale wrapper class at run time, keeps it in a variable, and tests `isinstance`
against that variable before wrapping; scaled loss on the eager path, `get_gradients` on the graph path.

Models OpenNMT/OpenNMT-tf, opennmt/training.py at commit ef845ddfff35e7ba7be77d7fb082d3739813787c
(`_add_mixed_precision_wrapper`: `wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer` when
`compat.tf_supports("keras.mixed_precision.LossScaleOptimizer")`, else
`tf.keras.mixed_precision.experimental.LossScaleOptimizer` with `wrapper_kwargs = dict(loss_scale="dynamic")`;
`if not isinstance(optimizer, wrapper_class): optimizer = wrapper_class(optimizer, **wrapper_kwargs)`;
`Trainer._compute_gradients`: `self._optimizer.get_scaled_loss` / `get_unscaled_gradients` under
`tf.executing_eagerly()`, else `self._optimizer.get_gradients(training_loss, variables)`; `iterations` drives the
step count and summaries). Pattern: a class object in a variable, keyword arguments through `**`, a feature probe
choosing between the TF 2.4 final and experimental APIs, `get_gradients` on a loss-scale optimizer. Our own code.
"""

import tensorflow as tf


def tf_supports(symbol):
    """Whether `tf.<symbol>` exists in the installed TensorFlow."""
    module = tf
    for name in symbol.split("."):
        module = getattr(module, name, None)
        if module is None:
            return False
    return True


def add_mixed_precision_wrapper(optimizer):
    wrapper_class = None
    wrapper_kwargs = {}
    if tf_supports("keras.mixed_precision.LossScaleOptimizer"):
        wrapper_class = tf.keras.mixed_precision.LossScaleOptimizer
    else:
        wrapper_class = tf.keras.mixed_precision.experimental.LossScaleOptimizer
        wrapper_kwargs = dict(loss_scale="dynamic")
    if not isinstance(optimizer, wrapper_class):
        optimizer = wrapper_class(optimizer, **wrapper_kwargs)
    return optimizer


class SequenceTrainer:
    def __init__(self, model, optimizer, mixed_precision=False):
        self._model = model
        self._mixed_precision = mixed_precision
        if mixed_precision:
            optimizer = add_mixed_precision_wrapper(optimizer)
        self._optimizer = optimizer

    def _loss(self, source, target):
        outputs = self._model(source, training=True)
        return tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(target, outputs, from_logits=True))

    def _compute_gradients(self, source, target):
        variables = self._model.trainable_variables
        if tf.executing_eagerly():
            with tf.GradientTape() as tape:
                training_loss = self._loss(source, target)
                if self._mixed_precision:
                    training_loss = self._optimizer.get_scaled_loss(training_loss)
            gradients = tape.gradient(training_loss, variables)
            if self._mixed_precision:
                gradients = self._optimizer.get_unscaled_gradients(gradients)
        else:
            training_loss = self._loss(source, target)
            # The loss-scale optimizer's get_gradients scales and unscales by itself.
            gradients = self._optimizer.get_gradients(training_loss, variables)
        return training_loss, gradients

    def step(self, source, target):
        loss, gradients = self._compute_gradients(source, target)
        self._optimizer.apply_gradients(list(zip(gradients, self._model.trainable_variables)))
        return loss

    def run(self, dataset, max_step):
        if self._optimizer.iterations.numpy() >= max_step:
            raise RuntimeError("already at max_step")
        step_fn = tf.function(self.step)
        tf.summary.experimental.set_step(self._optimizer.iterations)
        for source, target in dataset:
            step_fn(source, target)
            if self._optimizer.iterations.numpy() == max_step:
                break
        return int(self._optimizer.iterations.numpy())
