"""The command line on bad input, round three (issue #31): no partial file, one bad file never ends the run,
escaped output, notebooks' cell magics, bounded size, and the weaker cases."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lossscale_compat.codemods import _write, cli
from lossscale_compat.codemods._engine import migrate_source
from lossscale_compat.codemods._notebook import migrate_notebook

from .test_cli_hostile import LEGACY, MODERN, REPO, run

GROWS = b"import tensorflow as tf\nls = tf.mixed_precision.experimental.DynamicLossScale()\n"
"""A file whose migration is longer than itself (an import is added)."""


# No partial file: a real full file system, made for the test.


@pytest.fixture
def full_disk(tmp_path):
    """A fresh 256 KB tmpfs (root only), unmounted afterwards."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory):
    """Fills the file system of `directory` until it has no free block."""
    with open(os.path.join(directory, "filler"), "wb", buffering=0) as handle:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC


def _crossing_a_block():
    """Bytes under 4,096 long whose migration is over 4,096: the new text needs one more block than the old."""
    new = migrate_source(GROWS).new
    assert len(new) > len(GROWS)
    pad = 4096 - len(GROWS) - (len(new) - len(GROWS)) // 2
    old = GROWS + b"#" * (pad - 1) + b"\n"
    assert len(old) < 4096 < len(migrate_source(old).new)
    return old


def test_in_place_write_on_a_full_disk_keeps_the_old_bytes(full_disk):
    old = _crossing_a_block()
    (full_disk / "a.py").write_bytes(old)
    os.link(full_disk / "a.py", full_disk / "b.py")  # a hard link: written in place
    _fill(full_disk)
    done = run("--write", "-j", "1", "a.py", cwd=full_disk)
    assert done.returncode == 2, done.stderr
    assert b"a.py: error: cannot write: No space left on device" in done.stderr
    assert (full_disk / "a.py").read_bytes() == old  # not its first 4,096 bytes of new text
    os.unlink(full_disk / "filler")
    done = run("--write", "-j", "1", "a.py", cwd=full_disk)
    assert done.returncode == 0 and (full_disk / "b.py").read_bytes() == migrate_source(old).new, done.stderr


def test_renamed_write_and_report_on_a_full_disk_leave_nothing_behind(full_disk):
    old = _crossing_a_block()
    (full_disk / "a.py").write_bytes(old)
    _fill(full_disk)
    done = run("--write", "-j", "1", "--report", "r.json", "a.py", cwd=full_disk)
    assert done.returncode == 2, done.stderr
    assert (full_disk / "a.py").read_bytes() == old
    assert b"--report r.json: cannot write: No space left on device" in done.stderr
    assert sorted(os.listdir(full_disk)) == ["a.py", "filler"]  # no 0-byte report, no temporary file


def test_in_place_write_puts_the_old_bytes_back_when_a_write_fails(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_bytes(LEGACY)
    real_write, calls = os.write, []

    def fail_first(fd, data):
        calls.append(bytes(data[:10]))
        if len(calls) == 1:
            real_write(fd, bytes(data[:7]))
            raise OSError(errno.EIO, "Input/output error")
        return real_write(fd, data)

    monkeypatch.setattr(_write, "reserve", lambda *a: None)  # as where posix_fallocate is unsupported
    monkeypatch.setattr(os, "write", fail_first)
    with pytest.raises(OSError):
        _write._write_in_place(str(path), LEGACY, MODERN)
    monkeypatch.undo()
    assert path.read_bytes() == LEGACY


# One file's crash, hang or memory blow-up is that file's error.

DEEP = {
    "parens.py": b"x = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n",
    "brackets.py": b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "chain.py": b"x = a" + b".b" * 100_000 + b"\n",
    "terms.py": b"x = " + b" + ".join([b"1"] * 100_000) + b"\n",
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_expressions_that_crash_the_parser_are_each_files_error(tmp_path, jobs):
    for name, body in DEEP.items():
        (tmp_path / name).write_bytes(LEGACY + body)
    (tmp_path / "good.py").write_bytes(LEGACY)
    done = run("--write", "-j", jobs, ".", cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    assert (tmp_path / "good.py").read_bytes() == MODERN
    for name, body in DEEP.items():
        assert f"./{name}: error: cannot parse: ".encode() in done.stderr, (name, done.stderr)
        assert (tmp_path / name).read_bytes() == LEGACY + body
    assert b"1 file(s) migrated, 0 unchanged, 0 skipped, 4 error(s)" in done.stderr


def test_stdin_that_crashes_the_parser_is_echoed_back_unchanged(tmp_path):
    data = LEGACY + DEEP["chain.py"]
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "-"],
        input=data,
        capture_output=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == data
    assert b"-: error: cannot parse: " in done.stderr


def test_valid_python_too_deep_for_libcst_says_it_is_valid(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY + b"x = a" + b".b" * 900 + b"\n")
    done = run("--check", "a.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"nests too deeply. It is valid Python" in done.stderr


def _misbehaving(real, **bad):
    """A `cli._process` that, for the file named in `bad`, does what it says: crash, hang or eat memory."""

    def process(path, data, target):
        what = bad.get(os.path.basename(path))
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif what == "hang":
            signal.pause()
        elif what == "memory":
            return [bytearray(1 << 20) for _ in range(1 << 14)]  # 16 GB
        return real(path, data, target)

    return process


@pytest.mark.parametrize(
    ("what", "options", "said"),
    [
        ("crash", [], "the parser crashed on this file (SIGSEGV)"),
        ("hang", ["--timeout", "2"], "it took longer than --timeout (2 s) allows, so it was stopped"),
        ("memory", ["--max-memory", "300"], "it ran out of the memory that --max-memory allows"),
    ],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_worker_that_crashes_hangs_or_runs_out_of_memory_fails_its_file_alone(
    tmp_path, monkeypatch, capsys, what, options, said, jobs
):
    for name in ("a.py", "bad.py", "c.py"):
        (tmp_path / name).write_bytes(LEGACY)
    monkeypatch.setattr(cli, "_process", _misbehaving(cli._process, **{"bad.py": what}))
    code = cli.main(["migrate", "--write", "-j", jobs, *options, str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{tmp_path / 'bad.py'}: error: not migrated: {said}" in err
    assert "The rest of the run went on" in err
    assert (tmp_path / "a.py").read_bytes() == (tmp_path / "c.py").read_bytes() == MODERN
    assert (tmp_path / "bad.py").read_bytes() == LEGACY
    assert "2 file(s) migrated, 0 unchanged, 0 skipped, 1 error(s)" in err


def test_bounds_must_not_be_negative(capsys):
    assert cli.main(["migrate", "--check", "--timeout", "-1", "x.py"]) == 2
    assert "--timeout must be 0 (no bound) or more, got -1.0" in capsys.readouterr().err


# Output that cannot inject workflow commands or terminal escapes, and a reader that goes away.


def _warned(tmp_path, name):
    (tmp_path / name).write_bytes(LEGACY.replace(b"'dynamic'", b"ls"))  # a run-time scale: a warning
    return name


def test_github_annotations_escape_file_names_and_messages(tmp_path):
    name = _warned(tmp_path, "a\n::error file=x::pwned,100%:.py")
    done = run("--check", "--format", "github", ".", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert not any(line.startswith(b"::error file=x") for line in out.splitlines()), out
    assert b"file=./a%0A%3A%3Aerror file=x%3A%3Apwned%2C100%25%3A.py,line=2" in done.stderr
    assert name  # created


@pytest.mark.parametrize("name", ["a\n::error file=x::no.py", "red\x1b[31m.py"])
def test_text_output_quotes_file_names_with_control_characters(tmp_path, name):
    _warned(tmp_path, name)
    done = run("--check", ".", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert not any(line.startswith(b"::error") for line in out.splitlines()), out
    assert b"\x1b" not in out
    assert repr("./" + name).encode() in done.stdout


def test_a_closed_stdout_ends_quietly(tmp_path):
    for i in range(20):
        (tmp_path / f"f{i:02}.py").write_bytes(LEGACY * 100)  # 300 KB of diff, more than a pipe holds
    env = dict(os.environ, PYTHONPATH=REPO)
    with subprocess.Popen(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--diff", "-j", "1", "."],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        process.stdout.readline(), process.stdout.readline()  # as `| head -2`
        process.stdout.close()
        err = process.stderr.read()
        assert process.wait(timeout=120) == 1, err  # files would be migrated, as with every reader
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_a_stdout_that_cannot_encode_a_file_name_escapes_it(tmp_path):
    (tmp_path / "caf\u00e9.py").write_bytes(LEGACY)
    env = dict(os.environ, PYTHONPATH=REPO, PYTHONIOENCODING="ascii")
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    assert done.stdout == b"would migrate: ./caf\\xe9.py\n"


# Notebooks.


def _notebook(*sources):
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources
    ]
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1", "%%capture out", "%%prun"])
def test_cell_magics_whose_body_is_python_are_migrated(magic):
    result = migrate_notebook(_notebook(f"{magic}\n" + LEGACY.decode()))
    assert result.status == "changed", result.findings
    assert result.new == _notebook(f"{magic}\n" + MODERN.decode())


def test_a_cell_that_cannot_be_read_is_named_and_the_rest_migrated():
    result = migrate_notebook(_notebook("x = (\n", LEGACY.decode()))
    assert result.status == "changed"
    assert result.new == _notebook("x = (\n", MODERN.decode())
    assert [(f.cell, f.code) for f in result.findings] == [(0, "LSC203")]


# Size.


def test_a_file_over_max_file_size_is_refused_and_stdin_echoed(tmp_path):
    big = LEGACY + b"x = 1\n" * 500_000  # 3 MB
    (tmp_path / "big.py").write_bytes(big)
    done = run("--write", "big.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"big.py: error: not migrated: the file is 2.9 MB, over --max-file-size (1 MB)" in done.stderr
    assert (tmp_path / "big.py").read_bytes() == big
    env = dict(os.environ, PYTHONPATH=REPO)
    echoed = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "-"],
        input=big,
        capture_output=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert echoed.returncode == 2 and echoed.stdout == big


# The weaker ones.


def test_sigterm_right_after_a_write_still_lists_the_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.py").write_bytes(LEGACY)
    real = _write.replace

    def replace_then_terminated(*args, **kwargs):
        how = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return how

    monkeypatch.setattr(_write, "replace", replace_then_terminated)
    with pytest.raises(SystemExit):
        cli.main(["migrate", "--write", "-j", "1", str(tmp_path)])
    assert (tmp_path / "a.py").read_bytes() == MODERN
    assert f"migrated: {tmp_path / 'a.py'}" in capsys.readouterr().err



@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_the_kernel_hands_another_thread_is_still_held_back_until_the_file_is_listed(
    tmp_path, monkeypatch, capsys, signum
):
    """A process-wide signal goes to any thread that has it unblocked (the worker pool's, pytest-xdist's), and Python
    runs the handler in the main thread at once: blocking it in the main thread alone let it end a write half-listed."""
    import threading

    (tmp_path / "a.py").write_bytes(LEGACY)
    real = _write.replace

    def replace_then_signalled_elsewhere(*args, **kwargs):
        how = real(*args, **kwargs)
        release = threading.Event()
        other = threading.Thread(target=release.wait, args=(10,))
        other.start()
        signal.pthread_kill(other.ident, signum)
        time.sleep(0.2)  # the main thread runs Python's handler here, if nothing holds it back
        release.set()
        other.join()
        return how

    monkeypatch.setattr(_write, "replace", replace_then_signalled_elsewhere)
    # As from a terminal, whatever this test run inherited: a run started with SIGINT ignored keeps ignoring it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = cli.main(["migrate", "--write", "-j", "1", str(tmp_path)])
    except SystemExit as stop:
        code = stop.code
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 128 + signum  # interrupted, after the file was written and listed
    assert (tmp_path / "a.py").read_bytes() == MODERN
    assert f"migrated: {tmp_path / 'a.py'}" in capsys.readouterr().err

def _wait_for_workers(pid):
    """Returns once the process `pid` has started a child (Linux), or after a few seconds elsewhere."""
    children = f"/proc/{pid}/task/{pid}/children"
    if not os.path.exists(children):
        time.sleep(5)
        return
    for _ in range(600):
        with open(children) as handle:
            if handle.read().split():
                time.sleep(0.5)  # the worker has a file
                return
        time.sleep(0.1)


def _migrate_process(cwd, *args, **popen):
    """`lossscale-compat migrate ARGS` started in `cwd`, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "lossscale_compat", "migrate", *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def _sigint(disposition):
    """A `preexec_fn` that starts the run with SIGINT at `disposition`: a script's `cmd &` starts it ignored, and so
    does a test run started that way, as the whole-suite runs of stop 50 were."""
    return lambda: signal.signal(signal.SIGINT, disposition)


def test_sigint_to_the_run_alone_ends_it_with_workers_busy(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_bytes(LEGACY * 10_000)  # many seconds of work each
    # As from a terminal, whatever this test run inherited.
    with _migrate_process(tmp_path, "--check", "-j", "2", ".", preexec_fn=_sigint(signal.SIG_DFL)) as process:
        try:
            _wait_for_workers(process.pid)
            process.send_signal(signal.SIGINT)  # the parent only, not its process group
            _, err = process.communicate(timeout=30)  # a hang guard: the run took 84 s before
        finally:
            process.kill()
        assert process.returncode == 130, err
        assert b"interrupted; 0 file(s) were written" in err


def test_a_run_started_with_sigint_ignored_keeps_ignoring_it_in_its_workers(tmp_path):
    """A run a script started with `cmd &` ignores Ctrl-C, as every program does; its workers did not, so a SIGINT to
    the group ended them and their files were reported as crashed, while the run went on."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_bytes(LEGACY * 2_000)  # a few seconds of work each
    with _migrate_process(
        tmp_path, "--check", "-j", "2", ".", start_new_session=True, preexec_fn=_sigint(signal.SIG_IGN)
    ) as process:
        try:
            _wait_for_workers(process.pid)
            os.killpg(process.pid, signal.SIGINT)  # to the run and its workers
            out, err = process.communicate(timeout=120)
        finally:
            process.kill()
    assert process.returncode == 1, err  # changes pending, as without the signal
    assert b"not migrated" not in err and b"interrupted" not in err
    assert out.count(b"would migrate") == 2 or err.count(b"would migrate") == 2, (out, err)


def test_check_reports_a_read_only_file_as_write_will(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    os.chmod(tmp_path / "a.py", 0o444)
    for mode in ("--check", "--diff", "--write"):
        done = run(mode, "a.py", cwd=tmp_path)
        assert done.returncode == 2, (mode, done.stderr)
        assert b"would migrate" not in done.stdout and b"+++" not in done.stdout
        assert b"the file is read-only for you (mode 0444" in done.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_stdin_filename_without_stdin_is_an_error(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--check", "--stdin-filename", "x.py", "a.py", cwd=tmp_path)
    assert done.returncode == 2
    assert b"--stdin-filename names what is read from -, and - is not among the paths" in done.stderr


def test_a_named_link_loop_is_reported_as_a_loop(tmp_path):
    os.symlink("loop2.py", tmp_path / "loop1.py")
    os.symlink("loop1.py", tmp_path / "loop2.py")
    done = run("--check", "loop1.py", cwd=tmp_path)
    assert done.returncode == 2
    assert b"loop1.py: error: a symbolic link loop, so there is no file to read" in done.stderr
    assert b"no such file" not in done.stderr


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_utf16_file_is_an_unsupported_encoding(tmp_path, encoding):
    (tmp_path / "a.py").write_bytes(LEGACY.decode().encode(encoding))  # with its byte-order mark
    done = run("--check", "a.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"a.py: error: unsupported encoding: the file starts with a {encoding.upper()} byte-order mark".encode() in (
        done.stderr
    )
    assert b"iconv" in done.stderr
