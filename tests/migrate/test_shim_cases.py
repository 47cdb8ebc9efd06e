"""Issue 42: docs/codemod.md's "What goes to the shim" is the whole set of ways a site ends on lossscale_compat: its
list is `_warnings.SHIM_CODES`, every code the rules write a lossscale_compat name with is one of them, each is a note
the codemod gives, and on the real files each of them is at a line naming lossscale_compat."""

from __future__ import annotations

import ast
import difflib
import re
import sys
from pathlib import Path

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source

REPO = Path(__file__).resolve().parents[2]
CODEMOD = REPO / "codemods"
SECTION = re.compile(r"<!-- shim cases -->\n(.*?)<!-- end of shim cases -->", re.DOTALL)
# The rule helpers that write a lossscale_compat name, and the argument that carries the note's code.
WRITERS = {"on_shim": 1, "named_shim": 0, "_on_shim": 2}


def _listed() -> set[str]:
    section = SECTION.search((REPO / "docs" / "codemod.md").read_text(encoding="utf-8"))
    assert section, "docs/codemod.md has no shim-cases list between its markers"
    return set(re.findall(r"^\| `(LSC\d+)` \|", section.group(1), re.MULTILINE))


def test_the_docs_list_is_the_shim_codes():
    assert _listed() == w.SHIM_CODES


def _code_of(node: ast.expr) -> str | None:
    """`w.NAME` -> the code it names."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "w":
        return getattr(w, node.attr)
    return None


def _written_codes() -> set[str]:
    """The codes the codemod's sources pass to a helper that writes a lossscale_compat name, or with a `NewName` of a
    row's `fallback` or `shim` (its lossscale_compat spelling)."""
    found = set()
    for path in [*CODEMOD.glob("*.py"), *(CODEMOD / "rules").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in WRITERS and len(node.args) > WRITERS[name]:
                found.add(_code_of(node.args[WRITERS[name]]))
            elif (
                name == "NewName"
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Attribute)
                and node.args[0].attr in ("fallback", "shim")
            ):
                found.add(_code_of(node.args[1]))
    return found - {None}


def test_every_code_a_shim_writer_is_given_is_listed():
    written = _written_codes()
    assert written, "no call of a shim writer found: the helpers were renamed"
    assert written <= w.SHIM_CODES, written - w.SHIM_CODES


def test_every_listed_code_is_a_note_the_codemod_gives():
    sources = "\n".join(
        path.read_text(encoding="utf-8") for path in [*CODEMOD.glob("*.py"), *CODEMOD.glob("rules/*.py")]
    )
    given = {
        getattr(w, name)
        for name in re.findall(r"\bw\.([A-Z_0-9]+)\b", sources)
        if isinstance(getattr(w, name, None), str)
    }
    assert w.SHIM_CODES <= given & w.NOTE_CODES


def _real_files() -> list[Path]:
    folders = ("examples/tf24", "tests/migrate/corpus", "tests/migrate/unseen")
    return sorted(path for folder in folders for path in (REPO / folder).glob("*.py"))


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_on_the_real_files_each_shim_note_is_at_a_line_naming_lossscale_compat(target):
    sys.path.insert(0, str(REPO / "bench"))
    from corpus_figure import _shim_names

    seen: set[str] = set()
    for path in _real_files():
        result = migrate_source(path.read_bytes(), target, str(path))
        if result.status != "changed":
            continue
        old, new = result.old.decode().splitlines(), result.new.decode().splitlines()
        became: dict[int, list[str]] = {}  # 1-based old line -> the new lines of its block
        for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            for number in range(i1 + 1, i2 + 1):
                became[number] = new[j1:j2] if i2 - i1 != j2 - j1 else [new[j1 + number - 1 - i1]]
        shim = _shim_names(result.new.decode())
        for finding in result.findings:
            if finding.code in w.SHIM_CODES:
                lines = became.get(finding.line, [])
                named = {word for line in lines for word in re.findall(r"(?<![.\w])\w+", line)}  # not `x.Name`
                assert named & shim, (path.name, finding.line, finding.code, lines)
            seen.add(finding.code)
    assert seen & w.SHIM_CODES  # the corpus reaches the shim at all
