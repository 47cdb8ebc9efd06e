"""The command line on bad input, round four (issue #45): output paths only as regular files, the tool's own data
checked at start, every bound on every path, a configuration that cannot be read stops the run."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

import pytest

from lossscale_compat.codemods import _target_names, cli

from .test_cli_hostile import LEGACY, MODERN, run

# Output paths: written only as regular files (through a link to one), never in place of another kind.


def _special_report_paths(tmp_path):
    """A FIFO, a link into /proc, a link to a FIFO, a character device: each made here, none of the machine's."""
    os.mkfifo(tmp_path / "fifo.json")
    os.symlink("/proc/self/fd/1", tmp_path / "proc.json")
    os.symlink("fifo.json", tmp_path / "to-fifo.json")
    os.symlink(str(tmp_path / "proc.json"), tmp_path / "to-proc.json")
    names = ["fifo.json", "proc.json", "to-fifo.json", "to-proc.json"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # only root may make a device node
        os.mknod(tmp_path / "null.json", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        names.append("null.json")
    return names


def _kinds(tmp_path):
    return {
        name: (os.lstat(tmp_path / name).st_mode, os.path.islink(tmp_path / name) and os.readlink(tmp_path / name))
        for name in os.listdir(tmp_path)
    }


def test_a_report_to_a_fifo_device_or_proc_link_is_refused_before_any_work(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    names = _special_report_paths(tmp_path)
    before = _kinds(tmp_path)
    for name in names:
        done = run("--write", "-j", "1", "a.py", "--report", name, cwd=tmp_path)
        assert done.returncode == 2, (name, done.stderr)
        lines = done.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"lossscale-compat: error: --report {name}: "), lines
        assert "not a regular file" in lines[0] and "Instead, name a regular file" in lines[0], lines
    assert _kinds(tmp_path) == before  # nothing replaced, nothing new
    assert (tmp_path / "a.py").read_bytes() == LEGACY  # no work was done


def test_a_report_through_a_link_to_a_regular_file_writes_the_file_and_keeps_the_link(tmp_path):
    (tmp_path / "a.py").write_bytes(LEGACY)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "real.json").write_text("{}\n")
    os.symlink("out/real.json", tmp_path / "report.json")
    done = run("--check", "-j", "1", "a.py", "--report", "report.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert os.readlink(tmp_path / "report.json") == "out/real.json"
    assert json.loads((tmp_path / "out" / "real.json").read_text())["summary"]["changed"] == 1


def test_a_report_path_that_becomes_a_fifo_during_the_run_is_not_replaced(tmp_path, monkeypatch, capsys):
    from lossscale_compat.codemods import _write

    (tmp_path / "a.py").write_bytes(LEGACY)
    report = tmp_path / "r.json"
    real_write = _write.write_whole

    def swap_then_write(path, data):  # the path is checked at start; another process puts a FIFO there meanwhile
        os.mkfifo(report)
        real_write(path, data)

    monkeypatch.setattr(_write, "write_whole", swap_then_write)
    code = cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "a.py"), "--report", str(report)])
    assert code == 2
    assert "cannot write: it is a FIFO, not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(report).st_mode)


# The tool's own data, checked once at start (a copy of it: the install's files are never touched).


def _damage_truncated(folder, name):
    path = folder / name
    path.write_bytes(path.read_bytes()[:100])


def _damage_non_utf8(folder, name):
    path = folder / name
    path.write_bytes(b'{"stack": "\xff\xfe", ' + path.read_bytes()[1:])


def _damage_nested(folder, name):
    (folder / name).write_text("[" * 100_000 + "]" * 100_000)


def _damage_wrong_type(folder, name):
    data = json.loads((folder / name).read_text())
    data["modules"] = ["tensorflow.keras.mixed_precision"]
    (folder / name).write_text(json.dumps(data))


def _damage_names_not_strings(folder, name):
    data = json.loads((folder / name).read_text())
    data["modules"]["tensorflow.keras.mixed_precision"] = [1, 2]
    (folder / name).write_text(json.dumps(data))


def _damage_directory(folder, name):
    (folder / "extra.json").mkdir()


def _damage_not_an_object(folder, name):
    (folder / name).write_text("[]")


DAMAGES = {
    "truncated": _damage_truncated,
    "not UTF-8": _damage_non_utf8,
    "nested 100,000 deep": _damage_nested,
    "modules a list": _damage_wrong_type,
    "names not strings": _damage_names_not_strings,
    "a directory named *.json": _damage_directory,
    "a list, not an object": _damage_not_an_object,
}


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of codemods/target_names/ that the run reads instead of the install's."""
    folder = tmp_path / "target_names"
    shutil.copytree(_target_names.FOLDER, folder)
    monkeypatch.setattr(_target_names, "FOLDER", str(folder))
    _target_names.stacks.cache_clear()
    _target_names.lacking.cache_clear()
    yield folder
    _target_names.stacks.cache_clear()
    _target_names.lacking.cache_clear()


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_verifier_data_is_one_line_and_exit_2_naming_the_file(data_copy, tmp_path, damage, capsys):
    name = sorted(os.listdir(data_copy))[-1]
    DAMAGES[damage](data_copy, name)
    (tmp_path / "a.py").write_bytes(LEGACY)
    code = cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "a.py")])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code == 2 and captured.out == "", captured
    assert len(lines) == 1 and lines[0].startswith("lossscale-compat: error: this install's verifier data "), lines
    assert str(data_copy) in lines[0] and "reinstall lossscale-compat" in lines[0], lines


def test_unreadable_verifier_data_is_one_line_and_exit_2(data_copy, tmp_path, monkeypatch, capsys):
    name = sorted(os.listdir(data_copy))[0]
    real_open = open

    def refusing_open(file, *args, **kwargs):  # root reads a mode-000 file: refuse as the kernel would for a user
        if str(file).endswith(name):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    (tmp_path / "a.py").write_bytes(LEGACY)
    code = cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "a.py")])
    err = capsys.readouterr().err
    assert code == 2 and f"{name} is damaged (PermissionError: Permission denied)" in err, err


def test_intact_data_copy_runs_as_the_install_does(data_copy, tmp_path, capsys):
    (tmp_path / "a.py").write_bytes(LEGACY)
    assert cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "a.py")]) == 1
    assert "error:" not in capsys.readouterr().err


# A configuration that cannot be read stops the run before any file is written.

BROKEN_CONFIGS = {
    "not TOML": b'[tool.lossscale-compat]\nexclude = ["protected/"\n',
    "not UTF-8": b'[tool.lossscale-compat]\nexclude = ["protected/"]\n# \xff\n',
    "tool is not a table": b"tool = 1\n",
    "its table is a value": b'[tool]\n"lossscale-compat" = 3\n',
    "nested 100,000 deep": b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
}


@pytest.mark.parametrize("config", BROKEN_CONFIGS)
def test_a_configuration_that_cannot_be_read_stops_the_run_before_any_write(tmp_path, config):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_bytes(BROKEN_CONFIGS[config])
    (tmp_path / "protected").mkdir()
    (tmp_path / "protected" / "p.py").write_bytes(LEGACY)
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--write", "-j", "1", ".", cwd=tmp_path)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("lossscale-compat: error: ") and "pyproject.toml" in lines[0], lines
    assert (tmp_path / "protected" / "p.py").read_bytes() == LEGACY
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_a_readable_configuration_still_protects_its_excludes(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.lossscale-compat]\nexclude = ["protected/"]\n')
    (tmp_path / "protected").mkdir()
    (tmp_path / "protected" / "p.py").write_bytes(LEGACY)
    (tmp_path / "a.py").write_bytes(LEGACY)
    done = run("--write", "-j", "1", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "protected" / "p.py").read_bytes() == LEGACY and (tmp_path / "a.py").read_bytes() == MODERN


# Every value the option parser takes is valid or refused in one line.


@pytest.mark.parametrize("flag", ["--max-file-size", "--timeout"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "1e999"])
def test_a_bound_the_parser_takes_is_valid_or_refused_in_one_line(tmp_path, flag, value, capsys):
    (tmp_path / "a.py").write_bytes(LEGACY)
    code = cli.main(["migrate", "--check", "-j", "1", f"{flag}={value}", str(tmp_path / "a.py")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"lossscale-compat: error: {flag} must be"), lines
    assert "Instead, pass 0 for no bound" in lines[0]


def test_max_memory_negative_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "a.py").write_bytes(LEGACY)
    assert cli.main(["migrate", "--check", "--max-memory", "-5", str(tmp_path / "a.py")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "--max-memory must be" in lines[0], lines


# Every bound applies to every path: --strip-annotations, --annotate, stdin, notebooks, files never read whole.

ANNOTATED = LEGACY.rstrip(b"\n") + b"  # lossscale-compat: LSC101 x\n"


def _slow(*args, **kwargs):
    import time

    time.sleep(30)


def _out_of_memory(*args, **kwargs):
    raise MemoryError


@pytest.mark.parametrize(
    "option, job",
    [
        ("--strip-annotations", "strip"),
        ("--annotate", "annotate"),
    ],
)
@pytest.mark.parametrize(
    "stop, timeout, says",
    [
        (_slow, "0.5", "it took longer than --timeout (0.5 s) allows"),
        # A timeout that a loaded machine's migration cannot reach first, so the memory error is what stops it.
        (_out_of_memory, "120", "it ran out of the memory that --max-memory allows"),
    ],
)
def test_annotating_and_stripping_run_in_bounded_workers(
    tmp_path, monkeypatch, capsys, option, job, stop, timeout, says
):
    from lossscale_compat.codemods import _annotate, _isolate

    (tmp_path / "a.py").write_bytes(ANNOTATED)
    (tmp_path / "b.py").write_bytes(ANNOTATED)
    real = getattr(_annotate, job)
    monkeypatch.setattr(_annotate, job, lambda data, *rest: stop() if b"\nb = 1" in data else real(data, *rest))
    # Only b.py is held to --timeout: a.py, the file that shows the run went on, may take a loaded machine any time.
    give = _isolate._Worker.give
    monkeypatch.setattr(
        _isolate._Worker,
        "give",
        lambda self, i, path, data, seconds: give(self, i, path, data, seconds if b"\nb = 1" in data else 0),
    )
    (tmp_path / "b.py").write_bytes(ANNOTATED + b"\nb = 1\n")  # the file the worker cannot finish
    code = cli.main(["migrate", "--write", "-j", "1", "--timeout", timeout, option, str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"b.py: error: not migrated: {says}" in err, err
    assert (tmp_path / "b.py").read_bytes() == ANNOTATED + b"\nb = 1\n"  # left alone
    assert (tmp_path / "a.py").read_bytes() != ANNOTATED  # the run went on


def test_strip_annotations_refuses_a_file_over_max_file_size(tmp_path):
    big = ANNOTATED + b"x = 1\n" * 200_000
    (tmp_path / "a.py").write_bytes(big)
    done = run("--write", "--strip-annotations", "a.py", cwd=tmp_path)
    assert done.returncode == 2 and b"over --max-file-size (1 MB)" in done.stderr, done.stderr
    assert (tmp_path / "a.py").read_bytes() == big


def test_a_file_over_the_bound_is_never_read_whole(tmp_path, monkeypatch, capsys):
    from lossscale_compat.codemods import _write

    with open(tmp_path / "big.py", "wb") as handle:  # 64 MB, sparse: a TF 2.4 name at its end
        handle.truncate(64 << 20)
        handle.seek(0, os.SEEK_END)
        handle.write(LEGACY)
    (tmp_path / "other.py").write_bytes(b"x = 1\n" * 300_000)  # over the bound, names nothing: unchanged
    read = []
    real_read_all = _write.read_all

    def counting_read_all(fd):
        data = real_read_all(fd)
        read.append(len(data))
        return data

    monkeypatch.setattr(_write, "read_all", counting_read_all)
    code = cli.main(["migrate", "--check", "-j", "1", str(tmp_path / "big.py"), str(tmp_path / "other.py")])
    err = capsys.readouterr().err
    assert code == 2 and "big.py: error: not migrated: the file is 64.0 MB, over --max-file-size (1 MB)" in err, err
    assert "1 unchanged" in err and "other.py: error" not in err, err
    assert read == [], read  # neither file was read into memory


def test_a_notebook_over_max_memory_is_refused_unread(tmp_path):
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [LEGACY.decode()]}
    notebook = {"cells": [cell], "metadata": {"pad": "x" * (9 << 20)}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook))
    done = run("--check", "--max-memory", "8", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"nb.ipynb: error: not migrated: the notebook is 9.0 MB, over the --max-memory" in done.stderr


def _on_stdin(args, stdin, cwd):
    import subprocess
    import sys

    from .test_cli_hostile import REPO

    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(stdin, "rb") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "lossscale_compat", "migrate", *args],
            cwd=cwd,
            env=env,
            stdin=handle,
            capture_output=True,
            timeout=60,
        )
    return done.returncode, done.stdout, done.stderr


def test_endless_stdin_is_refused_after_the_bound_not_read_whole(tmp_path):
    code, out, err = _on_stdin(["--check", "-"], "/dev/zero", tmp_path)  # read whole, it never ends
    assert code == 2 and out == b"", err
    assert b"-: error: not migrated: the file is more than 1 MB, over --max-file-size (1 MB)" in err, err


def test_stdin_over_the_bound_goes_through_a_write_filter_whole(tmp_path):
    data = LEGACY + b"#" * (3 << 20) + b"\n"
    (tmp_path / "in.py").write_bytes(data)
    code, out, err = _on_stdin(["--write", "-"], tmp_path / "in.py", tmp_path)
    assert code == 2 and b"over --max-file-size" in err, err
    assert out == data  # the filter never cuts the file


def test_running_out_of_max_memory_is_said_as_such_not_as_nesting(tmp_path):
    (tmp_path / "big.py").write_bytes(LEGACY + b"x = [" + b"1, " * 1_000_000 + b"]\n")
    done = run("--check", "-j", "1", "--max-file-size", "0", "--max-memory", "40", "big.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert b"it ran out of the memory that --max-memory allows" in done.stderr, done.stderr
    assert b"nested" not in done.stderr


# A UTF-8 byte-order mark: annotated and stripped like any file, the mark kept.


def test_a_file_with_a_utf8_bom_is_annotated_and_stripped(tmp_path):
    from lossscale_compat.codemods import _annotate, _warnings

    data = b"\xef\xbb\xbf" + LEGACY
    finding = _warnings.Finding(2, 0, "LSC101")
    annotated = _annotate.annotate(data, [finding])
    assert annotated.startswith(b"\xef\xbb\xbf") and b"# lossscale-compat: LSC101 " in annotated, annotated
    assert _annotate.strip(annotated) == data


# The verifier follows a dead module however it is imported by name.


@pytest.mark.parametrize("call", [
    '__import__("tensorflow.keras.mixed_precision.experimental")',
    'importlib.import_module(name="tensorflow.keras.mixed_precision.experimental")',
    'importlib.import_module(".experimental", "tensorflow.keras.mixed_precision")',
    'getattr(importlib, "import_module")("tensorflow.keras.mixed_precision.experimental")',
    'getattr(builtins, "__import__")("tensorflow.keras.mixed_precision.experimental")',
])
def test_the_verifier_follows_every_spelling_of_an_import_by_name(call):
    import ast

    from lossscale_compat.codemods import _verify_names

    tree = ast.parse(f"import importlib\nmp = {call}\n")
    names = [name for *_, name, _via in _verify_names.references(tree)]
    assert "tensorflow.keras.mixed_precision.experimental" in names, names


def test_the_verifier_follows_import_module_bound_by_getattr():
    import ast

    from lossscale_compat.codemods import _verify_names

    tree = ast.parse(
        'import importlib\nim = getattr(importlib, "import_module")\nmp = im("tensorflow.keras.mixed_precision.experimental")\n'
    )
    names = [name for *_, name, _via in _verify_names.references(tree)]
    assert "tensorflow.keras.mixed_precision.experimental" in names, names


# Old Mac line endings (CR alone): migrated like any file, each `\r` kept.


def test_a_file_with_cr_only_line_endings_is_migrated_keeping_them(tmp_path):
    before = LEGACY.replace(b"\n", b"\r") + b"print(opt)\r"
    after = MODERN.replace(b"\n", b"\r") + b"print(opt)\r"
    (tmp_path / "mac.py").write_bytes(before)
    checked = run("--check", "-j", "1", "mac.py", cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert b"mac.py" in checked.stdout + checked.stderr, checked.stderr
    done = run("--write", "-j", "1", "mac.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"migrated: mac.py" in done.stderr, done.stderr
    assert (tmp_path / "mac.py").read_bytes() == after


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"])
def test_the_diff_of_a_file_applies_with_patch_whatever_its_line_endings(tmp_path, ending):
    """`patch` ends lines at \n alone: the diff of a CR-only file, cut at each \r, was refused as malformed."""
    before = LEGACY.replace(b"\n", ending) + b"print(opt)" + ending
    (tmp_path / "mac.py").write_bytes(before)
    diff = run("--diff", "-j", "1", "mac.py", cwd=tmp_path)
    assert diff.returncode == 1, diff.stderr
    (tmp_path / "patched_copy.py").write_bytes(before)
    applied = subprocess.run(["patch", "patched_copy.py"], input=diff.stdout, cwd=tmp_path, capture_output=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert run("--write", "-j", "1", "mac.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "patched_copy.py").read_bytes() == (tmp_path / "mac.py").read_bytes() != before


def test_a_cr_only_file_changed_on_its_last_line_is_migrated_not_skipped(tmp_path):
    """libcst prints a CR-only file without its last `\r`: the change on that line was skipped as LSC201."""
    (tmp_path / "mac.py").write_bytes(LEGACY.replace(b"\n", b"\r"))
    done = run("--write", "-j", "1", "mac.py", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert b"LSC201" not in done.stdout + done.stderr
    assert (tmp_path / "mac.py").read_bytes() == MODERN.replace(b"\n", b"\r")
