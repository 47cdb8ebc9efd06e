"""Every warning code docs/codemod.md documents is asserted by some test (issue 32), so none is a text no user sees.

A test asserts a code when it names it: `w.STAR_ARGS` (an attribute of `_warnings` imported under any name) or the
literal `LSC105` in a string that is not a docstring (an expected annotation, a `--report` field).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lossscale_compat.codemods import _doctable
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods.rules import optimizer_class

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "codemod.md"
TESTS = ROOT / "tests"
_CODE = re.compile(r"\bLSC\d{3}\b")
# Each code's constant in `_warnings`, by name.
_CONSTANTS = {name: value for name, value in vars(w).items() if isinstance(value, str) and _CODE.fullmatch(value)}


def documented_codes(text: str) -> set[str]:
    """The codes in the warning-code table of docs/codemod.md's text."""
    table = text[text.index(_doctable.CODES_BEGIN) : text.index(_doctable.CODES_END)]
    return set(re.findall(r'^\| (?:<a id="lsc\d{3}"></a>)?`(LSC\d{3})` \|', table, re.MULTILINE))


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of the module and its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _warnings_aliases(tree: ast.Module) -> set[str]:
    """The names this module imports `lossscale_compat.codemods._warnings` under."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "lossscale_compat.codemods":
            out |= {alias.asname or alias.name for alias in node.names if alias.name == "_warnings"}
        elif isinstance(node, ast.Import):
            named = [a for a in node.names if a.name == "lossscale_compat.codemods._warnings" and a.asname]
            out |= {alias.asname for alias in named if alias.asname is not None}
    return out


def asserted_codes(source: str) -> set[str]:
    """The codes a test module's source names, as a `_warnings` constant or a literal outside a docstring."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    aliases = _warnings_aliases(tree)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out |= set(_CODE.findall(node.value))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr in _CONSTANTS
        ):
            out.add(_CONSTANTS[node.attr])
    return out


def test_every_documented_warning_code_is_asserted_by_a_test():
    documented = documented_codes(DOCS.read_text(encoding="utf-8"))
    assert len(documented) >= len(w.MESSAGES) > 0  # the table was found and read
    asserted: set[str] = set()
    for path in TESTS.rglob("*.py"):
        if path.resolve() != Path(__file__).resolve():
            asserted |= asserted_codes(path.read_text(encoding="utf-8"))
    missing = sorted(documented - asserted)
    assert not missing, f"documented in docs/codemod.md but asserted by no test: {missing}"


def test_a_code_named_only_in_a_docstring_or_a_comment_is_not_asserted():
    source = '''\
"""Mentions LSC101."""
from lossscale_compat.codemods import _warnings as warnings_module


def test_it():
    """Gives LSC102."""
    # LSC103
    assert codes == [warnings_module.STAR_ARGS, "LSC106"]
    assert "# lossscale-compat: LSC107 text" in out
    assert other.AMBIGUOUS_NAME
'''
    assert asserted_codes(source) == {w.STAR_ARGS, "LSC106", "LSC107"}


def test_the_docs_table_is_read_code_by_code():
    text = f"intro `LSC199`\n{_doctable.CODES_BEGIN}\n\n| `LSC101` | note | x `LSC198` |\n{_doctable.CODES_END}\n"
    assert documented_codes(text) == {"LSC101"}
    anchored = '| <a id="lsc102"></a>`LSC102` | note | short | x `LSC197` |'
    assert documented_codes(text.replace("| `LSC101` | note | x `LSC198` |", anchored)) == {"LSC102"}


def test_a_reason_that_is_not_a_warning_code_always_has_a_way_out():
    """A rule's reason with no code (`_warnings`' LOSS_SCALE_NOT_VISIBLE, ...) must never be warned: the rules that
    give it send the call to lossscale_compat's class instead (`SHIM_INSTEAD`)."""
    reasons = {
        value
        for name, value in vars(w).items()
        if name.isupper() and isinstance(value, str) and not _CODE.fullmatch(value) and value not in w.MESSAGES
    }
    assert reasons  # LSC102-LSC104 and LSC114 are such reasons now
    assert reasons <= optimizer_class.SHIM_INSTEAD
