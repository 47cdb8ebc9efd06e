"""Equivalence checks for regression tests, usable from pytest and unittest.

- `assert_config_equivalent(old, new)`: both build the same optimizer (`assert_equivalent` is the old name);
- `assert_behaviour_equivalent(old, new)`: both train identically, step by step, skips included;
- `modern_equivalent(legacy)`: the modern optimizer the codemod writes for a TF 2.4 construction;
- `record_training(path, fn, ...)` and `assert_same_training(old, new)`: record a function's training, step by
  step, and hold two recorded runs (say, TF 2.4.0's and today's) to each other.

Names are loaded on first use, so importing this module (as the pytest plugin does) does not import TensorFlow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use, through __getattr__
    from lossscale_compat._behaviour import assert_behaviour_equivalent, behaviour_difference
    from lossscale_compat._compare import assert_same_training
    from lossscale_compat._equivalence import assert_equivalent, config_differences, config_summary, modern_equivalent
    from lossscale_compat._equivalence import assert_equivalent as assert_config_equivalent
    from lossscale_compat._trace import record_training

_PUBLIC = {
    "assert_behaviour_equivalent": ("lossscale_compat._behaviour", "assert_behaviour_equivalent"),
    "assert_config_equivalent": ("lossscale_compat._equivalence", "assert_equivalent"),
    "assert_equivalent": ("lossscale_compat._equivalence", "assert_equivalent"),
    "assert_same_training": ("lossscale_compat._compare", "assert_same_training"),
    "behaviour_difference": ("lossscale_compat._behaviour", "behaviour_difference"),
    "config_differences": ("lossscale_compat._equivalence", "config_differences"),
    "config_summary": ("lossscale_compat._equivalence", "config_summary"),
    "modern_equivalent": ("lossscale_compat._equivalence", "modern_equivalent"),
    "record_training": ("lossscale_compat._trace", "record_training"),
}

__all__ = (
    "assert_behaviour_equivalent",
    "assert_config_equivalent",
    "assert_equivalent",
    "assert_same_training",
    "behaviour_difference",
    "config_differences",
    "config_summary",
    "modern_equivalent",
    "record_training",
)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'lossscale_compat.testing' has no attribute {name!r}")
    module, attribute = _PUBLIC[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
