"""libcst's unpublished names are used in one module of the codemod, `_libcst_internals`, and still exist."""

from __future__ import annotations

import ast
import inspect
import pathlib

import libcst as cst
import libcst.codemod
import libcst.metadata

from lossscale_compat.codemods import _libcst_internals

CODEMODS = pathlib.Path(_libcst_internals.__file__).resolve().parent
OWN = CODEMODS / "_libcst_internals.py"


def libcst_private_names() -> set[str]:
    """The `_name`s (not dunders) of every class libcst's public modules export."""
    names = set()
    for module in (cst, libcst.codemod, libcst.metadata):
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__.startswith("libcst"):
                names.update(n for n in dir(value) if n.startswith("_") and not n.startswith("__"))
    return names


def our_own_names(tree: ast.AST) -> set[str]:
    """The `self._name`s a module of ours assigns: its own attributes, whatever libcst calls its."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def private_uses(path: pathlib.Path, private: set[str]) -> list[str]:
    """Where `path` imports a private libcst module or names a private libcst attribute or method."""
    tree = ast.parse(path.read_text())
    private = private - our_own_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("libcst._"):
            found.append(f"{path.name}:{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno}: import {a.name}" for a in node.names if a.name.startswith("libcst._")]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in private:
            found.append(f"{path.name}:{node.lineno}: def {node.name}")
    return found


def test_only_one_module_uses_libcst_private_names():
    private = libcst_private_names()
    others = [path for path in sorted(CODEMODS.rglob("*.py")) if path != OWN]
    assert [use for path in others for use in private_uses(path, private)] == []


def test_the_check_sees_the_private_names_the_one_module_uses():
    uses = private_uses(OWN, libcst_private_names())
    assert any(use.endswith("from libcst._nodes.internal") for use in uses)
    assert any(use.endswith("._codegen") for use in uses)
    assert any(use.endswith("._visit_and_replace_children") for use in uses)
    assert any(use.endswith("def _handle_metadata_reference") for use in uses)


def test_the_private_names_exist_in_this_libcst():
    assert callable(cst.Module._codegen)
    assert callable(cst.Module._visit_and_replace_children)
    assert callable(libcst.codemod.Codemod._handle_metadata_reference)
    state = _libcst_internals.CodegenState(default_indent="    ", default_newline="\n")
    _libcst_internals.codegen(cst.parse_module("x = (1,  2)\n"), state)
    assert "".join(state.tokens) == "x = (1,  2)\n"
