"""Renders docs/api.md, the reference of every public name, from `__all__` and the one-line docstrings.

Regenerate with `python -m lossscale_compat._apidoc`; tests/test_docs.py fails when it drifts.
"""

from __future__ import annotations

import importlib
import sys

# Where each public name is explained at length.
DETAILS = {
    "DynamicLossScale": "loss_scale.md",
    "FixedLossScale": "loss_scale.md",
    "LossScale": "loss_scale.md",
    "deserialize": "loss_scale.md",
    "get": "loss_scale.md",
    "get_loss_scale_weights": "loss_scale.md",
    "serialize": "loss_scale.md",
    "KerasLossScaleOptimizer": "optimizer.md",
    "LossScaleOptimizer": "optimizer.md",
    "load_tf24_h5": "optimizer.md",
    "restore_tf24_checkpoint": "optimizer.md",
    "LossScaleDeprecationWarning": "legacy_mode.md",
    "install": "legacy_mode.md",
    "uninstall": "legacy_mode.md",
    "UntestedStackWarning": "support.md",
    "LossScaleMonitor": "monitoring.md",
    "loss_scale_metrics": "monitoring.md",
    "write_loss_scale_summaries": "monitoring.md",
    "assert_equivalent": "equivalence.md",
    "config_differences": "equivalence.md",
    "assert_behaviour_equivalent": "equivalence.md",
    "assert_config_equivalent": "equivalence.md",
    "behaviour_difference": "equivalence.md",
    "config_summary": "equivalence.md",
    "modern_equivalent": "equivalence.md",
    "assert_same_training": "equivalence.md",
    "record_training": "equivalence.md",
    "AnyLossScaleOptimizer": "migration.md",
    "Policy": "migration.md",
    "enable_mixed_precision_graph_rewrite": "migration.md",
    "disable_mixed_precision_graph_rewrite": "migration.md",
    "keras_experimental": "migration.md",
}
MODULES = ("lossscale_compat", "lossscale_compat.testing")


def render() -> str:
    """Returns docs/api.md's text."""
    lines = [
        "# API reference",
        "",
        "Every public name, with its one-line description. Generated from `__all__` and the",
        "docstrings by `python -m lossscale_compat._apidoc`; a test fails when it drifts.",
        "",
    ]
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        lines += [f"## `{module_name}`", "", "| name | what it is | details |", "|---|---|---|"]
        for name in module.__all__:
            doc = (getattr(module, name).__doc__ or "").strip().splitlines()
            summary = doc[0].replace("|", "\\|") if doc else ""
            lines.append(f"| `{name}` | {summary} | [{DETAILS[name]}]({DETAILS[name]}) |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "docs/api.md", "w", encoding="utf-8") as handle:
        handle.write(render())
