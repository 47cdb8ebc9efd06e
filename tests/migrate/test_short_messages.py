"""Each finding prints as one short line by default; `--explain CODE` and `--verbose` give the full text (issue 47)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods import cli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "codemod.md"
WARNS = "import tensorflow as tf\nopt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, scale)\n"


def test_every_code_has_its_own_short_text_of_one_line():
    """A new code in MESSAGES without a SHORT entry fails here (the other helpers' new codes included)."""
    assert set(w.SHORT) == set(w.MESSAGES)
    for code, short in w.SHORT.items():
        line = f"{code} {short}"
        assert len(line) <= 120 and len(short) <= w.SHORT_LIMIT, (code, len(short))
        assert short.isprintable() and "#" not in short and "{" not in short, code  # no detail to fill in
        assert short != w.MESSAGES[code] and len(short) < len(w.MESSAGES[code]), code


@pytest.mark.parametrize("code", sorted(w.MESSAGES))
def test_explain_prints_the_full_text_and_the_docs_anchor_of_every_code(code, capsys):
    assert cli.main(["migrate", "--explain", code.lower()]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith(f"{code} (") and w.SHORT[code] in out.splitlines()[0]
    words = w.MESSAGES[code].split() if "{" not in w.MESSAGES[code] else w.MESSAGES[code].split("{")[0].split()
    assert " ".join(out.split()).find(" ".join(words)) > 0  # the message, wrapped
    assert out.rstrip().endswith(f"Docs: docs/codemod.md#{code.lower()}")
    assert f'<a id="{code.lower()}"></a>`{code}`' in DOCS.read_text(encoding="utf-8")  # the anchor it names exists


def test_explain_refuses_an_unknown_code_in_one_line(capsys):
    assert cli.main(["migrate", "--explain", "LSC999"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "--explain LSC999: no such warning code" in err and "docs/codemod.md#warning-codes" in err


def _run(tmp_path, capsys, *flags):
    path = tmp_path / "w.py"
    path.write_text(WARNS)
    code = cli.main(["migrate", "--check", "-j", "1", *flags, str(path)])
    return code, capsys.readouterr()


def test_a_finding_is_one_short_line_by_default_and_the_full_text_with_verbose(tmp_path, capsys):
    code, (_, err) = _run(tmp_path, capsys)
    assert code == 1
    (line,) = [line for line in err.splitlines() if ": LSC" in line]
    assert line == f"{tmp_path / 'w.py'}:2:7: {w.TF1_LOSS_SCALE_OPTIMIZER} {w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER]}"
    assert f"--explain {w.TF1_LOSS_SCALE_OPTIMIZER}" in err  # the way to the full text, said once
    code, (_, err) = _run(tmp_path, capsys, "--verbose")
    assert code == 1
    (line,) = [line for line in err.splitlines() if ": LSC" in line]
    assert line.endswith(f"{w.TF1_LOSS_SCALE_OPTIMIZER} {w.MESSAGES[w.TF1_LOSS_SCALE_OPTIMIZER]}")
    assert "--explain" not in err


def test_json_output_carries_both_texts_and_the_anchor(tmp_path, capsys):
    code, (out, _) = _run(tmp_path, capsys, "--format", "json")
    (warning,) = json.loads(out)["files"][0]["warnings"]
    assert warning["short"] == w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER]
    assert warning["message"] == w.MESSAGES[w.TF1_LOSS_SCALE_OPTIMIZER]
    assert warning["docs"] == "docs/codemod.md#lsc116"


def test_github_output_titles_the_short_text_and_says_the_full_one(tmp_path, capsys):
    code, (_, err) = _run(tmp_path, capsys, "--format", "github")
    (line,) = [line for line in err.splitlines() if line.startswith("::warning")]
    title = f"{w.TF1_LOSS_SCALE_OPTIMIZER} {w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER]}"
    assert f"title={title.replace(',', '%2C')}::" in line
    assert line.endswith(w.MESSAGES[w.TF1_LOSS_SCALE_OPTIMIZER])
