"""Legacy mode: TF 2.4 mixed-precision programs run unmodified, with TF 2.4's names and behaviour.

Turned on by `lossscale_compat.install()`, by `lossscale-compat run SCRIPT`, or for every Python process
by the environment variable LOSSSCALE_COMPAT_LEGACY=1. It sits above the classes, which never import it.
The run-time fallbacks of migrated code (`lossscale_compat._runtime`) use its TF 2.4 pieces through the
names below, each imported when first read, so that importing this package imports no TensorFlow.
"""

import importlib
from typing import TYPE_CHECKING, Any

from lossscale_compat.legacy._install import install, is_installed, uninstall

if TYPE_CHECKING:
    from lossscale_compat.legacy._graph_rewrite import (
        disable_mixed_precision_graph_rewrite,
        enable_mixed_precision_graph_rewrite,
    )
    from lossscale_compat.legacy._keras_hooks import hooked as tf24_compile_rule
    from lossscale_compat.legacy._policy import Policy, get_layer_policy, global_policy, set_policy
    from lossscale_compat.legacy._v1_optimizer import v1_loss_scale_optimizer

# name -> (module of this package, attribute): TF 2.4's pieces that migrated code's fallbacks use.
_PIECES = {
    "Policy": ("_policy", "Policy"),
    "set_policy": ("_policy", "set_policy"),
    "global_policy": ("_policy", "global_policy"),
    "get_layer_policy": ("_policy", "get_layer_policy"),
    "enable_mixed_precision_graph_rewrite": ("_graph_rewrite", "enable_mixed_precision_graph_rewrite"),
    "disable_mixed_precision_graph_rewrite": ("_graph_rewrite", "disable_mixed_precision_graph_rewrite"),
    "v1_loss_scale_optimizer": ("_v1_optimizer", "v1_loss_scale_optimizer"),
    "tf24_compile_rule": ("_keras_hooks", "hooked"),
}

__all__ = (
    "Policy",
    "disable_mixed_precision_graph_rewrite",
    "enable_mixed_precision_graph_rewrite",
    "get_layer_policy",
    "global_policy",
    "install",
    "is_installed",
    "set_policy",
    "tf24_compile_rule",
    "uninstall",
    "v1_loss_scale_optimizer",
)


def __getattr__(name: str) -> Any:
    if name not in _PIECES:
        raise AttributeError(f"module 'lossscale_compat.legacy' has no attribute {name!r}")
    module, attribute = _PIECES[name]
    return getattr(importlib.import_module(f"lossscale_compat.legacy.{module}"), attribute)
