"""The command line on bad input, round two (issue #26): nothing skipped silently, no traceback, one-line errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from lossscale_compat.codemods import _write, cli

from .test_cli_hostile import LEGACY, MODERN, NOBODY, REPO, _warm_up, as_nobody, run, shared_dir  # noqa: F401 - fixtures


def test_a_directory_the_user_cannot_read_is_an_error_not_skipped(tmp_path, shared_dir, as_nobody, capsys):
    _warm_up(tmp_path)
    tree = os.path.join(shared_dir, "T")
    os.makedirs(os.path.join(tree, "sub"))
    with open(os.path.join(tree, "sub", "a.py"), "wb") as handle:
        handle.write(LEGACY)
    os.chmod(tree, 0o777)
    os.chmod(os.path.join(tree, "sub"), 0o300)  # enter and write, not list
    capsys.readouterr()
    with as_nobody():
        assert os.geteuid() == NOBODY
        code = cli.main(["migrate", "--check", "-j", "1", tree])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{os.path.join(tree, 'sub')}: error: cannot read this directory (Permission denied)" in err
    assert "1 error(s)" in err
    # The same directory is read by root: the error was the user's permission, not the walk.
    assert cli.main(["migrate", "--check", "-j", "1", tree]) == 1


def test_hard_links_in_the_tree_are_migrated_once(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    done = run("--write", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(b"migrated: ") == 1
    assert (tmp_path / "a.py").read_bytes() == (tmp_path / "b.py").read_bytes() == MODERN
    assert os.stat(tmp_path / "a.py").st_ino == os.stat(tmp_path / "b.py").st_ino


def test_check_and_write_agree_on_a_link_to_a_file_outside_the_tree(tmp_path):
    (tmp_path / "outside.py").write_bytes(LEGACY)
    (tmp_path / "tree").mkdir()
    os.symlink(tmp_path / "outside.py", tmp_path / "tree" / "link.py")
    for mode in ("--check", "--diff", "--write"):
        done = run(mode, "tree", cwd=tmp_path)
        assert done.returncode == 2, (mode, done.stderr)
        assert b"would migrate" not in done.stdout and b"+++" not in done.stdout
        assert b"a symbolic link to " in done.stderr and b"--write-link-targets" in done.stderr
    assert (tmp_path / "outside.py").read_bytes() == LEGACY
    done = run("--check", "--write-link-targets", "tree", cwd=tmp_path)
    assert done.returncode == 1 and b"would migrate: tree/link.py" in done.stdout


def test_dangling_links_and_link_loops_are_notes(tmp_path):
    (tmp_path / "a.py").write_bytes(MODERN)
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    os.symlink("loop2.py", tmp_path / "loop1.py")
    os.symlink("loop1.py", tmp_path / "loop2.py")
    done = run("--check", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"./dangling.py: note: a dangling symbolic link (its target does not exist), skipped" in done.stderr
    assert b"./loop1.py: note: a symbolic link loop, skipped" in done.stderr
    assert b"3 skipped, 0 error(s)" in done.stderr


def test_ctrl_c_during_write_stops_with_one_line_after_listing_what_was_written(tmp_path, monkeypatch, capsys):
    for i in range(5):
        (tmp_path / f"f{i}.py").write_bytes(LEGACY)
    real_replace, calls = _write.replace, []

    def interrupted_third(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_replace(*args, **kwargs)

    monkeypatch.setattr(_write, "replace", interrupted_third)
    assert cli.main(["migrate", "--write", "-j", "1", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert err.count("migrated: ") == 2
    assert err.splitlines()[-1].startswith("lossscale-compat: interrupted; 2 file(s) were written before it")
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.read_bytes() == MODERN) == ["f0.py", "f1.py"]


def test_sigint_to_a_parallel_write_ends_it_at_once_without_tracebacks(tmp_path):
    for i in range(1500):
        (tmp_path / f"f{i:04}.py").write_bytes(LEGACY)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with subprocess.Popen(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--write", "-j", "2", "."],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        # As from a terminal: a run started in the background of a script (`cmd &`) inherits SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as process:
        first = process.stderr.readline()  # the first file written
        os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C does: to the run and its workers
        rest = process.stderr.read()
    assert process.returncode == 130, first + rest
    err = (first + rest).decode()
    assert first.startswith(b"migrated: ") and "Traceback" not in err and "KeyboardInterrupt" not in err
    listed = {line.split(": ", 1)[1] for line in err.splitlines() if line.startswith("migrated: ")}
    written = {f"./{p.name}" for p in tmp_path.iterdir() if p.read_bytes() == MODERN}
    assert listed == written and 0 < len(written) < 1500
    assert err.splitlines()[-1].startswith(f"lossscale-compat: interrupted; {len(written)} file(s) were written")


def test_invalid_utf8_in_a_comment_is_said_to_be_rejected_by_python(tmp_path):
    data = LEGACY + b"# caf\xe9\n"
    (tmp_path / "latin.py").write_bytes(data)
    python = subprocess.run([sys.executable, "latin.py"], cwd=tmp_path, capture_output=True)
    assert b"SyntaxError" in python.stderr  # Python itself rejects the file
    done = run("--write", "latin.py", cwd=tmp_path)
    assert done.returncode == 2
    assert b"latin.py: error: cannot parse: line 3, column 6: byte 0xe9 is not utf-8: Python rejects" in done.stderr
    assert b"Python accepts" not in done.stderr
    assert (tmp_path / "latin.py").read_bytes() == data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frobnicate", "."], b"lossscale-compat migrate: error: unrecognized arguments: --frobnicate."),
        (["--target", "keras2", "."], b"lossscale-compat migrate: error: argument --target: invalid choice: "),
        (["--report", "", "."], b"lossscale-compat: error: --report needs a file name, got ''."),
        (["--write", "--report", "a.py", "."], b"lossscale-compat: error: --report a.py names a Python file"),
    ],
)
def test_a_usage_error_is_one_line(tmp_path, args, message):
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(message), done.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


@pytest.mark.parametrize("bad", [b"x = 1  # \0\n", b"x = 1  # caf\xe9\n"])
def test_stdin_write_that_cannot_be_migrated_echoes_the_input(tmp_path, bad):
    data = LEGACY + bad
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "lossscale_compat", "migrate", "-", "--write"],
        input=data, capture_output=True, cwd=tmp_path, env=env,
    )
    assert done.returncode == 2
    assert done.stdout == data
    assert b"-: error: " in done.stderr
