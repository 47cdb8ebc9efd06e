"""TF 2.4's loss-scaling API on today's TensorFlow.

Names are loaded on first use, so `import lossscale_compat` (and the `lossscale-compat migrate`
CLI) does not import TensorFlow. If TensorFlow is already imported, the optimizers are loaded at
once, so Keras can deserialize TF 2.4's `LossScaleOptimizerV1` configs and H5 files by name.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use, through __getattr__
    from lossscale_compat._checkpoint import restore_tf24_checkpoint
    from lossscale_compat._deprecation import LossScaleDeprecationWarning
    from lossscale_compat._equivalence import assert_equivalent, config_differences
    from lossscale_compat._h5 import load_tf24_h5
    from lossscale_compat._loss_scale import (
        DynamicLossScale,
        FixedLossScale,
        LossScale,
        deserialize,
        get,
        get_loss_scale_weights,
        serialize,
    )
    from lossscale_compat._monitor import LossScaleMonitor, loss_scale_metrics, write_loss_scale_summaries
    from lossscale_compat._optimizer import KerasLossScaleOptimizer, LossScaleOptimizer
    from lossscale_compat._runtime import (
        AnyLossScaleOptimizer,
        Policy,
        disable_mixed_precision_graph_rewrite,
        enable_mixed_precision_graph_rewrite,
        keras_experimental,
    )
    from lossscale_compat._stacks import UntestedStackWarning
    from lossscale_compat.legacy import install, uninstall

__version__ = "0.1.0"

# Public name -> private module that defines it.
_PUBLIC = {
    "AnyLossScaleOptimizer": "lossscale_compat._runtime",
    "DynamicLossScale": "lossscale_compat._loss_scale",
    "FixedLossScale": "lossscale_compat._loss_scale",
    "KerasLossScaleOptimizer": "lossscale_compat._optimizer",
    "LossScale": "lossscale_compat._loss_scale",
    "LossScaleDeprecationWarning": "lossscale_compat._deprecation",
    "LossScaleMonitor": "lossscale_compat._monitor",
    "LossScaleOptimizer": "lossscale_compat._optimizer",
    "Policy": "lossscale_compat._runtime",
    "UntestedStackWarning": "lossscale_compat._stacks",
    "assert_equivalent": "lossscale_compat._equivalence",
    "config_differences": "lossscale_compat._equivalence",
    "deserialize": "lossscale_compat._loss_scale",
    "disable_mixed_precision_graph_rewrite": "lossscale_compat._runtime",
    "enable_mixed_precision_graph_rewrite": "lossscale_compat._runtime",
    "get": "lossscale_compat._loss_scale",
    "get_loss_scale_weights": "lossscale_compat._loss_scale",
    "install": "lossscale_compat.legacy",
    "keras_experimental": "lossscale_compat._runtime",
    "load_tf24_h5": "lossscale_compat._h5",
    "loss_scale_metrics": "lossscale_compat._monitor",
    "restore_tf24_checkpoint": "lossscale_compat._checkpoint",
    "serialize": "lossscale_compat._loss_scale",
    "uninstall": "lossscale_compat.legacy",
    "write_loss_scale_summaries": "lossscale_compat._monitor",
}

__all__ = (
    "AnyLossScaleOptimizer",
    "DynamicLossScale",
    "FixedLossScale",
    "KerasLossScaleOptimizer",
    "LossScale",
    "LossScaleDeprecationWarning",
    "LossScaleMonitor",
    "LossScaleOptimizer",
    "Policy",
    "UntestedStackWarning",
    "assert_equivalent",
    "config_differences",
    "deserialize",
    "disable_mixed_precision_graph_rewrite",
    "enable_mixed_precision_graph_rewrite",
    "get",
    "get_loss_scale_weights",
    "install",
    "keras_experimental",
    "load_tf24_h5",
    "loss_scale_metrics",
    "restore_tf24_checkpoint",
    "serialize",
    "uninstall",
    "write_loss_scale_summaries",
)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'lossscale_compat' has no attribute {name!r}")
    if sys.version_info < (3, 9):  # noqa: UP036 - pip installs the package on 3.8, for `record` beside TF 2.4
        return _on_python_38(name)
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def _on_python_38(name: str) -> Any:
    """A name whose module works on Python 3.8 (few do), or an ImportError that says what runs there."""
    try:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    except Exception as error:
        raise ImportError(
            f"lossscale_compat.{name} needs Python 3.9+ and TensorFlow 2.15+. On this Python (TF 2.4's) only "
            "`lossscale-compat record` and `compare` run: record the TF 2.4 program here, then migrate it and "
            "compare on today's stack (docs/equivalence.md)."
        ) from error


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext lossscale_compat` in Jupyter, Colab or IPython: turns legacy mode on in this kernel."""
    from lossscale_compat.legacy import install

    install()


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext lossscale_compat`: turns legacy mode off again."""
    from lossscale_compat.legacy import uninstall

    uninstall()


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if "tensorflow" in sys.modules and sys.version_info >= (3, 9):
    importlib.import_module("lossscale_compat._optimizer")
