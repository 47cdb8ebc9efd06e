"""The suite's own helper modules can be imported by name from any subset of tests.

pytest puts each test folder on sys.path and imports every conftest.py as `conftest`, so `import conftest`
gets whichever folder's conftest was loaded last, and two helpers with one name shadow each other. CI's
pinned stacks run subsets of the suite, where the load order differs from a full run.
"""

import ast
import collections
import pathlib

TESTS = pathlib.Path(__file__).resolve().parent


def _python_files():
    return [p for p in TESTS.rglob("*.py") if "corpus" not in p.parts]


def test_no_test_module_imports_conftest():
    """Shared helpers live in uniquely named modules, never in a conftest.py that tests import."""
    offenders = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(name.split(".")[0] == "conftest" for name in names):
                offenders.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not offenders, f"these import `conftest`; move what they need into a uniquely named module: {offenders}"


def test_helper_module_names_are_unique():
    """No two helper modules (not test_*.py, not conftest.py, outside packages) share a file name."""
    by_name = collections.defaultdict(list)
    for path in _python_files():
        if path.name.startswith("test_") or path.name in ("conftest.py", "__init__.py"):
            continue
        if (path.parent / "__init__.py").exists():
            continue
        by_name[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"helper modules with one name shadow each other on sys.path; rename one: {shared}"
