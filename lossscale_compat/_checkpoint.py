"""Restores a `tf.train.Checkpoint` written by TF 2.4 into a model and optimizer of any supported stack.

TF 2.4's Keras wrote models as `layer_with_weights-<i>/<attribute>`, optimizer state as `iter` and
hyperparameter variables, slots as `<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>`, and a loss
scale as `loss_scale/current_loss_scale` and `loss_scale/good_steps`. Keras 3 (and Keras 2's newer
optimizers) lay the same state out differently, so object-based restoring cannot match it; this
reads each TF 2.4 key and assigns it to the object that holds the same state today.
"""

from __future__ import annotations

from typing import Any, Dict, List

import tensorflow as tf

from lossscale_compat import _flavour, _slots

_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"

def restore_tf24_checkpoint(path: str, model: Any = None, optimizer: Any = None, *,
                            model_key: str = "model", optimizer_key: str = "optimizer") -> List[str]:
    """Restores TF 2.4 checkpoint `path` into `model` and `optimizer`; returns the keys it restored.

    `model_key`/`optimizer_key` are the names the TF 2.4 code gave them in `tf.train.Checkpoint(...)`.
    The optimizer may be a `lossscale_compat` loss-scale optimizer or a plain Keras optimizer.
    """
    reader = tf.train.load_checkpoint(path)
    keys = set(reader.get_variable_to_shape_map())
    restored: List[str] = []

    def assign(key: str, target: Any) -> None:
        value = reader.get_tensor(key)
        if tuple(target.shape) != tuple(value.shape):
            raise ValueError(f"Cannot restore {key!r}: the checkpoint holds shape {tuple(value.shape)}, "
                             f"but {target.name} has shape {tuple(target.shape)}. Build the model exactly "
                             "as the TF 2.4 code did before restoring.")
        target.assign(tf.cast(value, target.dtype))
        restored.append(key)

    variables_by_prefix = _model_variables(model, model_key, keys) if model is not None else {}
    for prefix, variable in variables_by_prefix.items():
        assign(prefix + _VALUE, variable)
    if optimizer is not None:
        _restore_optimizer(optimizer, optimizer_key, keys, variables_by_prefix, assign)
    if not restored:
        raise ValueError(f"Nothing in {path} matched: no keys start with {model_key!r}/ or "
                         f"{optimizer_key!r}/. Pass the names the TF 2.4 code used in "
                         "`tf.train.Checkpoint(...)` as `model_key=` and `optimizer_key=`.")
    return restored


def _model_variables(model: Any, model_key: str, keys: set) -> Dict[str, Any]:
    """Maps each TF 2.4 `layer_with_weights-<i>/<attribute>` prefix to today's variable."""
    layers = [layer for layer in model.layers if layer.weights]
    found: Dict[str, Any] = {}
    for key in sorted(keys):
        if not key.startswith(f"{model_key}/layer_with_weights-") or not key.endswith(_VALUE):
            continue
        if ".OPTIMIZER_SLOT" in key:
            continue
        prefix = key[: -len(_VALUE)]
        index_text, attribute = prefix[len(f"{model_key}/layer_with_weights-"):].split("/", 1)
        index = int(index_text)
        if index >= len(layers) or not hasattr(layers[index], attribute):
            raise ValueError(f"The checkpoint has {prefix!r}, but the model's layer with weights number "
                             f"{index} has no attribute {attribute!r}. Build the model exactly as the "
                             "TF 2.4 code did before restoring.")
        found[prefix] = getattr(layers[index], attribute)
    return found


def _restore_optimizer(optimizer: Any, optimizer_key: str, keys: set, variables_by_prefix: Dict[str, Any],
                       assign: Any) -> None:
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    if variables_by_prefix and not _flavour.optimizer_is_built(inner):
        optimizer.build(list(variables_by_prefix.values()))
    simple = {"iter": inner.iterations}
    learning_rate = _flavour.learning_rate_variable(inner)
    if learning_rate is not None:
        simple["learning_rate"] = learning_rate
    state = _flavour.loss_scale_state_variables(optimizer)
    if state is not None:
        simple["loss_scale/current_loss_scale"], simple["loss_scale/good_steps"] = state
    for name, target in simple.items():
        key = f"{optimizer_key}/{name}{_VALUE}"
        if key in keys:
            assign(key, target)
    for prefix, variable in variables_by_prefix.items():
        slot_prefix = f"{prefix}/.OPTIMIZER_SLOT/{optimizer_key}/"
        for key in sorted(k for k in keys if k.startswith(slot_prefix)):
            slot = key[len(slot_prefix): -len(_VALUE)]
            assign(key, _slots.slot_variable(inner, variable, slot))
