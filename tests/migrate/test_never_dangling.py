"""After migration, no line names a TF 2.4 mixed-precision API the installed TensorFlow lacks, unless warned.

Names are checked against the TensorFlow this stack installs, by import and attribute lookup, not a list.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from lossscale_compat.codemods._engine import migrate_source

tf = pytest.importorskip("tensorflow")
from lossscale_compat import _flavour  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted([*(REPO / "examples" / "tf24").glob("*.py"), *(REPO / "examples" / "project").glob("*.py"),
                 *(Path(__file__).parent / "corpus").glob("*.py"),
                 *(Path(__file__).parent / "corpus_public").glob("*.py")])
TARGET = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"
# The packages whose names are checked; a project's own modules are not.
CHECKED = ("tensorflow", "keras", "tf_keras", "lossscale_compat")


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def imported_names(tree):
    """Local name -> module or object path, from the module's imports."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.asname and alias.name or alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def resolves(path):
    """Whether the dotted `path` exists on the installed stack: attributes, or submodules where none."""
    parts = path.split(".")
    if parts[0] not in CHECKED:
        return True
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return False
    for index, part in enumerate(parts[1:], start=2):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[:index]))
        except ImportError:
            return False
    return True


def dangling(source, warned_lines):
    """(line, name) of each imported dotted name on an unwarned line that the installed stack lacks."""
    tree = ast.parse(source)
    imports = imported_names(tree)
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno not in warned_lines:
            for path in ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [f"{node.module}.{a.name}" for a in node.names]):
                if not resolves(path):
                    found.append((node.lineno, path))
        if not isinstance(node, ast.Attribute) or node.lineno in warned_lines or id(node) in inner:
            continue  # only whole dotted names: `a.b.c`, not also `a.b`
        chain = dotted(node)
        if chain and chain[0] in imports:
            path = ".".join([imports[chain[0]], *chain[1:]])
            if not resolves(path):
                found.append((node.lineno, path))
    return sorted(set(found))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_migrated_code_names_only_what_this_stack_has(path):
    result = migrate_source(path.read_bytes(), TARGET, str(path))
    assert result.status in ("changed", "unchanged"), result.error
    warned = {result.new_line(finding.line) for finding in result.findings}
    assert dangling(result.new.decode(), warned) == []


def test_the_check_sees_a_dangling_name():
    source = "import tensorflow as tf\nx = tf.keras.mixed_precision.experimental.LossScaleOptimizer\n"
    assert dangling(source, set()) == [(2, "tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer")]
    assert dangling(source, {2}) == []
