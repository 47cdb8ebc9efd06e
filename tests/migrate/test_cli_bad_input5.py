"""The command line on bad input, round five (issue #45, bench/hostile_cases.py): each BAD case the probe found."""

from __future__ import annotations

import os

import pytest

from .test_cli_hostile import LEGACY, run


@pytest.mark.parametrize("kind", ["folder", "fifo", "link loop", "dangling link"])
def test_a_pyproject_that_is_not_a_regular_file_stops_the_run(tmp_path, kind):
    """It was passed over as if there were none, so the files its excludes protect were rewritten, exit 0."""
    config = tmp_path / "pyproject.toml"
    if kind == "folder":
        config.mkdir()
    elif kind == "fifo":
        os.mkfifo(config)
    elif kind == "link loop":
        os.symlink("pyproject.toml", config)
    else:
        os.symlink("nowhere.toml", config)
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--write", ".", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"pyproject.toml: not a regular file, so its [tool.lossscale-compat] options" in done.stderr
    assert b"Traceback" not in done.stderr and done.stderr.count(b"\n") == 1, done.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_respect_gitignore_that_is_not_a_boolean_stops_the_run(tmp_path):
    """`respect-gitignore = "no"` was read as true."""
    (tmp_path / "pyproject.toml").write_text('[tool.lossscale-compat]\nrespect-gitignore = "no"\n')
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--write", ".", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"`respect-gitignore` in [tool.lossscale-compat] must be true or false, got 'no'" in done.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_a_max_memory_too_small_to_start_a_worker_is_refused_in_one_line(tmp_path):
    """`--max-memory 1` was an `internal error: ImportError: ... failed to map segment` for each file."""
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--check", "--max-memory", "1", "a.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(b"lossscale-compat: error: --max-memory must be 0 (no bound) or at least 8 MB, got 1")
    assert done.stderr.count(b"\n") == 1 and b"internal error" not in done.stderr, done.stderr


def test_a_max_memory_beyond_any_address_space_is_no_bound(tmp_path):
    """`--max-memory 10**30` overflowed setrlimit in each worker: a traceback, and the file an error."""
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--check", "--max-memory", "1" + "0" * 30, "a.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr and b"would migrate: a.py" in done.stdout + done.stderr, done.stderr
