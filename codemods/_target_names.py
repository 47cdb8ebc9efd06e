"""Which mixed-precision names each target has: data recorded from the real packages, one JSON file per stack.

`tests/recorders/record_target_names.py` writes `codemods/target_names/STACK.json` on a stack; this module reads
those files (never TensorFlow). A target lacks a name when any recorded stack of that target lacks it.
"""

from __future__ import annotations

import functools
import json
import os

WATCHED_ROOTS = (
    "tensorflow.keras.mixed_precision",
    "tensorflow.mixed_precision",
    "tensorflow.train.experimental",
    "tensorflow.compat.v1.keras.mixed_precision",
    "tensorflow.compat.v1.mixed_precision",
    "tensorflow.compat.v1.train.experimental",
    "tensorflow.compat.v2.keras.mixed_precision",
    "tensorflow.compat.v2.mixed_precision",
    "tensorflow.compat.v2.train.experimental",
    "tensorflow.python.keras.mixed_precision",
    "tensorflow.python.training.experimental",
    "keras.mixed_precision",
    "keras.src.mixed_precision",
    "tf_keras.mixed_precision",
    "tf_keras.src.mixed_precision",
)
"""Module paths whose names the verifier checks: TF 2.4's mixed-precision namespaces, public and private."""

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "target_names")
TARGET_STACKS = {"keras3": "Keras 3", "tf_keras": "Keras 2"}
"""Each target's stacks are the recorded ones of this Keras API (a stack's file says its versions)."""


def watched(name: str) -> bool:
    """Whether dotted `name` lies on or below a watched root."""
    return any(name == root or name.startswith(root + ".") for root in WATCHED_ROOTS)


def _is_keras_2(versions: dict[str, str]) -> bool:
    keras = versions.get("keras", versions.get("keras-nightly", "2"))  # a pre-release stack pins Keras's nightly
    return "tf-keras" in versions or not keras.startswith("3")


class DamagedData(Exception):
    """A data file of this install that cannot be read as recorded names; the message is the one line shown."""


def _read_stack(path: str) -> tuple[bool, str, dict[str, frozenset[str]]]:
    """(whether it is a Keras 2 stack, its name, {module path: names}) of one data file; DamagedData if not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        versions, modules, stack = data["versions"], data["modules"], data["stack"]
        if not (
            isinstance(stack, str)
            and isinstance(versions, dict)
            and all(isinstance(key, str) and isinstance(value, str) for key, value in versions.items())
            and isinstance(modules, dict)
            and all(
                isinstance(names, list) and all(isinstance(name, str) for name in names) for names in modules.values()
            )
        ):
            raise TypeError("a field of the wrong type")
        keras_2 = bool(data.get("tf_use_legacy_keras")) or _is_keras_2(versions)
    except (OSError, ValueError, RecursionError, MemoryError, KeyError, TypeError, AttributeError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error).splitlines()[0][:120]
        raise DamagedData(
            f"error: this install's verifier data {path} is damaged ({type(error).__name__}: {why}). Instead, "
            "reinstall lossscale-compat (`pip install --force-reinstall lossscale-compat`), or record the stack's "
            "names again with tests/recorders/record_target_names.py."
        ) from None
    return keras_2, stack, {module: frozenset(names) for module, names in modules.items()}


@functools.cache
def stacks(target: str) -> tuple[tuple[str, dict[str, frozenset[str]]], ...]:
    """(stack name, {module path: names}) of each recorded stack of `target`; DamagedData if a data file is damaged."""
    found = []
    for entry in sorted(os.listdir(FOLDER)) if os.path.isdir(FOLDER) else []:
        if entry.endswith(".json"):
            keras_2, stack, modules = _read_stack(os.path.join(FOLDER, entry))
            if keras_2 == (target == "tf_keras"):
                found.append((stack, modules))
    return tuple(found)


def missing_note(target: str) -> str | None:
    """What to say, once a run, when no stack of `target` is recorded here (the data files are missing from this
    install): the verifier then has nothing to check against. None when there is data."""
    if stacks(target):
        return None
    return (
        f"note: no recorded names for --target {target} (no {TARGET_STACKS[target]} stack's file in {FOLDER}), so "
        "the output was not checked for names the target lacks (LSC150). Instead, reinstall lossscale-compat, or "
        "record a stack's names with tests/recorders/record_target_names.py."
    )


def missing_on(modules: dict[str, frozenset[str]], name: str) -> str | None:
    """The first part of dotted `name` that one stack's `modules` lacks, or None when the stack has `name`."""
    parts = name.split(".")
    known = None  # the deepest recorded module on the path
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in modules:
            known = i
            break
    if known is None or known == len(parts):
        return None
    module = ".".join(parts[:known])
    if parts[known] in modules[module]:
        return None  # a name that is not a recorded module (a class, a function): what follows is its attribute
    return f"{module}.{parts[known]}"


@functools.lru_cache(maxsize=4096)
def lacking(target: str, name: str) -> tuple[str, tuple[str, ...]] | None:
    """(the first missing part of `name`, the stacks of `target` lacking it), or None when every stack has it."""
    if not watched(name):
        return None
    missing = None
    where = []
    for stack, modules in stacks(target):
        part = missing_on(modules, name)
        if part is not None:
            missing = missing or part
            where.append(stack)
    return (missing, tuple(where)) if missing else None
