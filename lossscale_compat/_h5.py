"""Loads a model saved by TF 2.4 as H5 with its compiled loss-scale optimizer, on any supported stack."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

import numpy as np
import tensorflow as tf

from lossscale_compat import _conversions, _flavour, _safe_config
from lossscale_compat._optimizer import KerasLossScaleOptimizer

# TF 2.4's class names for its loss-scale optimizers; both deserialized to the non-experimental class.
_LOSS_SCALE_OPTIMIZERS = ("LossScaleOptimizer", "LossScaleOptimizerV1")


def load_tf24_h5(path: str, custom_objects: dict[str, Any] | None = None, *, safe_mode: bool = True) -> Any:
    """Loads a TF 2.4 `.h5` model, compiled with its optimizer and the optimizer's saved state.

    The model and its weights come from Keras's own H5 loader; the training config and optimizer are
    rebuilt here, because Keras 3's loader fails on TF 2.4's saved metrics before it reaches the
    optimizer. As in TF 2.4, the loss scale itself is not in the file and restarts at `initial_scale`.
    With `safe_mode` (the default), a file holding code that loading would run (a Lambda layer, a
    serialized function) is refused before Keras reads it, on every stack; `safe_mode=False` runs it.
    """
    import h5py  # a Keras dependency on every supported stack

    with h5py.File(path, "r") as f:
        configs = [json.loads(_text(f.attrs[name])) for name in ("model_config", "training_config") if name in f.attrs]
    if safe_mode:
        _safe_config.refuse_code(configs, path)
    model = _uncompiled_model(path, custom_objects, safe_mode)
    with h5py.File(path, "r") as f:
        if "training_config" not in f.attrs:
            return model
        training_config = json.loads(_text(f.attrs["training_config"]))
        weights = _optimizer_weights(f)
    optimizer = _optimizer_from_config(training_config["optimizer_config"], custom_objects)
    model.compile(
        optimizer=optimizer,
        **{
            key: training_config[key]
            for key in ("loss", "metrics", "weighted_metrics", "loss_weights")
            if training_config.get(key) is not None
        },
    )
    if weights:
        _flavour.build_optimizer(optimizer, model.trainable_variables)
        optimizer.set_weights(weights)
    return model


def _uncompiled_model(path: str, custom_objects: dict[str, Any] | None, safe_mode: bool) -> Any:
    """The model of an H5 file, with its weights, not compiled."""
    keras_safe_mode = {"safe_mode": safe_mode} if _flavour.keras_loader_takes_safe_mode() else {}
    if _flavour.keras_h5_loader_takes_compile():
        return tf.keras.models.load_model(path, compile=False, custom_objects=custom_objects, **keras_safe_mode)
    import h5py

    # This Keras's loader compiles whatever it finds: give it a copy without the training config.
    with tempfile.TemporaryDirectory() as folder:
        copy = os.path.join(folder, "model.h5")
        shutil.copyfile(path, copy)
        with h5py.File(copy, "r+") as f:
            if "training_config" in f.attrs:
                del f.attrs["training_config"]
        with tf.keras.utils.custom_object_scope(custom_objects or {}):
            return tf.keras.models.load_model(copy, **keras_safe_mode)


def _optimizer_from_config(config: dict[str, Any], custom_objects: dict[str, Any] | None) -> Any:
    if config["class_name"] in _LOSS_SCALE_OPTIMIZERS:
        return KerasLossScaleOptimizer.from_config(config["config"], custom_objects=custom_objects)
    return _conversions.deserialize_inner_optimizer(config, custom_objects)


def _optimizer_weights(f: Any) -> list:
    if "optimizer_weights" not in f:
        return []
    group = f["optimizer_weights"]
    return [np.asarray(group[_text(name)]) for name in group.attrs["weight_names"]]


def _text(value: Any) -> str:
    return value.decode("utf8") if isinstance(value, bytes) else str(value)
