"""The command line, run as a user would: in a subprocess."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGACY = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
MODERN = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
WARNS = b"import tensorflow as tf\nopt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, scale)\n"


def run(*args, cwd, stdin=None):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", *args],
        cwd=cwd, input=stdin, capture_output=True, env=env, timeout=120,
    )


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "legacy.py").write_bytes(LEGACY)
    (tmp_path / "modern.py").write_bytes(MODERN)
    return tmp_path


def test_cli_does_not_import_tensorflow(tmp_path):
    code = (
        "import sys; from lossscale_compat.codemods.cli import main; "
        f"rc = main(['migrate', '--check', {str(tmp_path)!r}]); "
        "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'imported TF'; print(rc)"
    )
    (tmp_path / "legacy.py").write_bytes(LEGACY)
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == b"1"


def test_diff_is_default_and_writes_nothing(tree):
    done = run("legacy.py", "modern.py", cwd=tree)
    assert done.returncode == 1
    assert b"-opt = tf.keras.mixed_precision.experimental" in done.stdout
    assert b"+opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)" in done.stdout
    assert (tree / "legacy.py").read_bytes() == LEGACY


def test_check_lists_files_and_exit_codes(tree):
    done = run("--check", ".", cwd=tree)
    assert done.returncode == 1
    assert done.stdout.decode().splitlines() == ["would migrate: " + os.path.join(".", "legacy.py")]
    assert run("--check", "modern.py", cwd=tree).returncode == 0


def test_write_is_atomic_keeps_mode_and_second_run_is_clean(tree):
    os.chmod(tree / "legacy.py", 0o754)
    done = run(".", "--write", cwd=tree)
    assert done.returncode == 0, done.stderr
    assert (tree / "legacy.py").read_bytes() == MODERN
    assert stat.S_IMODE(os.stat(tree / "legacy.py").st_mode) == 0o754
    assert not [p for p in os.listdir(tree) if p.startswith(".lossscale-compat-")]
    assert run("--check", ".", cwd=tree).returncode == 0


def test_errors_win_and_run_continues(tree):
    broken = b"import tensorflow as tf\nx = tf.mixed_precision.experimental.FixedLossScale(\n"
    (tree / "broken.py").write_bytes(broken)
    done = run("--write", ".", cwd=tree)
    assert done.returncode == 2
    assert (tree / "legacy.py").read_bytes() == MODERN
    assert (tree / "broken.py").read_bytes() == broken
    assert b"broken.py: error: cannot parse" in done.stderr


def test_missing_path_is_an_error(tree):
    assert run("--check", "nope.py", cwd=tree).returncode == 2


def test_warnings_mean_exit_one_even_after_write(tree):
    (tree / "w.py").write_bytes(WARNS)
    done = run("w.py", "--write", cwd=tree)
    assert done.returncode == 1
    assert f"w.py:2:7: {w.TF1_LOSS_SCALE_OPTIMIZER} {w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER]}\n".encode() in done.stderr


def test_report_schema_and_line_numbers_after_write(tree):
    (tree / "w.py").write_bytes(
        b"from tensorflow.keras.mixed_precision import experimental as mpx\n"
        b"a = mpx.LossScaleOptimizer(opt, 'dynamic')\n"
        b"b = type(opt) is mpx.LossScaleOptimizer\n"
    )
    done = run("--write", "--report", "r.json", "w.py", "legacy.py", cwd=tree)
    assert done.returncode == 1
    report = json.loads((tree / "r.json").read_text())
    assert set(report) == {"files", "summary"}
    by_path = {entry["path"]: entry for entry in report["files"]}
    assert set(by_path["w.py"]) == {"path", "status", "warnings", "error"}
    assert by_path["w.py"]["status"] == "changed"
    (warning,) = [found for found in by_path["w.py"]["warnings"] if found["code"] == w.UNSUPPORTED_USE]
    assert set(warning) == {"line", "col", "code", "short", "message", "docs"}
    lines = (tree / "w.py").read_text().splitlines()
    assert lines[warning["line"] - 1] == "b = type(opt) is mpx.LossScaleOptimizer"
    assert report["summary"]["changed"] == 2


def test_json_and_github_formats(tree):
    (tree / "w.py").write_bytes(WARNS)
    done = run("--check", "--format", "json", "w.py", cwd=tree)
    report = json.loads(done.stdout)
    assert report["files"][0]["warnings"][0]["code"] == w.TF1_LOSS_SCALE_OPTIMIZER
    done = run("--format", "github", "--check", "w.py", cwd=tree)
    assert f"::warning file=w.py,line=2,col=7,title={w.TF1_LOSS_SCALE_OPTIMIZER} ".encode() in done.stderr


def test_stdin_is_byte_exact(tree):
    crlf = LEGACY.replace(b"\n", b"\r\n")
    done = run("-", "--write", "--stdin-filename", "x.py", cwd=tree, stdin=crlf)
    assert done.stdout == MODERN.replace(b"\n", b"\r\n")
    done = run("-", "--write", cwd=tree, stdin=b"x = 1\r\n\r\n")
    assert done.stdout == b"x = 1\r\n\r\n"
    assert done.returncode == 0


def test_parallel_jobs_give_same_result(tree):
    for i in range(6):
        (tree / f"l{i}.py").write_bytes(LEGACY)
    done = run("--check", "-j", "2", ".", cwd=tree)
    assert done.returncode == 1
    assert len(done.stdout.decode().splitlines()) == 7


def test_gitignore_excludes_and_explicit_files(tree):
    (tree / ".git").mkdir()
    (tree / ".gitignore").write_text("gen/\n*.skip.py\n!keep.skip.py\n")
    for name in ("gen/a.py", "b.skip.py", "keep.skip.py", "venv/lib.py", ".ipynb_checkpoints/c.py", "sub/x.py"):
        (tree / name).parent.mkdir(exist_ok=True)
        (tree / name).write_bytes(LEGACY)
    (tree / "venv" / "pyvenv.cfg").write_text("")
    done = run("--check", ".", "--exclude", "sub/", cwd=tree)
    listed = sorted(line.split(": ")[1] for line in done.stdout.decode().splitlines())
    assert listed == [os.path.join(".", "keep.skip.py"), os.path.join(".", "legacy.py")]
    done = run("--check", "gen/a.py", cwd=tree)
    assert done.stdout == b"would migrate: gen/a.py\n"


def test_pyproject_table(tree):
    (tree / "pyproject.toml").write_text('[tool.lossscale-compat]\ntarget = "tf_keras"\nexclude = ["legacy.py"]\n')
    (tree / "sub").mkdir()
    (tree / "sub" / "f.py").write_bytes(
        b"import tensorflow as tf\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, 8)\n"
    )
    done = run(".", cwd=tree)
    assert b"dynamic=False, initial_scale=8" in done.stdout
    assert b"legacy.py" not in done.stdout
    (tree / "pyproject.toml").write_text("[tool.lossscale-compat]\ntargte = 1\n")
    done = run(".", cwd=tree)
    assert done.returncode == 2
    assert b"unknown keys ['targte']" in done.stderr


def test_bad_option_is_usage_error(tree):
    assert run("--target", "keras2", "legacy.py", cwd=tree).returncode == 2


def _notebook_bytes(cells):
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _cell(kind, source):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


NOTEBOOK = _notebook_bytes([
    _cell("code", "import tensorflow as tf\n"),
    _cell("markdown", "# Training"),
    _cell("code", "x = 1\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, scale)"),
])


def test_report_gives_notebook_warnings_their_cell(tree):
    (tree / "nb.ipynb").write_bytes(NOTEBOOK)
    done = run("--check", "--report", "r.json", "nb.ipynb", "legacy.py", cwd=tree)
    assert done.returncode == 1
    report = json.loads((tree / "r.json").read_text())
    by_path = {entry["path"]: entry for entry in report["files"]}
    (warning,) = by_path["nb.ipynb"]["warnings"]
    assert warning == {
        "cell": 2, "line": 2, "col": 5, "code": w.TF1_LOSS_SCALE_OPTIMIZER,
        "short": w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER], "message": w.MESSAGES[w.TF1_LOSS_SCALE_OPTIMIZER],
        "docs": "docs/codemod.md#lsc116",
    }
    assert by_path["legacy.py"]["warnings"] == []
    (tree / "w.py").write_bytes(WARNS)
    done = run("--check", "--format", "json", "w.py", cwd=tree)
    assert "cell" not in json.loads(done.stdout)["files"][0]["warnings"][0]


def test_text_and_github_formats_name_the_notebook_cell(tree):
    (tree / "nb.ipynb").write_bytes(NOTEBOOK)
    done = run("--check", "nb.ipynb", cwd=tree)
    message, short = w.MESSAGES[w.TF1_LOSS_SCALE_OPTIMIZER], w.SHORT[w.TF1_LOSS_SCALE_OPTIMIZER]
    assert f"nb.ipynb[cell 2]:2:5: {w.TF1_LOSS_SCALE_OPTIMIZER} {short}\n".encode() in done.stderr
    done = run("--check", "--format", "github", "nb.ipynb", cwd=tree)
    title = f"{w.TF1_LOSS_SCALE_OPTIMIZER} {short}".replace(":", "%3A").replace(",", "%2C")
    expected = f"::warning file=nb.ipynb,title={title}::nb.ipynb[cell 2]:2:5: {message}\n"
    assert expected.encode() in done.stderr


def test_pyproject_exclude_that_is_not_a_list_is_an_error(tree):
    (tree / "pyproject.toml").write_text('[tool.lossscale-compat]\nexclude = "legacy.py"\n')
    done = run(".", cwd=tree)
    assert done.returncode == 2
    assert b"`exclude` in [tool.lossscale-compat] must be a list of patterns, got 'legacy.py'" in done.stderr


def test_diff_counts_lines_as_python_does(tmp_path, capsys):
    from lossscale_compat.codemods import cli

    path = tmp_path / "ff.py"
    path.write_bytes(
        b"import tensorflow as tf\n# page\x0cbreak\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
    )
    assert cli.main(["migrate", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert "@@ -1,3 +1,3 @@" in out  # a form feed is no line break: three lines, as `patch` counts them
    assert " # page\x0cbreak\n" in out


def test_help_states_the_exit_codes(tmp_path):
    done = run("--help", cwd=tmp_path)
    assert done.returncode == 0
    text = done.stdout.decode()
    for code in (cli.EXIT_CLEAN, cli.EXIT_PENDING, cli.EXIT_ERROR):
        assert re.search(rf"^  {code}  \w", text, re.MULTILINE), text
    assert "changes pending" in text and "--annotate" in text and "--strip-annotations" in text


def test_version_is_the_package_version_without_tensorflow(tmp_path):
    import tomllib

    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "--version"], cwd=tmp_path, capture_output=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        version = tomllib.load(handle)["project"]["version"]
    assert done.stdout.decode() == f"lossscale-compat {version}\n"
    code = "import sys, lossscale_compat.__main__ as m; m.main(['--version']); print('tensorflow' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert loaded.stdout.decode().splitlines()[-1] == "False", loaded.stdout
