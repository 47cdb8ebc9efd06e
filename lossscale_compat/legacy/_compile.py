"""`Model.compile` wraps the optimizer as TF 2.4 did: with the Policy's loss scale, by TF 2.4's algorithm."""

from __future__ import annotations

import functools
from typing import Any, Callable

from lossscale_compat import _flavour
from lossscale_compat.legacy import _policy


def wrap_for_policy(optimizer: Any, policy: Any) -> Any:
    """`optimizer` wrapped as TF 2.4's compile wrapped it under `policy`; an optimizer already wrapped is kept."""
    import tensorflow as tf

    from lossscale_compat import _optimizer

    loss_scale = _policy.compile_loss_scale(policy)
    if optimizer is None:
        return optimizer
    optimizer = tf.keras.optimizers.get(optimizer)
    if loss_scale is None or isinstance(optimizer, _flavour.keras_loss_scale_optimizer()):
        return optimizer
    if isinstance(loss_scale, str):  # "dynamic": TF 2.4 built its non-experimental class with defaults
        return _optimizer.KerasLossScaleOptimizer(optimizer)
    return _optimizer.LossScaleOptimizer(optimizer, loss_scale)


def hooked(original: Callable, method: str) -> Callable:
    """A replacement for Keras's `method` ("compile" or "_get_optimizer") that wraps as TF 2.4 did."""
    if method == "_get_optimizer":  # Keras 2: the one place compile turns its argument into optimizers

        @functools.wraps(original)
        def get_optimizer(self: Any, optimizer: Any) -> Any:
            import tensorflow as tf

            return tf.nest.map_structure(lambda opt: wrap_for_policy(opt, self.dtype_policy), optimizer)

        return get_optimizer

    @functools.wraps(original)
    def compile(self: Any, optimizer: Any = "rmsprop", *args: Any, **kwargs: Any) -> Any:  # Keras 3
        if "auto_scale_loss" in kwargs:  # modern code that asks for Keras 3's own rule gets it
            return original(self, optimizer, *args, **kwargs)
        # TF 2.4's rule decides instead of Keras 3's, `loss_scale=None` included.
        return original(self, wrap_for_policy(optimizer, self.dtype_policy), *args, auto_scale_loss=False, **kwargs)

    return compile
