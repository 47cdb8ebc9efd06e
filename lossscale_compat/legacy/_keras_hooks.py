"""Where legacy mode changes Keras: `compile` wraps as TF 2.4 did, and layers answer to TF 2.4's checkpoint names."""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from typing import Any, Callable

from lossscale_compat import _conversions, _flavour
from lossscale_compat.legacy import _policy


def _set_learning_rate(optimizer: Any, value: Any) -> None:
    optimizer.learning_rate = value


def _tf24_learning_rate(optimizer: Any) -> Any:
    schedule = _flavour.learning_rate_schedule(optimizer)
    return optimizer.learning_rate if schedule is None else schedule


# TF 2.4's `optimizer.lr`, which Keras 3's optimizers dropped: `learning_rate`, or the schedule it was given.
LR_ALIAS = property(
    lambda optimizer: _tf24_learning_rate(optimizer),
    _set_learning_rate,
    doc="TF 2.4's alias of `learning_rate`.",
)


def model_method_hooks() -> list[tuple[Any, str, Callable]]:
    """(Model class, method, replacement) for each `Model` method legacy mode replaces on this Keras."""
    hooks = []
    model = _flavour.keras_fit_model_ending_epochs_early()
    if model is not None:
        hooks.append((model, "fit", fit_telling_short_epochs(model.fit)))
    model = _flavour.keras_load_weights_without_tf_checkpoints()
    if model is not None:
        hooks.append((model, "load_weights", tf_format_load_weights(model.load_weights)))
    return hooks


class ShortEpochWarning(UserWarning):
    """An epoch of `fit` ran fewer steps than `steps_per_epoch`, where TF 2.4 ran it in full."""


def fit_telling_short_epochs(original: Callable) -> Callable:
    """A replacement for Keras's `fit` that warns when an epoch ends before `steps_per_epoch` steps (a Keras whose
    epoch iterator lets a finite input run out: `_flavour.keras_fit_model_ending_epochs_early`)."""
    import tensorflow as tf

    class TellShortEpochs(tf.keras.callbacks.Callback):
        def __init__(self, steps_per_epoch: int) -> None:
            super().__init__()
            self.steps_per_epoch, self.steps, self.told = steps_per_epoch, 0, False

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.steps = 0

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            self.steps += 1

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            if self.told or self.steps >= self.steps_per_epoch or self.model.stop_training:
                return
            self.told = True
            warnings.warn(
                f"Epoch {epoch + 1} ran {self.steps} of its {self.steps_per_epoch} steps (`steps_per_epoch`): this "
                "Keras's `fit` keeps one iterator over a finite input across epochs, so an input of exactly "
                "`steps_per_epoch` batches runs out and every second epoch ends with no step. TF 2.4 started such an "
                "input again at each epoch and ran every epoch in full. Add `.repeat()` to the dataset, or upgrade "
                "Keras.",
                ShortEpochWarning,
                stacklevel=2,
            )

    signature = inspect.signature(original)

    @functools.wraps(original)
    def fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        steps_per_epoch = bound.arguments.get("steps_per_epoch")
        if steps_per_epoch:
            bound.arguments["callbacks"] = [*(bound.arguments.get("callbacks") or []), TellShortEpochs(steps_per_epoch)]
        return original(*bound.args, **bound.kwargs)

    return fit


def apply_gradients_taking_name(original: Callable) -> Callable:
    """Keras 3's base `apply_gradients` taking TF 2.4's `name` too, which named only a scope: it is dropped. In TF1
    graph mode, where Keras 3's optimizers cannot run, it raises an error naming the ways out instead."""

    def apply_gradients(self: Any, grads_and_vars: Any, name: Any = None) -> Any:
        _conversions.check_not_tf1_graph_mode(f"`{type(self).__name__}.apply_gradients`")
        return original(self, grads_and_vars)

    apply_gradients.__doc__ = original.__doc__  # no __wrapped__: the signature read by _forwarding is this one
    return apply_gradients


def policy_v1_deserialized_as_tf24(original: Callable) -> Callable:
    """Keras's dtype-policy `deserialize`, turning TF 2.4's `PolicyV1` config into a plain policy of the same name
    (its loss scale dropped), as TF 2.4's did."""

    @functools.wraps(original)
    def deserialize(config: Any, custom_objects: Any = None) -> Any:
        ours = "PolicyV1" not in (custom_objects or {})
        if ours and isinstance(config, dict) and config.get("class_name") == "PolicyV1":
            return _policy.tf_keras_mixed_precision().Policy(config["config"]["name"])
        return original(config, custom_objects=custom_objects)

    return deserialize


def optimizer_init_refusing_optimizer_v2_style(original: Callable) -> Callable:
    """Keras 3's optimizer base `__init__`, first refusing a subclass written against TF 2.4's `OptimizerV2`
    (`_resource_apply_dense`, `_create_slots`), which Keras 3 would never call, with the ways out."""

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _conversions.check_not_optimizer_v2_style(self)
        original(self, *args, **kwargs)

    return __init__


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


def graph_set_optimizer(original: Callable) -> Callable:
    """A replacement for Keras 2's graph-mode `Model._set_optimizer` that wraps as TF 2.4's compile did (Keras 2 wraps
    for any `mixed_float16` policy with a dynamic scale, whatever a TF 2.4 `Policy`'s loss scale, None included)."""

    @functools.wraps(original)
    def _set_optimizer(self: Any, optimizer: Any) -> None:
        if not isinstance(optimizer, (list, tuple)):
            self.optimizer = wrap_for_policy(optimizer, self.dtype_policy)
            return
        if _policy.compile_loss_scale(self.dtype_policy) is not None:  # TF 2.4 raised here (a TypeError, from
            # formatting its own message)
            raise ValueError(
                f"When a dtype policy with a loss scale is used, `compile` takes a single optimizer; got "
                f"{len(optimizer)} under {self.dtype_policy}. Pass one optimizer, or use a policy without a loss "
                "scale (`Policy(name, loss_scale=None)`)."
            )
        self.optimizer = [wrap_for_policy(opt, self.dtype_policy) for opt in optimizer]

    return _set_optimizer


def hooked(original: Callable, method: str) -> Callable:
    """A replacement for Keras's `method` ("compile" or "_get_optimizer") that wraps as TF 2.4 did."""
    if method == "_get_optimizer":  # Keras 2: the one place compile turns its argument into optimizers

        @functools.wraps(original)
        def get_optimizer(self: Any, optimizer: Any) -> Any:
            import tensorflow as tf

            return tf.nest.map_structure(lambda opt: wrap_for_policy(opt, self.dtype_policy), optimizer)

        return get_optimizer

    @functools.wraps(original)
    def compile_(self: Any, optimizer: Any = "rmsprop", *args: Any, **kwargs: Any) -> Any:  # Keras 3
        _conversions.check_not_tf1_graph_mode("`Model.compile`")
        if "auto_scale_loss" in kwargs:  # modern code that asks for Keras 3's own rule gets it
            return original(self, optimizer, *args, **kwargs)
        # TF 2.4's rule decides instead of Keras 3's, `loss_scale=None` included.
        return original(self, wrap_for_policy(optimizer, self.dtype_policy), *args, auto_scale_loss=False, **kwargs)

    return compile_


def tf24_checkpoint_names(original: Callable) -> Callable:
    """A `Layer._lookup_dependency` that also answers TF 2.4's checkpoint names, where today's Keras differs.

    TF 2.4 named a model's layers `layer_with_weights-<i>` and a layer's variables by attribute
    (`kernel`); Keras 3 tracks them as `_functional` and `_kernel`. Names Keras itself answers win.
    """

    @functools.wraps(original)
    def _lookup_dependency(self: Any, name: str, cached_dependencies: Any = None) -> Any:
        found = original(self, name, cached_dependencies)
        if found is not None:
            return found
        if name.startswith("layer_with_weights-") and name[len("layer_with_weights-") :].isdigit():
            with_weights = [layer for layer in getattr(self, "layers", ()) if layer.weights]
            index = int(name[len("layer_with_weights-") :])
            if index < len(with_weights):
                return with_weights[index]
            if cached_dependencies is not None and getattr(self, "built", False):  # restoring into a built model
                raise ValueError(
                    f"The checkpoint holds {name!r}, but this model has {len(with_weights)} layers with weights, so "
                    "those weights would be dropped. Build the model exactly as the code that saved the checkpoint "
                    "did before restoring."
                )
            return None  # a model not built yet makes its layers' weights later, and TensorFlow waits for them
        value = getattr(type(self), name, None)
        if isinstance(value, property):  # e.g. Keras 3's `Dense.kernel`, which reads `_kernel`
            value = getattr(self, name, None)
            return value if hasattr(value, "assign") else None
        return None

    return _lookup_dependency


def tf_format_load_weights(original: Callable) -> Callable:
    """A Keras 3 `Model.load_weights` that also reads TF-format checkpoints, as TF 2.4's did.

    TF 2.4 wrote `model.save_weights(prefix)` as a checkpoint whose root is the model; Keras 3 reads
    only `.keras` and `.weights.h5` files. Anything else goes to Keras as before.
    """

    @functools.wraps(original)
    def load_weights(self: Any, filepath: Any, *args: Any, **kwargs: Any) -> Any:
        prefix = _tf_checkpoint_prefix(filepath)
        if prefix is None:
            return original(self, filepath, *args, **kwargs)
        return _load_tf_format(self, prefix, *args, **kwargs)

    return load_weights


def _tf_checkpoint_prefix(filepath: Any) -> Any:
    """The TF-format checkpoint prefix that `filepath` names (a prefix, or a SavedModel directory), else None."""
    import tensorflow as tf

    try:
        path = os.fspath(filepath)
    except TypeError:
        return None
    if not isinstance(path, str) or path.endswith((".keras", ".h5", ".hdf5")):
        return None
    saved_model_variables = os.path.join(path, "variables", "variables")
    for prefix in (path, saved_model_variables):
        if tf.io.gfile.exists(prefix + ".index"):
            return prefix
    return None


def _load_tf_format(
    model: Any, prefix: str, by_name: bool = False, skip_mismatch: bool = False, options: Any = None
) -> Any:
    """TF 2.4's `load_weights` of a TF-format checkpoint: by topology, into the model and its optimizer."""
    import tensorflow as tf

    if by_name:
        raise NotImplementedError(
            f"{prefix!r} is a TF-format checkpoint, which loads by topology only, not by_name=True. Build the "
            "model as the code that saved it did and call load_weights(prefix), or save .weights.h5 files instead."
        )
    if skip_mismatch:
        raise ValueError(
            "load_weights(skip_mismatch=True) needs by_name=True, which TF-format checkpoints "
            f"such as {prefix!r} do not support. Drop skip_mismatch."
        )
    status = tf.train.Checkpoint(root=model).restore(prefix, options=options)
    status.assert_nontrivial_match()
    return status
