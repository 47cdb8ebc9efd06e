"""The package's modules import each other one way: _flavour at the bottom, legacy mode at the top."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lossscale_compat"


def imports_of(path):
    """Modules of ours that `path` imports, anywhere in it (function-level imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lossscale_compat"):
            for alias in node.names:  # `from package import module` imports the module
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if is_module(submodule) else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("lossscale_compat."))
    return found


def is_module(name):
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative / "__init__.py").exists()


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


GRAPH = {module_name(path): imports_of(path) for path in PACKAGE.rglob("*.py")}


def cycle_from(start):
    """A path of imports from `start` back to itself, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for child in GRAPH.get(node, ()):
            if child == start:
                return path + [child]
            if child not in seen and child != "lossscale_compat":
                seen.add(child)
                stack.append((child, path + [child]))
    return None


def test_flavour_imports_nothing_of_ours_but_the_table_of_stacks():
    assert GRAPH["lossscale_compat._flavour"] == {"lossscale_compat._stacks"}
    assert GRAPH["lossscale_compat._stacks"] == set()


def test_no_module_imports_itself_through_others():
    cycles = [cycle for cycle in map(cycle_from, GRAPH) if cycle]
    assert cycles == []


def test_the_classes_never_import_legacy_mode():
    below = [name for name in GRAPH if not name.startswith("lossscale_compat.legacy") and name != "lossscale_compat"]
    assert [name for name in below if any(m.startswith("lossscale_compat.legacy") for m in GRAPH[name])] == []


def test_the_check_finds_a_cycle_when_there_is_one():
    GRAPH["lossscale_compat._slots"] = GRAPH["lossscale_compat._slots"] | {"lossscale_compat._optimizer"}
    try:
        cycle = cycle_from("lossscale_compat._slots")
        assert cycle is not None and cycle[:2] == ["lossscale_compat._slots", "lossscale_compat._optimizer"]
        assert cycle[-1] == "lossscale_compat._slots"
        assert all(b in GRAPH[a] for a, b in zip(cycle, cycle[1:])), "each step is an import"
    finally:
        GRAPH["lossscale_compat._slots"] = imports_of(PACKAGE / "_slots.py")
