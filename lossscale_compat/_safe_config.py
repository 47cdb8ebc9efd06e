"""Finds what in a saved config Keras would run as code when loading it (Lambda layers, serialized functions).

Used before a config is handed to Keras, on every stack: tf_keras and Keras 2 have no safe mode for `.h5`
files and run a Lambda layer's bytecode while building the model. No TensorFlow import, for the CLI.
"""

from __future__ import annotations

from typing import Any

# Class names whose config holds code Keras runs: a Lambda layer (Keras 2 and 3), a serialized function (Keras 3,
# tf_keras's new format).
_CODE_CLASSES = frozenset({"Lambda", "__lambda__"})


def code_in_config(config: Any) -> str | None:
    """Where in `config` Keras would run code from the file (a path like `config.layers[1]`), or None."""
    pending: list[tuple[str, Any]] = [("config", config)]
    while pending:  # iterative: a hostile config may nest deeper than the recursion limit
        where, value = pending.pop()
        if isinstance(value, dict):
            class_name = value.get("class_name")
            if class_name in _CODE_CLASSES:
                return f"{where} ({class_name})"
            if value.get("function_type") == "lambda" or "__lambda__" in value:
                return f"{where} (a serialized lambda)"
            pending.extend((f"{where}.{key}", item) for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(value))
    return None


def refuse_code(config: Any, source: str, flag: str = "safe_mode=False") -> None:
    """Raises ValueError if loading `config` (read from `source`) would run code from it."""
    where = code_in_config(config)
    if where is not None:
        raise ValueError(
            f"{source} holds code that loading it would run: {where}. Loading it could run anything, so it is "
            f"refused. If you trust the file, pass `{flag}`; otherwise rebuild the model in code and load only "
            "its weights."
        )
