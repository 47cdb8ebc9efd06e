"""The command line on hostile trees: links, loops, FIFOs, bad arguments, concurrent edits and permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from lossscale_compat.codemods import _cli_options, cli

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

    def record(tasks, target, jobs, limits, job="migrate"):
        started.append(jobs)
        return [cli._Result(path, "unchanged", data, data) for path, data in tasks]

    monkeypatch.setattr(_cli_options, "_cores", lambda: 2)
    monkeypatch.setattr(cli, "_process_many", record)
    cli.main(["migrate", "--check", "-j", "1000", str(tmp_path / "a.py")])
    for i in range(5):
        (tmp_path / f"b{i}.py").write_bytes(LEGACY)
    cli.main(["migrate", "--check", "-j", "1000", str(tmp_path)])
    cli.main(["migrate", "--check", "-j", "3", str(tmp_path)])
    # the number of files, 2 x the cores, as asked
    assert started == [1, 4, 3]


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


# Permissions: run as an unprivileged user where this process can become one.

NOBODY = 65534


@pytest.fixture
def as_nobody():
    """Returns a context manager that runs its body as the unprivileged user `nobody` (uid/gid 65534)."""
    import contextlib

    if not hasattr(os, "setresuid") or os.geteuid() != 0:
        pytest.skip("switching to an unprivileged user needs root and setresuid; this run has neither")

    @contextlib.contextmanager
    def switched():
        groups = os.getgroups()
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, 0)
        os.setresuid(NOBODY, NOBODY, 0)  # the saved uid 0 lets the test switch back
        try:
            yield
        finally:
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
            os.setgroups(groups)

    return switched


@pytest.fixture
def shared_dir():
    """A directory anyone may enter and write (tmp_path's parents are private to root)."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="lsc-perm-")
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path)


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def _warm_up(tmp_path):
    """Runs the CLI once, so that every module it imports lazily is loaded before the switch."""
    (tmp_path / "warm.py").write_bytes(LEGACY)
    cli.main(["migrate", "--write", "-j", "1", str(tmp_path / "warm.py")])


def test_file_of_another_owner_is_not_replaced(tmp_path, shared_dir, as_nobody, capsys):
    _warm_up(tmp_path)
    path = os.path.join(shared_dir, "root_owned.py")
    with open(path, "wb") as handle:
        handle.write(LEGACY)
    os.chmod(path, 0o644)
    capsys.readouterr()
    with as_nobody():
        code = cli.main(["migrate", "--write", "-j", "1", path])
    assert code == 2
    assert _read(path) == LEGACY
    assert os.stat(path).st_uid == 0
    assert "not written: the file is read-only for you (mode 0644, owner uid 0)" in capsys.readouterr().err


def test_read_only_file_is_not_written(tmp_path, shared_dir, as_nobody, capsys):
    _warm_up(tmp_path)
    path = os.path.join(shared_dir, "ro.py")
    with open(path, "wb") as handle:
        handle.write(LEGACY)
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o444)
    capsys.readouterr()
    with as_nobody():
        code = cli.main(["migrate", "--write", "-j", "1", path])
    assert code == 2
    assert _read(path) == LEGACY
    assert "read-only for you (mode 0444" in capsys.readouterr().err
    # Even root leaves a file without any write bit alone, as editors ask before writing one.
    assert cli.main(["migrate", "--write", "-j", "1", path]) == 2
    assert _read(path) == LEGACY


def test_writable_file_of_another_owner_is_written_in_place(tmp_path, shared_dir, as_nobody):
    _warm_up(tmp_path)
    path = os.path.join(shared_dir, "group.py")
    with open(path, "wb") as handle:
        handle.write(LEGACY)
    os.chmod(path, 0o666)
    with as_nobody():
        code = cli.main(["migrate", "--write", "-j", "1", path])
    assert code == 0
    info = os.stat(path)
    assert _read(path) == MODERN
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o666)


def test_owner_group_and_mode_are_kept(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    path = tmp_path / "a.py"
    path.write_bytes(LEGACY)
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o640)
    assert cli.main(["migrate", "--write", "-j", "1", str(path)]) == 0
    info = os.stat(path)
    assert path.read_bytes() == MODERN
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)


def test_hard_links_are_kept(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(LEGACY)
    os.link(path, tmp_path / "other_name.txt")
    inode = os.stat(path).st_ino
    assert cli.main(["migrate", "--write", "-j", "1", str(path)]) == 0
    assert os.stat(path).st_ino == inode
    assert (tmp_path / "other_name.txt").read_bytes() == MODERN


def test_link_to_a_file_outside_the_named_paths_is_not_written_through(tmp_path, capsys):
    (tmp_path / "outside.py").write_bytes(LEGACY)
    (tmp_path / "tree").mkdir()
    os.symlink(tmp_path / "outside.py", tmp_path / "tree" / "link.py")
    assert cli.main(["migrate", "--write", "-j", "1", str(tmp_path / "tree")]) == 2
    assert (tmp_path / "outside.py").read_bytes() == LEGACY
    assert "a symbolic link to" in capsys.readouterr().err
    assert cli.main(["migrate", "--write", "--write-link-targets", "-j", "1", str(tmp_path / "tree")]) == 0
    assert (tmp_path / "outside.py").read_bytes() == MODERN
    assert os.path.islink(tmp_path / "tree" / "link.py")


# Kill safety.

def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(child) for child in handle.read().split()]
    except OSError:
        return []


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads process children from Linux's /proc")
@pytest.mark.parametrize(("files", "started"), [(4, 2)], ids=["pool"])
def test_workers_end_when_the_run_is_killed(tmp_path, files, started):
    import signal
    import time

    site = b"opts.append(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n"
    for i in range(files):
        (tmp_path / f"big{i}.py").write_bytes(b"import tensorflow as tf\n" + site * 3200)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run_ = subprocess.Popen(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "-j", "2", str(tmp_path)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    workers = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < started and time.monotonic() < deadline and run_.poll() is None:
            time.sleep(0.05)
            workers = [pid for pid in _children(run_.pid) if _running(pid)]
        assert len(workers) == started, f"the run did not start {started} worker(s)"
        time.sleep(0.3)
        run_.send_signal(signal.SIGKILL)
        run_.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _running(pid)], "workers outlived the killed run"
    finally:
        if run_.poll() is None:
            run_.kill()
            run_.wait()
        for pid in workers:  # on failure, leave nothing running behind
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_stale_temporary_files_of_killed_runs_are_removed(tmp_path):
    import time

    (tmp_path / "a.py").write_bytes(LEGACY)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".lossscale-compat-{dead.pid}-abc123.tmp"
    live = tmp_path / ".lossscale-compat-1-abc123.tmp"  # pid 1 is alive: another run may still own it
    other = tmp_path / f".lossscale-compat-{dead.pid}-notes.txt"  # not our name
    for path in (stale, live, other):
        path.write_bytes(b"")
        os.utime(path, (time.time() - 60, time.time() - 60))
    assert cli.main(["migrate", "--write", "-j", "1", str(tmp_path)]) == 0
    assert not stale.exists()
    assert live.exists() and other.exists()
    assert (tmp_path / "a.py").read_bytes() == MODERN


# Messages.

def test_parse_error_names_file_line_and_both_messages(tmp_path):
    (tmp_path / "broken.py").write_bytes(
        b"import tensorflow as tf\nx = tf.mixed_precision.experimental.FixedLossScale(\n"
    )
    done = run("--check", "broken.py", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = [line for line in done.stderr.decode().splitlines() if ": error: " in line]
    assert line.startswith("broken.py: error: cannot parse: line 2, column 51: '(' was never closed (libcst: expected one of")


def test_error_libcst_places_wrongly_gets_pythons_line(tmp_path):
    (tmp_path / "indent.py").write_bytes(
        b"import tensorflow as tf\nx = tf.mixed_precision.experimental.FixedLossScale(2)\n  y = 2\n"
    )
    done = run("--check", "indent.py", cwd=tmp_path)
    assert b"indent.py: error: cannot parse: line 3, column " in done.stderr  # libcst alone said 2:1
    assert b": unexpected indent (libcst: expected one of" in done.stderr


def test_nul_byte_is_reported_and_not_written(tmp_path):
    data = LEGACY + b"# a \0 in a comment\n"
    (tmp_path / "nul.py").write_bytes(data)
    done = run("--write", "nul.py", cwd=tmp_path)
    assert done.returncode == 2
    assert b"nul.py: error: a NUL byte at line 3, column 5" in done.stderr
    assert (tmp_path / "nul.py").read_bytes() == data


@pytest.mark.parametrize("source", [3, {"a": 1}, None, ["x = 1\n", 2]])
def test_malformed_notebook_gets_a_plain_message(tmp_path, source):
    cells = [
        {"cell_type": "code", "metadata": {}, "source": LEGACY.decode(), "outputs": [], "execution_count": None},
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None},
    ]
    data = (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()
    (tmp_path / "nb.ipynb").write_bytes(data)
    done = run("--write", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 2
    assert b"internal error" not in done.stderr
    assert b"nb.ipynb: error: cannot read notebook: cell 1's `source`" in done.stderr
    assert (tmp_path / "nb.ipynb").read_bytes() == data


def test_directory_named_through_a_link_is_walked(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.py").write_bytes(LEGACY)
    os.symlink("real", tmp_path / "alias")
    done = run("--write", "alias", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "real" / "a.py").read_bytes() == MODERN
    assert os.path.islink(tmp_path / "alias")
