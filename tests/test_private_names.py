"""A private name (`_name`, not a module) of the codemod is used only inside the module that defines it."""

import ast

from test_layers import CODEMODS, FILES, is_module, module_name


def private_uses(path, text=None):
    """Where `path` (or `text`, read as that module) imports another module's private name, or reads one through
    a module it imported."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    modules, found = {}, []
    tree = ast.parse(path.read_text() if text is None else text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            source = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            if not source.startswith("lossscale_compat"):
                continue
            for alias in node.names:
                if is_module(f"{source}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
                elif alias.name.startswith("_") and source != here:
                    found.append(f"{here}:{node.lineno}: from {source} import {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{here}:{node.lineno}: {modules[node.value.id]}.{node.attr}")
    return found


def test_no_codemod_module_uses_another_ones_private_names():
    assert [use for path in FILES if path.is_relative_to(CODEMODS) for use in private_uses(path)] == []


def test_the_check_sees_a_private_import_and_a_private_read():
    probe = CODEMODS / "rules" / "policy.py"
    assert private_uses(probe) == []
    text = probe.read_text() + "\nfrom .._values import _probe\nw._PROBE\n"
    uses = private_uses(probe, text)
    assert [use.split(": ", 1)[1] for use in uses] == [
        "from lossscale_compat.codemods._values import _probe",
        "lossscale_compat.codemods._warnings._PROBE",
    ]
