"""Records which mixed-precision module paths and names exist on the running stack, for the codemod's verifier.

Run it under a stack's interpreter from the repository root (see docs/codemod.md, "The verifier"):

    python3 -m nox -s "tests(stack='tf221-keras3')" --install-only
    .nox/tests-stack-tf221-keras3/bin/python tests/recorders/record_target_names.py tf221-keras3

It writes codemods/target_names/STACK.json: for every module on a path the codemod's verifier watches (public and
private: `tensorflow.keras.mixed_precision`, `tensorflow.mixed_precision`, `tensorflow.train.experimental`, their
`tensorflow.compat.v1`/`v2` spellings, `tensorflow.python.keras.mixed_precision`,
`tensorflow.python.training.experimental`, `keras.mixed_precision`, `keras.src.mixed_precision`, and tf_keras'),
the names it holds (attributes and submodules, private ones too); for each ancestor of such a path, which of its
children on a watched path exist. A path is reached by attribute from its root package, else by import. The codemod
reads the files and never imports TensorFlow.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from codemods._target_names import WATCHED_ROOTS  # noqa: E402 - the repo's own list, without importing TF

DEPTH = 3
"""How many module levels below a watched root are listed (TF 2.4's deepest name is three below)."""


def _reach(path: str) -> object | None:
    """The object at dotted `path`: by attribute from its top package, else by importing it; None when neither."""
    parts = path.split(".")
    try:
        value: object = importlib.import_module(parts[0])
        for part in parts[1:]:
            value = getattr(value, part)
        return value
    except Exception:  # noqa: BLE001 - any failure means "not reachable this way"
        pass
    try:
        return importlib.import_module(path)
    except Exception:  # noqa: BLE001
        return None


def _children(module: types.ModuleType) -> dict[str, object]:
    """The names `module` holds: its attributes (dunders left out) and the submodules its package path lists."""
    found: dict[str, object] = {}
    for name in dir(module):
        if name.startswith("__"):
            continue
        try:
            found[name] = getattr(module, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is not there
            continue
    for info in pkgutil.iter_modules(getattr(module, "__path__", None) or []):
        if info.name not in found:
            child = _reach(f"{module.__name__}.{info.name}")
            if child is not None:
                found[info.name] = child
    return found


def _record(path: str, module: types.ModuleType, depth: int, modules: dict[str, list[str]]) -> None:
    """Lists `module` under `path` and recurses into its own submodules (not modules it merely imported)."""
    if path in modules:
        return
    children = _children(module)
    modules[path] = sorted(children)
    if depth == 0:
        return
    for name, child in sorted(children.items()):
        if isinstance(child, types.ModuleType) and child.__name__.startswith(module.__name__ + "."):
            _record(f"{path}.{name}", child, depth - 1, modules)


def record() -> dict:
    """{path: [names]} for every watched module reachable here, and each ancestor's children on watched paths."""
    modules: dict[str, list[str]] = {}
    ancestors: dict[str, set[str]] = {}
    for root in WATCHED_ROOTS:
        parts = root.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if isinstance(_reach(parent), types.ModuleType):
                ancestors.setdefault(parent, set())
                if _reach(f"{parent}.{parts[i]}") is not None:
                    ancestors[parent].add(parts[i])
        value = _reach(root)
        if isinstance(value, types.ModuleType):
            _record(root, value, DEPTH, modules)
    for parent, names in ancestors.items():
        if parent not in modules:
            modules[parent] = sorted(names)
    return dict(sorted(modules.items()))


def versions() -> dict[str, str]:
    """The installed versions of TensorFlow, Keras and tf_keras."""
    from importlib import metadata

    found = {}
    for name in ("tensorflow", "tensorflow-cpu", "keras", "keras-nightly", "tf-keras"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: record_target_names.py STACK  (a stack name of lossscale_compat/_stacks.py)")
    stack = sys.argv[1]
    out = {
        "recorded_by": "tests/recorders/record_target_names.py",
        "stack": stack,
        "tf_use_legacy_keras": os.environ.get("TF_USE_LEGACY_KERAS", ""),
        "versions": versions(),
        "modules": record(),
    }
    path = os.path.join(REPO, "codemods", "target_names", f"{stack}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(out, handle, indent=1, sort_keys=False)
        handle.write("\n")
    print(f"wrote {path}: {len(out['modules'])} modules")


if __name__ == "__main__":
    main()
