"""`migrate --annotate` and `--strip-annotations`: the warnings kept in the files as comments, as a user runs it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from lossscale_compat.codemods import _annotate, cli
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source

from .test_cli import run
from .test_fixed_point import REAL_FILES

# What a user's file looks like after `--write --annotate`: each comment ours, one code and a short text.
COMMENT = re.compile(r"# lossscale-compat: (LSC1\d\d) ([^#\n]+)$")
# A TF1 optimizer the codemod leaves alone (LSC116), a call over three lines, a call continued with a backslash, a
# call whose first line has a comment of the user's, and a string holding what looks like an annotation.
SOURCE = '''\
import tensorflow as tf

def build(scale):
    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.1),
        scale)
    return opt

x = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, scale)
y = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, \\
    scale)
z = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, scale)  # mine
s = """text
# lossscale-compat: LSC101 not a comment
"""
'''


def annotated_lines(text: str) -> dict[int, list[str]]:
    """The codes annotated on each line (1-based), from the comments alone (tokenize, not a regex over strings)."""
    import io
    import tokenize

    found: dict[int, list[str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and "lossscale-compat:" in token.string:
            found[token.start[0]] = re.findall(r"lossscale-compat: (LSC\d+)", token.string)
    return found


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    return tmp_path


def test_write_annotate_comments_each_site_where_python_allows_and_a_second_run_adds_nothing(project):
    done = run("--write", "--annotate", "train.py", cwd=project)
    assert done.returncode == 1, done.stderr  # LSC116 still needs a person
    text = (project / "train.py").read_text()
    compile(text, "train.py", "exec")
    lines = text.splitlines()
    assert lines[1] == "import lossscale_compat"  # added by the migration: SOURCE's line N is now N + 1
    assert annotated_lines(text) == {
        5: ["LSC119"],  # the statement's first line, not the line of its last argument
        10: ["LSC116"],
        12: ["LSC119"],  # after the backslash, at the end of the continued line
        13: ["LSC119"],
    }
    assert lines[12].endswith("  # mine  # lossscale-compat: LSC119 " + _annotate.short_text("LSC119"))
    assert "# lossscale-compat: LSC101 not a comment" in lines  # inside the string: untouched
    for row in (5, 10, 12, 13):
        assert COMMENT.search(lines[row - 1]), lines[row - 1]
    # Every warning printed has its comment on its line or, past a backslash, on the first line a comment can end.
    printed = re.findall(r"train\.py:(\d+):\d+: (LSC\d+)", done.stderr.decode())
    annotated = annotated_lines(text)
    assert len(printed) == len(annotated), printed
    for row, code in printed:
        assert code in annotated[min(r for r in annotated if r >= int(row))], (row, code)

    again = run("--write", "--annotate", "train.py", cwd=project)
    assert again.returncode == 1 and b"0 file(s) migrated" in again.stderr, again.stderr
    assert (project / "train.py").read_text() == text
    check = run("--check", "train.py", cwd=project)  # the codemod's fixed point: nothing left to rewrite
    assert b"would migrate" not in check.stdout, check.stdout


def test_strip_annotations_removes_only_our_comments_and_migrates_nothing(project, tmp_path_factory):
    plain = tmp_path_factory.mktemp("plain")
    (plain / "train.py").write_text(SOURCE)
    assert run("--write", "train.py", cwd=plain).returncode == 1
    assert run("--write", "--annotate", "train.py", cwd=project).returncode == 1

    diff = run("--strip-annotations", "train.py", cwd=project)
    assert diff.returncode == 1 and b"-x = tf.compat.v1" in diff.stdout, diff.stdout  # --diff by default
    assert run("--check", "--strip-annotations", "train.py", cwd=project).returncode == 1
    assert b"would strip annotations: train.py" in run("--check", "--strip-annotations", "train.py", cwd=project).stdout
    stripped = run("--write", "--strip-annotations", "train.py", cwd=project)
    assert stripped.returncode == 0, stripped.stderr
    assert b"stripped annotations: train.py" in stripped.stderr and b"migrated" not in stripped.stderr, stripped.stderr
    assert b"1 file(s) stripped of annotations" in stripped.stderr, stripped.stderr
    assert (project / "train.py").read_text() == (plain / "train.py").read_text()
    assert run("--check", "--strip-annotations", "train.py", cwd=project).returncode == 0

    (project / "old.py").write_text(SOURCE)
    run("--write", "--strip-annotations", "old.py", cwd=project)
    assert (project / "old.py").read_text() == SOURCE  # no migration, and the string's text stays


def test_annotate_and_strip_together_is_a_usage_error(project):
    done = run("--annotate", "--strip-annotations", "train.py", cwd=project)
    assert done.returncode == 2 and b"not allowed with argument" in done.stderr, done.stderr
    assert (project / "train.py").read_text() == SOURCE


def test_annotate_through_stdin_writes_the_annotated_file_to_stdout(project):
    done = run("-", "--write", "--annotate", "--stdin-filename", "train.py", cwd=project, stdin=SOURCE.encode())
    assert done.returncode == 1
    run("--write", "--annotate", "train.py", cwd=project)
    assert done.stdout.decode() == (project / "train.py").read_text()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "a = f(\n    1)\n", "a = f(  # lossscale-compat: LSC110 {LSC110}\n    1)\n", id="first line of a call"
        ),
        pytest.param(
            "a = f(1, \\\n      2)\n", "a = f(1, \\\n      2)  # lossscale-compat: LSC110 {LSC110}\n", id="backslash"
        ),
        pytest.param(
            'a = f("""x\ny""", 2)\n', 'a = f("""x\ny""", 2)  # lossscale-compat: LSC110 {LSC110}\n', id="string"
        ),
        pytest.param("a = f(1)\r\n", "a = f(1)  # lossscale-compat: LSC110 {LSC110}\r\n", id="CRLF"),
        pytest.param("a = f(1)", "a = f(1)  # lossscale-compat: LSC110 {LSC110}", id="no newline at the end"),
        pytest.param("a = f(1)  # x\n", "a = f(1)  # x  # lossscale-compat: LSC110 {LSC110}\n", id="own comment"),
    ],
)
def test_where_the_comment_goes(before, after):
    finding = w.Finding(1, 4, w.UNSUPPORTED_USE)
    expected = after.format(LSC110=_annotate.short_text(w.UNSUPPORTED_USE)).encode()
    assert _annotate.annotate(before.encode(), [finding]) == expected
    assert _annotate.annotate(expected, [finding]) == expected
    assert _annotate.strip(expected) == before.encode()


def test_two_codes_on_one_line_and_file_level_codes():
    findings = [w.Finding(1, 0, w.ITERATIONS_READ_NOTE), w.Finding(1, 4, w.ITERATIONS_NOTE), w.Finding(1, 0, "LSC201")]
    once = _annotate.annotate(b"a = f(1)\n", findings)
    assert annotated_lines(once.decode()) == {1: ["LSC118", "LSC142"]}
    assert _annotate.strip(once) == b"a = f(1)\n"


def test_a_latin1_file_keeps_its_encoding():
    before = "# -*- coding: latin-1 -*-\na = f('é')\n".encode("latin-1")
    after = _annotate.annotate(before, [w.Finding(2, 0, w.UNSUPPORTED_USE)])
    assert after.startswith(before[:-1]) and after.decode("latin-1").count("é") == 1
    assert _annotate.strip(after) == before


def test_every_code_has_a_short_single_line_text_without_a_hash():
    for code in w.MESSAGES:
        text = _annotate.short_text(code)
        assert 0 < len(text) <= _annotate.SHORT_TEXT_LIMIT and "#" not in text and "\n" not in text, (code, text)
    assert _annotate.short_text("LSC999") == "see docs/codemod.md"


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_annotated_real_files_compile_to_the_same_code_and_stay_at_the_fixed_point(path, target):
    result = cli._process(str(path), path.read_bytes(), target)
    assert result.status in ("changed", "unchanged"), result.error
    annotated = _annotate.annotate(result.new, [new for _, new in result.findings])
    codes = {new.code for _, new in result.findings if new.code.startswith("LSC1")}
    found = annotated_lines(annotated.decode())
    assert codes == {code for row in found.values() for code in row}
    assert ast.dump(ast.parse(annotated)) == ast.dump(ast.parse(result.new))  # comments only
    again = migrate_source(annotated, target, str(path))
    assert again.status == "unchanged", again.new.decode()
    # A second run adds nothing: the codemod's second pass warns of nothing its first pass did not.
    second = [new for _, new in cli._process(str(path), annotated, target).findings]
    twice = _annotate.annotate(annotated, second)
    assert twice == annotated
    assert _annotate.strip(twice) == result.new


@pytest.mark.parametrize("option", ["--annotate", "--strip-annotations"])
def test_annotating_does_not_import_tensorflow(project, option):
    import os
    import subprocess
    import sys

    code = (
        "import sys; from lossscale_compat.codemods.cli import main; "
        f"rc = main(['migrate', '--write', {option!r}, {str(project)!r}]); "
        "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'imported TF'; print(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (b"1" if option == "--annotate" else b"0")
