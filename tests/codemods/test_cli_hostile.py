"""The command line on hostile trees: links, loops, FIFOs, bad arguments, concurrent edits and permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from codemods import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGACY = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
MODERN = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"


def run(*args, cwd, timeout=60):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", *args],
        cwd=cwd, capture_output=True, env=env, timeout=timeout,
    )


def listed(done):
    return sorted(line.split(": ", 1)[1] for line in done.stdout.decode().splitlines())


def test_self_links_and_loops_end_and_visit_each_file_once(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_bytes(LEGACY)
    os.symlink(".", tmp_path / "s1")
    os.symlink(".", tmp_path / "s2")
    os.symlink("..", tmp_path / "sub" / "up")
    done = run("--check", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert listed(done) == [os.path.join(".", "a.py"), os.path.join(".", "sub", "b.py")]
    assert b"./s1: note: a symbolic link to a directory, not followed" in done.stderr
    assert b"2 file(s) would be migrated" in done.stderr
    done = run("--write", ".", cwd=tmp_path)
    assert done.stderr.count(b"migrated: ") == 2, done.stderr
    assert (tmp_path / "a.py").read_bytes() == MODERN


def test_file_named_twice_or_reached_by_a_link_is_migrated_once(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    os.symlink("a.py", tmp_path / "alias.py")
    done = run("--check", "a.py", "./a.py", "alias.py", ".", cwd=tmp_path)
    assert listed(done) == ["a.py"]


def test_directory_link_out_of_the_tree_is_not_followed(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.py").write_bytes(LEGACY)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "t.py").write_bytes(LEGACY)
    os.symlink(tmp_path / "outside", tmp_path / "tree" / "vendor")
    done = run("--check", "tree", cwd=tmp_path)
    assert listed(done) == [os.path.join("tree", "t.py")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_skipped_with_a_note_and_does_not_hang(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    os.mkfifo(tmp_path / "b.py")
    done = run("--check", ".", cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert b"./b.py: note: not a regular file (a FIFO), skipped" in done.stderr
    done = run("--check", "b.py", cwd=tmp_path, timeout=60)
    assert done.returncode == 0
    assert b"b.py: note: not a regular file (a FIFO), skipped" in done.stderr


@pytest.mark.parametrize("report", ["missing/r.json", "adir"])
def test_bad_report_path_fails_before_any_write(tmp_path, report):
    (tmp_path / "a.py").write_bytes(LEGACY)
    (tmp_path / "adir").mkdir()
    done = run("--write", "--report", report, "a.py", cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(b"lossscale-compat: error: --report ")
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_jobs_zero_is_rejected_and_jobs_are_capped(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--write", "-j", "0", "a.py", cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and b"-j 1" in done.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY
    started = []

    def record(tasks, target, jobs):
        started.append(jobs)
        return [cli._Result(path, "unchanged", data, data) for path, data in tasks]

    monkeypatch.setattr(cli, "_cores", lambda: 2)
    monkeypatch.setattr(cli, "_process_many", record)
    cli.main(["migrate", "--check", "-j", "1000", str(tmp_path / "a.py")])
    for i in range(5):
        (tmp_path / f"b{i}.py").write_bytes(LEGACY)
    cli.main(["migrate", "--check", "-j", "1000", str(tmp_path)])
    cli.main(["migrate", "--check", "-j", "3", str(tmp_path)])
    assert started == [1, 4, 3]  # the number of files, 2 x the cores, as asked


def test_file_edited_during_the_run_is_left_alone(tmp_path, monkeypatch, capsys):
    path = tmp_path / "a.py"
    path.write_bytes(LEGACY)
    real = cli._process

    def process_then_edit(name, data, target):  # someone saves the file while it is migrated
        result = real(name, data, target)
        with open(path, "ab") as handle:
            handle.write(b"x = 1\n")
        return result

    monkeypatch.setattr(cli, "_process", process_then_edit)
    assert cli.main(["migrate", "--write", "-j", "1", str(path)]) == 2
    assert path.read_bytes() == LEGACY + b"x = 1\n"
    assert "changed on disk while it was migrated" in capsys.readouterr().err


def test_file_emptied_during_the_run_is_left_alone(tmp_path, monkeypatch, capsys):
    path = tmp_path / "a.py"
    path.write_bytes(LEGACY)
    real = cli._process
    monkeypatch.setattr(cli, "_process", lambda *a: (path.write_bytes(b""), real(*a))[1])
    assert cli.main(["migrate", "--write", "-j", "1", str(path)]) == 2
    assert path.read_bytes() == b""
