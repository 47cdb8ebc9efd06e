"""`migrate` says when a directory named holds nothing to read, and `--fail-on-empty` makes that an error (issue 47)."""

from __future__ import annotations

from lossscale_compat.codemods import cli

LEGACY = "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"


def test_a_directory_with_no_python_file_is_named_in_one_line(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("# not Python\n")
    assert cli.main(["migrate", "--check", str(tmp_path / "docs")]) == 0  # nothing to do is not an error by default
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "no Python files or notebooks found" in line]
    assert said == [f"lossscale-compat: {tmp_path / 'docs'}: no Python files or notebooks found"]


def test_fail_on_empty_makes_it_an_error_for_ci(tmp_path, capsys):
    (tmp_path / "srcc").mkdir()  # a mistyped `src`
    assert cli.main(["migrate", "--check", "--fail-on-empty", str(tmp_path / "srcc")]) == 2
    assert f"lossscale-compat: error: {tmp_path / 'srcc'}: no Python files or notebooks found" in capsys.readouterr().err


def test_a_directory_with_files_says_nothing_and_the_others_still_run(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(LEGACY)
    (tmp_path / "empty").mkdir()
    args = ["migrate", "--check", "-j", "1", str(tmp_path / "src")]
    assert cli.main(args) == 1  # a file would change
    assert "no Python files" not in capsys.readouterr().err
    assert cli.main([*args, str(tmp_path / "empty"), "--fail-on-empty"]) == 2
    out, err = capsys.readouterr()
    assert "would migrate" in out and err.count("no Python files or notebooks found") == 1
    assert str(tmp_path / "empty") in err and f"{tmp_path / 'src'}:" not in err
