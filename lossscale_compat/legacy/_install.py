"""Putting TF 2.4's mixed-precision names back into TensorFlow, and taking them out again exactly.

`install()` works whether or not TensorFlow is imported yet: if it is not, a finder at the front of
`sys.meta_path` waits for `import tensorflow` to finish and installs then, so a process that never
uses TensorFlow never imports it. Every attribute and `sys.modules` entry changed is journaled, and
`uninstall()` puts each one back as it was.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from typing import Any

from lossscale_compat import _deprecation

_MISSING = object()
_journal: list[tuple[Any, str, Any]] = []  # (object or sys.modules, name, previous value or _MISSING)
_finder: _AfterTensorFlowImport | None = None
_installed = False
_tf24_optimizers = True  # install()'s choice: on Keras 2, tf.keras.optimizers gives TF 2.4's OptimizerV2
TF24_OPTIMIZERS_VARIABLE = "LOSSSCALE_COMPAT_TF24_OPTIMIZERS"  # "0": today's optimizers on Keras 2 (the opt-out)
_OFF = ("0", "false", "no", "off")


def _set(target: Any, name: str, value: Any) -> None:
    """Sets `target.name` (or `sys.modules[name]` when target is sys.modules), journaling the old value."""
    if target is sys.modules:
        _journal.append((target, name, sys.modules.get(name, _MISSING)))
        sys.modules[name] = value
        return
    previous = target.__dict__.get(name, _MISSING) if hasattr(target, "__dict__") else getattr(target, name, _MISSING)
    _journal.append((target, name, previous))
    setattr(target, name, value)


def _restore() -> None:
    while _journal:
        target, name, previous = _journal.pop()
        if target is sys.modules:
            if previous is _MISSING:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        elif previous is _MISSING:
            try:
                delattr(target, name)
            except AttributeError:
                pass
        else:
            setattr(target, name, previous)


def _apply() -> None:
    """Puts the TF 2.4 names in place; TensorFlow is imported by now."""
    import tensorflow as tf

    from lossscale_compat import _flavour, _keras_backports, _scheduled_rate
    from lossscale_compat.legacy import _keras_hooks, _layer_attributes, _namespaces, _v1_optimizer

    for target, name, value in _namespaces.assignments(tf, _tf24_optimizers):
        _set(target, name, value)
    model, method = _flavour.keras_compile_hook()
    _set(model, method, _keras_hooks.hooked(getattr(model, method), method))
    graph_model = _flavour.keras2_graph_model()
    if graph_model is not None:
        _set(graph_model, "_set_optimizer", _keras_hooks.graph_set_optimizer(graph_model._set_optimizer))
    for cls in _flavour.keras_checkpoint_lookup_classes():
        _set(
            cls,
            "_lookup_dependency",
            _keras_hooks.tf24_checkpoint_names(vars(cls).get("_lookup_dependency", cls._lookup_dependency)),
        )
    v1_namespaces = _flavour.tf_v1_loss_scale_optimizer_namespaces()
    if v1_namespaces:
        v1_class = _v1_optimizer.v1_loss_scale_optimizer(v1_namespaces[0].MixedPrecisionLossScaleOptimizer)
        for namespace in v1_namespaces:
            _set(namespace, "MixedPrecisionLossScaleOptimizer", v1_class)
    learning_rate = _flavour.keras_learning_rate_property()
    if learning_rate is not None:
        _set(learning_rate[0], "learning_rate", _scheduled_rate.learning_rate_property(learning_rate[1]))
    optimizer_without_lr = _flavour.keras_optimizer_without_lr()
    if optimizer_without_lr is not None:
        _set(optimizer_without_lr, "lr", _keras_hooks.LR_ALIAS)
    apply_without_name = _flavour.keras_apply_gradients_without_name()
    if apply_without_name is not None:
        _set(
            apply_without_name,
            "apply_gradients",
            _keras_hooks.apply_gradients_taking_name(vars(apply_without_name)["apply_gradients"]),
        )
    for target, attribute, value in _keras_backports.backports():
        _set(target, attribute, value)
    optimizer_base = _flavour.keras_optimizer_base_without_optimizer_v2()
    if optimizer_base is not None:
        refusing = _keras_hooks.optimizer_init_refusing_optimizer_v2_style(optimizer_base.__init__)
        _set(optimizer_base, "__init__", refusing)
    policy_deserializer = _flavour.keras_policy_deserializer_without_policy_v1()
    if policy_deserializer is not None:
        _set(
            policy_deserializer,
            "deserialize",
            _keras_hooks.policy_v1_deserialized_as_tf24(policy_deserializer.deserialize),
        )
    keras3_layer = _flavour.keras3_layer_without_tf24_dtype_attributes()
    if keras3_layer is not None:
        for target, name, value in _layer_attributes.assignments(*keras3_layer):
            _set(target, name, value)
    for model, method, replacement in _keras_hooks.model_method_hooks():
        _set(model, method, replacement)


class _AfterTensorFlowImport(importlib.abc.MetaPathFinder):
    """Lets `import tensorflow` run as usual, then installs the TF 2.4 names before it returns."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "tensorflow":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _InstallAfterExec(spec.loader)
                return spec
        return None


class _InstallAfterExec(importlib.abc.Loader):
    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _remove_finder()
        if _installed:
            _apply()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def _remove_finder() -> None:
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None


def tf24_optimizers_by_environment() -> bool:
    """`install()`'s default for `tf24_optimizers`: on, unless LOSSSCALE_COMPAT_TF24_OPTIMIZERS is 0 (or false, no,
    off)."""
    return os.environ.get(TF24_OPTIMIZERS_VARIABLE, "").strip().lower() not in _OFF


def install(tf24_optimizers: bool | None = None) -> None:
    """Turns legacy mode on: TF 2.4's mixed-precision names resolve and train as in TF 2.4. Idempotent.

    On Keras 2, `tf.keras.optimizers` is TF 2.4's `OptimizerV2` family by default, and TF 2.4's loss-scale
    optimizer names give the forms over it; `tf24_optimizers=False` (or LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0) keeps
    the stack's own optimizers. Keras 3 has no such family, so there it changes nothing.
    """
    global _installed, _finder, _tf24_optimizers
    if _installed:
        return
    _installed = True
    _tf24_optimizers = tf24_optimizers_by_environment() if tf24_optimizers is None else bool(tf24_optimizers)
    _deprecation.warn_once_per_process(True)
    if not sys.warnoptions:  # -W or PYTHONWARNINGS given: the user's own filters decide
        # Shown everywhere, not only in __main__ as DeprecationWarnings are; filters set later still win.
        warnings.filterwarnings("default", category=_deprecation.LossScaleDeprecationWarning)
        _our_filters.append(warnings.filters[0])
    if "tensorflow" in sys.modules:
        try:
            _apply()
        except BaseException:  # all or nothing: a failed install leaves TensorFlow and Keras as they were
            uninstall()
            raise
    else:
        _finder = _AfterTensorFlowImport()
        sys.meta_path.insert(0, _finder)


_our_filters: list[tuple] = []


def uninstall() -> None:
    """Turns legacy mode off and leaves TensorFlow exactly as it was before `install()`. Idempotent."""
    global _installed
    if not _installed:
        return
    _installed = False
    _remove_finder()
    _restore()
    _deprecation.warn_once_per_process(False)
    while _our_filters:
        ours = _our_filters.pop()
        if ours in warnings.filters:
            warnings.filters.remove(ours)  # type: ignore[attr-defined]  # a list, which typeshed calls a Sequence
    getattr(warnings, "_filters_mutated", lambda: None)()  # forget warnings suppressed under our filter


def is_installed() -> bool:
    """Whether legacy mode is on."""
    return _installed
