"""The mapping table is data: well-formed rows, and docs generated from it."""

from __future__ import annotations

import os

import pytest

from lossscale_compat.codemods import _doctable
from lossscale_compat import _mapping

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "codemod.md")


@pytest.mark.parametrize("rename", _mapping.RENAMES, ids=lambda r: r.old)
def test_every_row_is_dotted_known_and_actionable(rename):
    assert rename.old.startswith("tensorflow.") and "." in rename.old
    assert rename.rule in _mapping.RULES
    assert rename.keras3 or rename.tf_keras or rename.shim or rename.note or rename.rule == "get_layer_policy"
    for name in (rename.keras3, rename.tf_keras):
        assert name is None or ".experimental." not in name


def test_old_names_are_unique():
    assert len(_mapping.BY_OLD_NAME) == len(_mapping.RENAMES)


def test_docs_table_is_generated_from_the_mapping():
    """Should fail when docs/codemod.md and RENAMES drift; regenerate with `python -m lossscale_compat.codemods._doctable`."""
    with open(DOCS, encoding="utf-8") as handle:
        text = handle.read()
    assert _doctable.render() in text
    with open(DOCS.replace("codemod.md", "migration.md"), encoding="utf-8") as handle:
        assert _doctable.render() in handle.read()


def test_docs_list_every_warning_code_with_its_text():
    """Should fail when a warning code or its constant text is missing from docs/codemod.md."""
    from lossscale_compat.codemods import _warnings as w

    with open(DOCS, encoding="utf-8") as handle:
        text = handle.read()
    for code, message in w.MESSAGES.items():
        kind = "note" if code in w.NOTE_CODES else "needs a person"
        assert f'| <a id="{code.lower()}"></a>`{code}` | {kind} | {w.SHORT[code]} | {message} |' in text, code
    assert _doctable.render_codes() in text, "regenerate with `python -m lossscale_compat.codemods._doctable`"
