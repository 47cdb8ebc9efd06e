"""Codemods that move TF 2.4 mixed-precision code to the modern Keras API."""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "FileResult": "codemods._engine",
    "MigrateLossScaleCommand": "codemods.migrate_loss_scale",
    "migrate_notebook": "codemods._notebook",
    "migrate_source": "codemods._engine",
}

__all__ = ("FileResult", "MigrateLossScaleCommand", "migrate_notebook", "migrate_source")


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'codemods' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)
