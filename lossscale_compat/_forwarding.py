"""TF 2.4's pass-through of a loss-scale optimizer's call arguments to its inner optimizer.

TF 2.4's wrapper called `inner.apply_gradients(grads_and_vars, name, experimental_aggregate_gradients=...)`:
its own `name` went on positionally, so an inner override with another second parameter (TensorFlowTTS's
`AdamWeightDecay.apply_gradients(grads_and_vars, clip_norm, ...)`) received it there. An inner optimizer that keeps
the base class's `apply_gradients` is applied the installed Keras's way, which does the same.
"""

from __future__ import annotations

import inspect
from typing import Any

import tensorflow as tf

from lossscale_compat import _flavour

AGGREGATE = "experimental_aggregate_gradients"
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def overrides_apply_gradients(inner: Any) -> bool:
    """Whether `inner`'s class has an `apply_gradients` of its own, not its Keras optimizer base class's."""
    return type(inner).apply_gradients is not _flavour.optimizer_base_class(inner).apply_gradients


def _parameters_after_grads(method: Any) -> list | None:
    try:
        return list(inspect.signature(method).parameters.values())[1:]
    except (TypeError, ValueError):
        return None


def apply_gradients_arguments(inner: Any, name: Any, aggregate: Any) -> tuple[tuple, dict]:
    """The arguments after `grads_and_vars` for `inner.apply_gradients`, as TF 2.4's wrapper passed them.

    `name` goes on positionally. `experimental_aggregate_gradients` goes on by keyword where the inner method names it,
    or takes `**kwargs` on a Keras whose base `apply_gradients` takes it too. Elsewhere it is dropped: True is what
    the base class does anyway, and the wrapper applies False itself (the gradients are not all-reduced again).
    """
    parameters = _parameters_after_grads(inner.apply_gradients)
    if parameters is None:  # a signature Python cannot read: pass everything, as TF 2.4 did
        return (name,), {AGGREGATE: aggregate}
    takes_positional = any(p.kind in _POSITIONAL or p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
    if takes_positional:
        args: tuple = (name,)
    elif name is None:
        args = ()
    else:
        raise TypeError(
            f"LossScaleOptimizer.apply_gradients passes its second argument, `name` ({name!r}), on to the inner "
            f"optimizer's `apply_gradients` positionally, as TF 2.4 did, but {type(inner).__name__}.apply_gradients "
            "takes no argument after `grads_and_vars` (TF 2.4 raised a TypeError here too). Remove the argument, "
            "or give the inner optimizer's `apply_gradients` a parameter for it."
        )
    named = any(p.name == AGGREGATE and p.kind is not inspect.Parameter.POSITIONAL_ONLY for p in parameters)
    var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    if named or (var_keyword and _flavour.optimizer_apply_gradients_takes(AGGREGATE)):
        return args, {AGGREGATE: aggregate}
    return args, {}


def minimize(optimizer: Any, loss: Any, var_list: Any, grad_loss: Any, name: Any, tape: Any) -> Any:
    """TF 2.4's `minimize`: scales `loss`, takes and unscales its gradients, and applies them with `name`."""
    if isinstance(grad_loss, tf.GradientTape) and tape is None:  # today's `minimize(loss, var_list, tape)`
        grad_loss, tape = None, grad_loss
    tape = tf.GradientTape() if tape is None else tape
    if callable(loss):
        with tape:
            if callable(var_list):
                var_list = var_list()
            tape.watch(var_list)
            loss = loss()
    elif callable(var_list):
        var_list = var_list()
    var_list = tf.nest.flatten(var_list)  # TF 2.4 took a single variable too
    with tape:
        scaled_loss = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, var_list, output_gradients=grad_loss))
    return optimizer.apply_gradients(zip(grads, var_list), name=name)
