"""The verifier without its data (issue 30): a missing names file is said once a run, never a crash or a silent pass."""

from __future__ import annotations

import pytest
from lossscale_compat.codemods import _target_names, cli

LEGACY = b"import tensorflow as tf\nmp = getattr(tf.keras.mixed_precision, 'experimental')\n"


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """An install whose codemods/target_names/ folder is empty."""
    empty = tmp_path / "target_names"
    empty.mkdir()
    monkeypatch.setattr(_target_names, "FOLDER", str(empty))
    _target_names.stacks.cache_clear()
    _target_names.lacking.cache_clear()
    yield
    _target_names.stacks.cache_clear()
    _target_names.lacking.cache_clear()


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_a_missing_names_file_is_said_once_a_run(no_data, tmp_path, target, capsys):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_bytes(LEGACY)
    files = [str(tmp_path / "a.py"), str(tmp_path / "b.py")]
    code = cli.main(["migrate", "--check", "--target", target, "-j", "1", *files])
    err = capsys.readouterr().err
    assert err.count("no recorded names for --target " + target) == 1
    assert "was not checked for names the target lacks" in err
    assert code == 0  # nothing else to say about these files: the note does not change the exit code


def test_with_the_data_there_is_no_note(tmp_path, capsys):
    (tmp_path / "a.py").write_bytes(LEGACY)
    code = cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "a.py")])
    err = capsys.readouterr().err
    assert "no recorded names" not in err
    assert code == 1  # the verifier's LSC150 on the getattr


def test_the_note_names_the_folder_and_the_way_out(no_data):
    note = _target_names.missing_note("keras3")
    assert note is not None and _target_names.FOLDER in note and "record_target_names.py" in note
