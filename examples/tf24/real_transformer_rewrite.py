"""tensorflow/models' Transformer trainer on the graph rewrite: an optimizer made elsewhere and passed in is
wrapped by `enable_mixed_precision_graph_rewrite`, compiled, and trained with `fit` in segments from `iterations`.

Models tensorflow/models at commit 3b998e4f279a41d7490eb270a697b17e80e6fd38: official/modeling/performance.py
(`configure_optimizer(optimizer, use_float16, use_graph_rewrite, loss_scale)`, whose graph-rewrite branch calls
`tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)` on its parameter) as
official/nlp/transformer/transformer_main.py uses it (`_create_optimizer`, `current_step = opt.iterations.numpy()`,
`model.compile(opt)`, `model.fit(..., initial_epoch=, epochs=, steps_per_epoch=)` until `train_steps`; read at
a2e3e88ab5f67e70e1d6b0bb9ea128ca79c826c6). The dtype stays float32, as the rewrite requires. Our own code, a small
regression model instead of the Transformer.
"""

import numpy as np
import tensorflow as tf

import _harness

args = _harness.parse_args(__doc__)
tf.config.set_visible_devices([], "GPU")


def configure_optimizer(optimizer, use_float16=False, use_graph_rewrite=False, loss_scale='dynamic'):
    """Wraps the optimizer for float16 training or for the graph rewrite."""
    if use_float16:
        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=loss_scale)
    if use_graph_rewrite:
        # The model dtype must be float32, so the Keras policy and the rewrite do not both apply.
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
    return optimizer


class TransformerTask:
    """Builds the model and optimizer from params and trains in segments."""

    def __init__(self, params):
        self.params = params

    def _create_optimizer(self):
        params = self.params
        opt = tf.keras.optimizers.Adam(params["learning_rate"], params["optimizer_adam_beta1"],
                                       params["optimizer_adam_beta2"], epsilon=params["optimizer_adam_epsilon"])
        opt = configure_optimizer(opt, use_float16=params["dtype"] == tf.float16,
                                  use_graph_rewrite=self.params["fp16_implementation"] == "graph_rewrite",
                                  loss_scale=params["loss_scale"])
        return opt

    def train(self, x, y, recorder):
        params = self.params
        model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation='tanh', input_shape=(5,)),
                                     tf.keras.layers.Dense(1)])
        _harness.initial_weights(model, seed=31)
        opt = self._create_optimizer()
        current_step = opt.iterations.numpy()
        model.compile(opt, loss='mse')
        while current_step < params["train_steps"]:
            remaining_steps = params["train_steps"] - current_step
            train_steps_per_eval = min(remaining_steps, params["steps_between_evals"])
            current_iteration = current_step // params["steps_between_evals"]
            model.fit(x, y, batch_size=params["batch_size"], initial_epoch=current_iteration,
                      epochs=current_iteration + 1, steps_per_epoch=train_steps_per_eval, shuffle=False, verbose=0,
                      callbacks=[_harness.recording_callback(recorder)])
            current_step += train_steps_per_eval
        return model, opt


params = {"learning_rate": 0.05, "optimizer_adam_beta1": 0.9, "optimizer_adam_beta2": 0.997,
          "optimizer_adam_epsilon": 1e-9, "dtype": tf.float32, "fp16_implementation": "graph_rewrite",
          "loss_scale": "dynamic", "train_steps": 12, "steps_between_evals": 4, "batch_size": 8}
rng = np.random.RandomState(32)
x = rng.uniform(-1, 1, size=(32, 5)).astype('float32')
y = (x @ rng.uniform(-1, 1, size=(5, 1)) + 0.1).astype('float32')
x[10, 2] = np.inf  # a bad record in the second batch of each pass: that step is skipped and the scale halves

recorder = _harness.Recorder()
model, opt = TransformerTask(params).train(x, y, recorder)
result = recorder.result(opt, model.trainable_variables)
_harness.emit(result, args.json)
