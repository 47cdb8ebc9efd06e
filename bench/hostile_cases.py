"""Reruns the hostile cases of round five (issue #45) against every entry point and prints a table: the case, the
kind of result expected, and what was observed: OK, WEAK (the right outcome, said badly: several lines, or silent)
or BAD (a traceback, a hang, a wrong exit code, a file changed that must not be, or an internal error type).

The cases are data (`MIGRATE`, `OTHER_COMMANDS`, `API` below). The command-line cases run in subprocesses, never
importing TensorFlow here; the API cases run in one child process that imports TensorFlow once.

Run with the interpreter of a test stack, from the repository:
    python bench/hostile_cases.py [--only WORD ...] [--skip-api] [--markdown]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
NOTEBOOK_CELL = LEGACY.decode()
TRACE = os.path.join(REPO, "tests", "goldens", "trace_project_schedule.jsonl")
HANG = 60.0  # seconds after which a case is called hung (4 times that for commands that import TensorFlow)
SUMMARY = re.compile(r"^lossscale-compat: \d+ file\(s\)")
TF_LOG = re.compile(r"^([IWEF]\d{4} |WARNING: All log messages before absl)")  # TensorFlow's C++ log, not the tool

# What is expected, as exit codes: the kind named in the table, and the codes it allows.
KINDS = {
    "refused": {2},
    "unchanged": {0},
    "pending": {1},
    "migrated": {0},
    "skipped": {0},  # a named path that is not a regular file: "skipped", the run goes on
    "same": {0},
    "different": {1},
    "clean": {0, 1, 2},  # any outcome of the tool's own, said without a traceback
}


def notebook(*cells: Any, **top: Any) -> bytes:
    """A notebook of code cells with these sources (a string, or a cell dict as is)."""
    built = [
        c if isinstance(c, dict) else {"cell_type": "code", "metadata": {}, "source": c, "outputs": []} for c in cells
    ]
    return json.dumps({"cells": built, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}).encode()


def retraced(edit: Callable[[list[dict]], None]) -> bytes:
    """The golden trace with its records edited by `edit` and its SHA-256 made to match again (a hostile user can)."""
    with open(TRACE, "rb") as handle:
        lines = handle.read().rstrip(b"\n").split(b"\n")
    records = [json.loads(line) for line in lines]
    edit(records)
    body = [json.dumps(r).encode() for r in records[:-1]]
    end = dict(records[-1], sha256=hashlib.sha256(b"".join(line + b"\n" for line in body)).hexdigest())
    return b"\n".join([*body, json.dumps(end).encode()]) + b"\n"


def _steps(records: list[dict]) -> list[dict]:
    return [r for r in records if "step" in r]


def _set_step(key: str, value: Any) -> Callable[[list[dict]], None]:
    def edit(records: list[dict]) -> None:
        for step in _steps(records):
            step[key] = value

    return edit


def _drop_step(key: str) -> Callable[[list[dict]], None]:
    def edit(records: list[dict]) -> None:
        for step in _steps(records):
            step.pop(key, None)

    return edit


def _set_header(key: str, value: Any) -> Callable[[list[dict]], None]:
    def edit(records: list[dict]) -> None:
        records[0][key] = value

    return edit


def _set_optimizers(key: str, value: Any) -> Callable[[list[dict]], None]:
    def edit(records: list[dict]) -> None:
        for record in records:
            if "class" in record:
                record[key] = value

    return edit


def _keras_zip(members: dict[str, bytes]) -> bytes:
    path = tempfile.mktemp(suffix=".keras")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with open(path, "rb") as handle:
        data = handle.read()
    os.unlink(path)
    return data


FIFO = object()
"""A file's content that asks for a named pipe (nobody writes to it)."""
LINK = "->"
"""A file's content (LINK, target) that asks for a symbolic link."""

# (name, files {path: bytes, FIFO, (LINK, target) or None for a folder}, argv after `migrate`, kind, stdin or None)
MIGRATE: list[tuple[str, dict[str, Any], list[str], str, bytes | None]] = [
    ("empty file", {"a.py": b""}, ["--check", "a.py"], "unchanged", None),
    ("NUL byte in a comment", {"a.py": LEGACY + b"# \0\n"}, ["--check", "a.py"], "refused", None),
    (
        "binary file named .py",
        {"a.py": b"\x89PNG\r\n\x1a\n\xff\xfe\0" + LEGACY},
        ["--check", "a.py"],
        "refused",
        None,
    ),
    (
        "latin-1 coding line, é",
        {"a.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LEGACY},
        ["--check", "a.py"],
        "pending",
        None,
    ),
    ("unknown coding line", {"a.py": b"# -*- coding: klingon -*-\n" + LEGACY}, ["--check", "a.py"], "refused", None),
    (
        "ascii coding line, é",
        {"a.py": b"# coding: ascii\n# caf\xc3\xa9\n" + LEGACY},
        ["--check", "a.py"],
        "refused",
        None,
    ),
    (
        "BOM and a latin-1 coding line",
        {"a.py": b"\xef\xbb\xbf# coding: latin-1\n" + LEGACY},
        ["--check", "a.py"],
        "refused",
        None,
    ),
    (
        "tabs and spaces mixed",
        {"a.py": LEGACY + b"if x:\n\tpass\n        pass\n"},
        ["--check", "a.py"],
        "refused",
        None,
    ),
    ("Python 2 print statement", {"a.py": LEGACY + b"print 'hi'\n"}, ["--check", "a.py"], "refused", None),
    (
        "gate word only in a string",
        {"a.py": b"s = 'mixed_precision LossScale'\n"},
        ["--check", "a.py"],
        "unchanged",
        None,
    ),
    (
        "match statement",
        {"a.py": LEGACY + b"match x:\n    case 1:\n        pass\n"},
        ["--check", "a.py"],
        "pending",
        None,
    ),
    (
        "walrus and lambda defaults",
        {"a.py": LEGACY + b"if (n := 3):\n    f = lambda o=opt: o\n"},
        ["--check", "a.py"],
        "pending",
        None,
    ),
    ("PEP 695 type alias", {"a.py": LEGACY + b"type X = int\n"}, ["--check", "a.py"], "clean", None),
    ("form feeds between lines", {"a.py": LEGACY.replace(b"\n", b"\n\x0c", 1)}, ["--check", "a.py"], "pending", None),
    (
        "mixed CRLF, LF and CR",
        {"a.py": LEGACY.replace(b"\n", b"\r\n", 1).replace(b"opt =", b"x = 1\ropt =")},
        ["--check", "a.py"],
        "pending",
        None,
    ),
    ("backslash at end of file", {"a.py": LEGACY + b"x = 1 + \\"}, ["--check", "a.py"], "refused", None),
    ("unterminated triple quote", {"a.py": LEGACY + b's = """never ends\n'}, ["--check", "a.py"], "refused", None),
    (
        "101 levels of indentation",
        {"a.py": LEGACY + b"".join(b" " * i + b"if x:\n" for i in range(101)) + b" " * 101 + b"pass\n"},
        ["--check", "a.py"],
        "refused",
        None,
    ),
    ("lone surrogate escape in a string", {"a.py": LEGACY + b"s = '\\ud800'\n"}, ["--check", "a.py"], "pending", None),
    ("RTL override in source", {"a.py": LEGACY + "x\u202e = 1\n".encode()}, ["--check", "a.py"], "refused", None),
    ("non-ASCII identifier", {"a.py": LEGACY.replace(b"opt =", "ö =".encode())}, ["--check", "a.py"], "pending", None),
    (
        "1,000 sites in one file",
        {
            "a.py": b"import tensorflow as tf\n"
            + b"".join(
                b"o%d = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n" % i
                for i in range(1000)
            )
        },
        ["--check", "a.py"],
        "pending",
        None,
    ),
    (
        "site in an f-string expression",
        {"a.py": b"import tensorflow as tf\nf'{tf.keras.mixed_precision.experimental.LossScaleOptimizer}'\n"},
        ["--check", "a.py"],
        "clean",
        None,
    ),
    ("name with a newline", {"a\nb.py": LEGACY}, ["--check", "."], "pending", None),
    ("name with an ESC", {"a\x1b[31m.py": LEGACY}, ["--check", "."], "pending", None),
    ("name starting with a dash", {"-x.py": LEGACY}, ["--check", "--", "-x.py"], "pending", None),
    (
        "name that is not UTF-8",
        {b"\xff.py".decode("utf-8", "surrogateescape"): LEGACY},
        ["--check", "."],
        "pending",
        None,
    ),
    ("folder named x.py", {"x.py": None, "x.py/a.py": LEGACY}, ["--check", "x.py"], "pending", None),
    ("FIFO named a.py in a folder", {"a.py": FIFO, "b.py": LEGACY}, ["--check", "."], "clean", None),
    ("FIFO named a.py on the command line", {"a.py": FIFO}, ["--check", "a.py"], "skipped", None),
    ("/dev/zero on the command line", {}, ["--check", "/dev/zero"], "skipped", None),
    ("link to /dev/zero in a folder", {"z.py": (LINK, "/dev/zero"), "b.py": LEGACY}, ["--check", "."], "clean", None),
    ("broken link named", {"a.py": (LINK, "nowhere.py")}, ["--check", "a.py"], "refused", None),
    (
        "link loop in a folder",
        {"l1.py": (LINK, "l2.py"), "l2.py": (LINK, "l1.py"), "b.py": LEGACY},
        ["--check", "."],
        "clean",
        None,
    ),
    (
        "folder linked into itself",
        {"sub": None, "sub/a.py": LEGACY, "sub/self": (LINK, "..")},
        ["--check", "."],
        "pending",
        None,
    ),
    ("read-only file, --write", {"a.py": LEGACY, "chmod a.py": 0o444}, ["--write", "a.py"], "refused", None),
    ("no such path", {}, ["--check", "missing.py"], "refused", None),
    ("empty path argument", {}, ["--check", ""], "refused", None),
    ("path of 5,000 characters", {}, ["--check", "x" * 5000 + ".py"], "refused", None),
    ("same file named twice", {"a.py": LEGACY}, ["--write", "a.py", "./a.py"], "migrated", None),
    ("hard link and its file", {"a.py": LEGACY, "hard b.py": "a.py"}, ["--write", "a.py", "b.py"], "migrated", None),
    (
        "__pycache__ only",
        {"__pycache__": None, "__pycache__/a.cpython-311.pyc": b"\0mixed_precision"},
        ["--check", "."],
        "clean",
        None,
    ),
    ("500 files", {f"f{i}.py": LEGACY for i in range(500)}, ["--check", "-j", "2", "."], "pending", None),
    ("notebook that is not JSON", {"n.ipynb": b"{" + LEGACY}, ["--check", "n.ipynb"], "refused", None),
    (
        "notebook that is a JSON list",
        {"n.ipynb": json.dumps([NOTEBOOK_CELL]).encode()},
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook cells not a list",
        {"n.ipynb": json.dumps({"cells": {NOTEBOOK_CELL: 1}, "nbformat": 4}).encode()},
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook source an int",
        {"n.ipynb": notebook({"cell_type": "code", "source": 5, "metadata": {}, "outputs": []}, NOTEBOOK_CELL)},
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook source list of ints",
        {"n.ipynb": notebook({"cell_type": "code", "source": [1, 2], "metadata": {}}, NOTEBOOK_CELL)},
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook nbformat 3 (worksheets)",
        {
            "n.ipynb": json.dumps(
                {"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": NOTEBOOK_CELL}]}]}
            ).encode()
        },
        ["--check", "n.ipynb"],
        "clean",
        None,
    ),
    (
        "notebook nested 100,000 deep",
        {
            "n.ipynb": b'{"cells": [], "m": '
            + json.dumps(NOTEBOOK_CELL).encode()
            + b', "x": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}"
        },
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook with NaN in outputs",
        {
            "n.ipynb": notebook(
                {
                    "cell_type": "code",
                    "source": NOTEBOOK_CELL,
                    "metadata": {},
                    "outputs": [{"output_type": "execute_result", "data": {"x": float("nan")}}],
                }
            )
        },
        ["--write", "n.ipynb"],
        "migrated",
        None,
    ),
    (
        "notebook in UTF-16",
        {"n.ipynb": notebook(NOTEBOOK_CELL).decode().encode("utf-16")},
        ["--check", "n.ipynb"],
        "refused",
        None,
    ),
    (
        "notebook with a BOM",
        {"n.ipynb": b"\xef\xbb\xbf" + notebook(NOTEBOOK_CELL)},
        ["--check", "n.ipynb"],
        "clean",
        None,
    ),
    (
        "notebook raw cell with a site",
        {"n.ipynb": notebook({"cell_type": "raw", "source": NOTEBOOK_CELL, "metadata": {}})},
        ["--check", "n.ipynb"],
        "unchanged",
        None,
    ),
    (
        "notebook cell_type an int",
        {"n.ipynb": notebook({"cell_type": 3, "source": NOTEBOOK_CELL, "metadata": {}})},
        ["--check", "n.ipynb"],
        "clean",
        None,
    ),
    (
        "notebook of R with a site",
        {"n.ipynb": notebook(NOTEBOOK_CELL, metadata={"language_info": {"name": "R"}})},
        ["--check", "n.ipynb"],
        "clean",
        None,
    ),
    (
        "notebook duplicate keys",
        {
            "n.ipynb": b'{"cells": [], "cells": [{"cell_type": "code", "source": '
            + json.dumps(NOTEBOOK_CELL).encode()
            + b', "metadata": {}, "outputs": []}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
        },
        ["--check", "n.ipynb"],
        "pending",
        None,
    ),
    ("stdin empty", {}, ["--check", "-"], "unchanged", b""),
    ("stdin binary with a gate word", {}, ["--check", "-"], "refused", b"\0\xff" + LEGACY),
    ("stdin --write of bad input", {}, ["--write", "-"], "refused", LEGACY + b"x = (\n"),
    ("stdin named .ipynb, Python inside", {}, ["--check", "--stdin-filename", "x.ipynb", "-"], "refused", LEGACY),
    ("stdin named twice", {}, ["--check", "-", "-"], "clean", LEGACY),
    ("--report to a folder", {"a.py": LEGACY, "out": None}, ["--check", "--report", "out", "a.py"], "refused", None),
    (
        "--report in a missing folder",
        {"a.py": LEGACY},
        ["--check", "--report", "no/such/r.json", "a.py"],
        "refused",
        None,
    ),
    ("--report onto the file migrated", {"a.py": LEGACY}, ["--write", "--report", "a.py", "a.py"], "refused", None),
    ("--report to /dev/full", {"a.py": LEGACY}, ["--check", "--report", "/dev/full", "a.py"], "refused", None),
    (
        "--strip-annotations, marker in a string",
        {"a.py": b"s = '''\nx = 1  # lossscale-compat: LSC101 kept\n'''\n"},
        ["--write", "--strip-annotations", "a.py"],
        "unchanged",
        None,
    ),
    (
        "--annotate a notebook",
        {"n.ipynb": notebook(NOTEBOOK_CELL)},
        ["--write", "--annotate", "n.ipynb"],
        "migrated",
        None,
    ),
    ("--check with --write", {"a.py": LEGACY}, ["--check", "--write", "a.py"], "refused", None),
    (
        "--annotate with --strip-annotations",
        {"a.py": LEGACY},
        ["--annotate", "--strip-annotations", "a.py"],
        "refused",
        None,
    ),
    ("--explain an unknown code", {}, ["--explain", "LSC999"], "refused", None),
    ("--explain an empty code", {}, ["--explain", ""], "refused", None),
    ("--explain 10,000 characters", {}, ["--explain", "L" * 10_000], "refused", None),
    ("--target unknown", {"a.py": LEGACY}, ["--target", "keras9", "a.py"], "refused", None),
    ("-j 0", {"a.py": LEGACY}, ["--check", "-j", "0", "a.py"], "clean", None),
    ("-j -1", {"a.py": LEGACY}, ["--check", "-j", "-1", "a.py"], "refused", None),
    ("-j many", {"a.py": LEGACY}, ["--check", "-j", "many", "a.py"], "refused", None),
    ("-j 100000", {"a.py": LEGACY}, ["--check", "-j", "100000", "a.py"], "pending", None),
    ("--timeout -1", {"a.py": LEGACY}, ["--check", "--timeout", "-1", "a.py"], "refused", None),
    ("--timeout nan", {"a.py": LEGACY}, ["--check", "--timeout", "nan", "a.py"], "refused", None),
    ("--timeout 1e400", {"a.py": LEGACY}, ["--check", "--timeout", "1e400", "a.py"], "refused", None),
    ("--timeout 0.000001", {"a.py": LEGACY}, ["--check", "--timeout", "0.000001", "a.py"], "refused", None),
    ("--max-memory -5", {"a.py": LEGACY}, ["--check", "--max-memory", "-5", "a.py"], "refused", None),
    ("--max-memory 1", {"a.py": LEGACY}, ["--check", "--max-memory", "1", "a.py"], "refused", None),
    ("--max-memory 10**30", {"a.py": LEGACY}, ["--check", "--max-memory", "1" + "0" * 30, "a.py"], "clean", None),
    ("--max-file-size 0.000001", {"a.py": LEGACY}, ["--check", "--max-file-size", "0.000001", "a.py"], "refused", None),
    ("--max-file-size 1e400", {"a.py": LEGACY}, ["--check", "--max-file-size", "1e400", "a.py"], "refused", None),
    ("--exclude an empty pattern", {"a.py": LEGACY}, ["--check", "--exclude", "", "."], "clean", None),
    ("--exclude '['", {"a.py": LEGACY}, ["--check", "--exclude", "[", "."], "clean", None),
    ("--format unknown", {"a.py": LEGACY}, ["--format", "xml", "a.py"], "refused", None),
    ("--format github, name with ::", {"a::b.py": LEGACY}, ["--check", "--format", "github", "."], "pending", None),
    (
        "--format json with a bad file",
        {"a.py": LEGACY + b"x = (\n"},
        ["--check", "--format", "json", "a.py"],
        "refused",
        None,
    ),
    ("unknown option", {"a.py": LEGACY}, ["--frobnicate", "a.py"], "refused", None),
    (
        "pyproject: exclude is 5",
        {"pyproject.toml": b"[tool.lossscale-compat]\nexclude = 5\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: exclude ['[']",
        {"pyproject.toml": b"[tool.lossscale-compat]\nexclude = ['[']\n", "a.py": LEGACY},
        ["--check", "."],
        "clean",
        None,
    ),
    (
        "pyproject: unknown key",
        {"pyproject.toml": b"[tool.lossscale-compat]\nexcldue = ['a.py']\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: target = 3",
        {"pyproject.toml": b"[tool.lossscale-compat]\ntarget = 3\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: jobs = 'many'",
        {"pyproject.toml": b"[tool.lossscale-compat]\njobs = 'many'\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: jobs = -3",
        {"pyproject.toml": b"[tool.lossscale-compat]\njobs = -3\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: format = 'xml'",
        {"pyproject.toml": b"[tool.lossscale-compat]\nformat = 'xml'\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: respect-gitignore = 'no'",
        {"pyproject.toml": b"[tool.lossscale-compat]\nrespect-gitignore = 'no'\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject: table is a string",
        {"pyproject.toml": b"[tool]\nlossscale-compat = 'x'\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    ("pyproject is a folder", {"pyproject.toml": None, "a.py": LEGACY}, ["--write", "."], "refused", None),
    ("pyproject is a FIFO", {"pyproject.toml": FIFO, "a.py": LEGACY}, ["--write", "."], "refused", None),
    (
        "pyproject nested 100,000 deep",
        {"pyproject.toml": b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
    (
        "pyproject is a link loop",
        {"pyproject.toml": (LINK, "pyproject.toml"), "a.py": LEGACY},
        ["--write", "."],
        "refused",
        None,
    ),
]

# (name, command, files, argv after the command (FILES replaced by paths), kind)
OTHER_COMMANDS: list[tuple[str, str, dict[str, Any], list[str], str]] = [
    ("equivalent: missing files", "equivalent", {}, ["a.json", "b.json"], "refused"),
    ("equivalent: empty JSON file", "equivalent", {"a.json": b"", "b.json": b""}, ["a.json", "b.json"], "refused"),
    ("equivalent: JSON null", "equivalent", {"a.json": b"null", "b.json": b"null"}, ["a.json", "b.json"], "refused"),
    (
        "equivalent: JSON nested 100,000 deep",
        "equivalent",
        {"a.json": b"[" * 100_000 + b"]" * 100_000, "b.json": b"{}"},
        ["a.json", "b.json"],
        "refused",
    ),
    (
        "equivalent: text named .h5",
        "equivalent",
        {"a.h5": b"not hdf5", "b.h5": b"not hdf5"},
        ["a.h5", "b.h5"],
        "refused",
    ),
    (
        "equivalent: .keras not a zip",
        "equivalent",
        {"a.keras": b"PK no zip", "b.keras": b"PK no zip"},
        ["a.keras", "b.keras"],
        "refused",
    ),
    (
        "equivalent: .keras without config.json",
        "equivalent",
        {"a.keras": _keras_zip({"x.txt": b"1"}), "b.keras": _keras_zip({"x.txt": b"1"})},
        ["a.keras", "b.keras"],
        "refused",
    ),
    (
        "equivalent: .keras config a list",
        "equivalent",
        {"a.keras": _keras_zip({"config.json": b"[]"}), "b.keras": _keras_zip({"config.json": b"[]"})},
        ["a.keras", "b.keras"],
        "refused",
    ),
    ("equivalent: empty SavedModel folder", "equivalent", {"a": None, "b": None}, ["a", "b"], "refused"),
    ("equivalent: a FIFO", "equivalent", {"a.json": FIFO, "b.json": b"{}"}, ["a.json", "b.json"], "refused"),
    ("equivalent: /dev/zero", "equivalent", {"b.json": b"{}"}, ["/dev/zero", "b.json"], "refused"),
    (
        "equivalent: inner optimizer a number",
        "equivalent",
        {
            "a.json": b'{"class_name": "LossScaleOptimizer", "config": {"inner_optimizer": 5}}',
            "b.json": b'{"class_name": "LossScaleOptimizer", "config": {"inner_optimizer": 5}}',
        },
        ["a.json", "b.json"],
        "refused",
    ),
    (
        "equivalent: loss_scale NaN",
        "equivalent",
        {
            "a.json": b'{"class_name": "LossScaleOptimizer", "config": '
            b'{"optimizer": {"class_name": "SGD", "config": {}}, "loss_scale": NaN}}',
            "b.json": b'{"class_name": "SGD", "config": {}}',
        },
        ["a.json", "b.json"],
        "clean",
    ),
    ("equivalent: one argument", "equivalent", {"a.json": b"{}"}, ["a.json"], "refused"),
    ("compare: empty trace", "compare", {"a": b"", "b": b""}, ["a", "b"], "refused"),
    (
        "compare: header only",
        "compare",
        {"a": open(TRACE, "rb").read().split(b"\n")[0] + b"\n", "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: truncated mid-line",
        "compare",
        {"a": open(TRACE, "rb").read()[:-100], "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: version 99",
        "compare",
        {"a": retraced(_set_header("version", 99)), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    ("compare: a trace with itself", "compare", {"a": open(TRACE, "rb").read()}, ["a", "a"], "same"),
    (
        "compare: scale a string",
        "compare",
        {"a": retraced(_set_step("scale_before", "x")), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: step without n",
        "compare",
        {"a": retraced(_drop_step("n")), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: skipped a string",
        "compare",
        {"a": retraced(_set_step("skipped", "no")), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: loss a list",
        "compare",
        {"a": retraced(_set_step("loss", [1])), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: norm of the wrong length",
        "compare",
        {"a": retraced(_set_step("norm", [1.0])), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: options a string",
        "compare",
        {"a": retraced(_set_header("options", "x")), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: shapes missing",
        "compare",
        {"a": retraced(_set_optimizers("shapes", None)), "b": open(TRACE, "rb").read()},
        ["a", "b"],
        "refused",
    ),
    (
        "compare: NaN losses on both sides",
        "compare",
        {"a": retraced(_set_step("loss", float("nan"))), "b": retraced(_set_step("loss", float("nan")))},
        ["a", "b"],
        "same",
    ),
    ("compare: a folder", "compare", {"d": None, "b": open(TRACE, "rb").read()}, ["d", "b"], "refused"),
    ("compare: /dev/zero", "compare", {"b": open(TRACE, "rb").read()}, ["/dev/zero", "b"], "refused"),
    ("compare: a FIFO", "compare", {"f": FIFO, "b": open(TRACE, "rb").read()}, ["f", "b"], "refused"),
    ("compare: --rtol -1", "compare", {"a": open(TRACE, "rb").read()}, ["a", "a", "--rtol", "-1"], "refused"),
    ("compare: --rtol nan", "compare", {"a": open(TRACE, "rb").read()}, ["a", "a", "--rtol", "nan"], "refused"),
    ("record: no program", "record", {}, ["-o", "t.jsonl"], "refused"),
    ("record: --steps -1", "record", {"p.py": b"x = 1\n"}, ["-o", "t.jsonl", "--steps", "-1", "p.py"], "refused"),
    ("record: --every 0", "record", {"p.py": b"x = 1\n"}, ["-o", "t.jsonl", "--every", "0", "p.py"], "refused"),
    ("record: -o a folder", "record", {"p.py": b"x = 1\n", "out": None}, ["-o", "out", "p.py"], "refused"),
    ("record: missing program", "record", {}, ["-o", "t.jsonl", "missing.py"], "refused"),
    ("run: no program", "run", {}, [], "refused"),
    ("run: missing program", "run", {}, ["missing.py"], "refused"),
    ("unknown command", "frobnicate", {}, [], "refused"),
]

# (name, code run with `lsc`, `testing`, `tf` and `sgd()` in scope, "raises" or "ok" or "clean")
BEHAVIOUR = (
    "testing.assert_behaviour_equivalent(lsc.LossScaleOptimizer(sgd(), 'dynamic'), "
    "lsc.LossScaleOptimizer(sgd(), 'dynamic'), "
)
API: list[tuple[str, str, str]] = [
    ("LossScaleOptimizer(None, 'dynamic')", "lsc.LossScaleOptimizer(None, 'dynamic')", "raises"),
    ("LossScaleOptimizer('sgd', 'dynamic')", "lsc.LossScaleOptimizer('sgd', 'dynamic')", "raises"),
    ("LossScaleOptimizer(sgd, 'banana')", "lsc.LossScaleOptimizer(sgd(), 'banana')", "raises"),
    ("LossScaleOptimizer(sgd, -1)", "lsc.LossScaleOptimizer(sgd(), -1)", "clean"),
    ("LossScaleOptimizer(sgd, nan)", "lsc.LossScaleOptimizer(sgd(), float('nan'))", "clean"),
    ("LossScaleOptimizer(sgd, inf)", "lsc.LossScaleOptimizer(sgd(), float('inf'))", "clean"),
    ("LossScaleOptimizer(sgd, [1, 2])", "lsc.LossScaleOptimizer(sgd(), [1, 2])", "raises"),
    ("LossScaleOptimizer(sgd, {'x': 1})", "lsc.LossScaleOptimizer(sgd(), {'x': 1})", "raises"),
    ("LossScaleOptimizer(sgd) (no loss_scale)", "lsc.LossScaleOptimizer(sgd())", "raises"),
    (
        "LossScaleOptimizer wrapping itself",
        "o = lsc.LossScaleOptimizer(sgd(), 'dynamic'); lsc.LossScaleOptimizer(o, 'dynamic')",
        "raises",
    ),
    ("DynamicLossScale(initial_loss_scale='x')", "lsc.DynamicLossScale(initial_loss_scale='x')", "raises"),
    ("DynamicLossScale(initial_loss_scale=None)", "lsc.DynamicLossScale(initial_loss_scale=None)", "raises"),
    ("DynamicLossScale(initial_loss_scale=1e400)", "lsc.DynamicLossScale(initial_loss_scale=1e400)", "clean"),
    ("DynamicLossScale(increment_period='x')", "lsc.DynamicLossScale(increment_period='x')", "raises"),
    ("DynamicLossScale(increment_period=2.5)", "lsc.DynamicLossScale(increment_period=2.5)", "clean"),
    ("DynamicLossScale(increment_period=-1)", "lsc.DynamicLossScale(increment_period=-1)", "clean"),
    ("DynamicLossScale(multiplier='x')", "lsc.DynamicLossScale(multiplier='x')", "raises"),
    ("DynamicLossScale(multiplier=nan)", "lsc.DynamicLossScale(multiplier=float('nan'))", "clean"),
    ("DynamicLossScale(unknown=1)", "lsc.DynamicLossScale(unknown=1)", "raises"),
    ("FixedLossScale('x')", "lsc.FixedLossScale('x')", "raises"),
    ("FixedLossScale(None)", "lsc.FixedLossScale(None)", "raises"),
    ("FixedLossScale([1])", "lsc.FixedLossScale([1])", "raises"),
    ("FixedLossScale(0)", "lsc.FixedLossScale(0)", "clean"),
    ("FixedLossScale(-1)", "lsc.FixedLossScale(-1)", "clean"),
    ("FixedLossScale(nan)", "lsc.FixedLossScale(float('nan'))", "clean"),
    ("Policy('banana')", "lsc.Policy('banana')", "raises"),
    ("Policy(5)", "lsc.Policy(5)", "raises"),
    ("Policy(None)", "lsc.Policy(None)", "raises"),
    ("Policy('mixed_float16', loss_scale='banana')", "lsc.Policy('mixed_float16', loss_scale='banana')", "raises"),
    ("Policy('mixed_float16', loss_scale=-1)", "lsc.Policy('mixed_float16', loss_scale=-1)", "clean"),
    ("Policy('mixed_float16', loss_scale=[1])", "lsc.Policy('mixed_float16', loss_scale=[1])", "raises"),
    ("get('banana')", "lsc.get('banana')", "raises"),
    ("get(5j)", "lsc.get(5j)", "raises"),
    ("deserialize({'class_name': 5})", "lsc.deserialize({'class_name': 5})", "raises"),
    ("deserialize('x')", "lsc.deserialize('x')", "raises"),
    ("deserialize(None)", "lsc.deserialize(None)", "raises"),
    (
        "deserialize(Fixed, value 'x')",
        "lsc.deserialize({'class_name': 'FixedLossScale', 'config': {'loss_scale_value': 'x'}})",
        "raises",
    ),
    ("deserialize(config a list)", "lsc.deserialize({'class_name': 'DynamicLossScale', 'config': [1]})", "raises"),
    ("deserialize(config a string)", "lsc.deserialize({'class_name': 'DynamicLossScale', 'config': 'x'})", "raises"),
    ("deserialize(config None)", "lsc.deserialize({'class_name': 'FixedLossScale', 'config': None})", "raises"),
    ("assert_config_equivalent(None, None)", "testing.assert_config_equivalent(None, None)", "raises"),
    ("assert_config_equivalent(5, 'x')", "testing.assert_config_equivalent(5, 'x')", "raises"),
    ("assert_config_equivalent({}, {})", "testing.assert_config_equivalent({}, {})", "raises"),
    (
        "assert_config_equivalent(class_name 5)",
        "testing.assert_config_equivalent({'class_name': 5, 'config': {}}, {'class_name': 5, 'config': {}})",
        "raises",
    ),
    (
        "assert_config_equivalent(config a list)",
        "testing.assert_config_equivalent({'class_name': 'SGD', 'config': []}, {'class_name': 'SGD', 'config': []})",
        "raises",
    ),
    ("assert_behaviour_equivalent(None, None)", "testing.assert_behaviour_equivalent(None, None)", "raises"),
    (
        "assert_behaviour_equivalent(steps=-1)",
        BEHAVIOUR + "steps=-1)",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(steps='x')",
        BEHAVIOUR + "steps='x')",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(steps=10**9)",
        BEHAVIOUR + "steps=10**9)",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(nonfinite={0: 'banana'})",
        BEHAVIOUR + "steps=3, nonfinite={0: 'banana'})",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(nonfinite={99: 'nan'})",
        BEHAVIOUR + "steps=3, nonfinite={99: 'nan'})",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(nonfinite=[1])",
        BEHAVIOUR + "steps=3, nonfinite=[1])",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(variables=[])",
        BEHAVIOUR + "steps=3, variables=[])",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(variables=[(-1,)])",
        BEHAVIOUR + "steps=3, variables=[(-1,)])",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(rtol=nan)",
        BEHAVIOUR + "steps=3, nonfinite={}, rtol=float('nan'))",
        "raises",
    ),
    (
        "assert_behaviour_equivalent(seed='x')",
        BEHAVIOUR + "steps=3, seed='x')",
        "raises",
    ),
    (
        "assert_same_training(missing, missing)",
        "testing.assert_same_training('/nonexistent/a', '/nonexistent/b')",
        "raises",
    ),
    ("assert_same_training(5, 5)", "testing.assert_same_training(5, 5)", "raises"),
    ("assert_same_training(folder, folder)", "testing.assert_same_training('/tmp', '/tmp')", "raises"),
]

API_RUNNER = r"""
import json, signal, sys, warnings
warnings.simplefilter("ignore")
import tensorflow as tf
import lossscale_compat as lsc
from lossscale_compat import testing
from lossscale_compat import _flavour
def sgd():
    return tf.keras.optimizers.SGD(0.1)
def hung(signum, frame):
    raise KeyboardInterrupt("hung: still running after 120 s")
signal.signal(signal.SIGALRM, hung)
out = []
for name, code in json.load(sys.stdin):
    signal.alarm(120)
    try:
        exec(code, {"lsc": lsc, "testing": testing, "tf": tf, "sgd": sgd})
        out.append((name, None, ""))
    except BaseException as error:
        mine = isinstance(error, (ValueError, TypeError, AssertionError, OSError))
        out.append((name, type(error).__name__ if not mine else "clean " + type(error).__name__, str(error)))
    signal.alarm(0)
print("RESULTS" + json.dumps(out))
"""
# A wrong argument may raise ValueError, TypeError (or a subclass: the tool's own errors are), AssertionError (the
# checks' own "not equivalent") or OSError (a path); any other exception is BAD.


def _make(root: str, files: dict[str, Any]) -> None:
    for name, content in sorted(files.items(), key=lambda item: item[0].count("/")):
        path = os.path.join(root, name.split(" ", 1)[1] if name.startswith(("chmod ", "hard ")) else name)
        if name.startswith("chmod "):
            os.chmod(path, content)
        elif name.startswith("hard "):
            os.link(os.path.join(root, content), path)
        elif content is None:
            os.makedirs(path, exist_ok=True)
        elif content is FIFO:
            os.mkfifo(path)
        elif isinstance(content, tuple):
            os.symlink(content[1], path)
        else:
            with open(path, "wb") as handle:
                handle.write(content)


def _snapshot(root: str) -> dict[str, bytes]:
    seen = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    seen[os.path.relpath(path, root)] = handle.read()
    return seen


def _judge(kind: str, code: int | None, out: str, err: str, changed: bool) -> tuple[str, str]:
    """OK, WEAK or BAD, and why."""
    if code is None:
        return "BAD", "hung"
    if "Traceback" in err:
        return "BAD", "traceback: " + err.strip().splitlines()[-1][:90]
    if code not in KINDS[kind]:
        return "BAD", f"exit {code}: " + (err.strip().splitlines() or [""])[-1][:90]
    if changed:
        return "BAD", "a file was changed"
    said = [line for line in err.splitlines() if line.strip() and not SUMMARY.match(line) and not TF_LOG.match(line)]
    if code == 2 and not said and '"error": "' in out:  # --format json: the errors are in the report on stdout
        said = [out[out.index('"error": "') :].split("\n", 1)[0]]
    if code == 2 and not said:
        return "WEAK", "exit 2 without a word"
    if code == 2 and len(said) > 3:
        return "WEAK", f"{len(said)} lines on stderr"
    return "OK", f"exit {code}" + (": " + said[0][:90] if code == 2 and said else "")


def run_command(
    argv: list[str], files: dict[str, Any], kind: str, stdin: bytes | None, untouched: bool
) -> tuple[str, str, float]:
    env = dict(
        os.environ,
        PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
        PYTHONIOENCODING="utf-8",
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    with tempfile.TemporaryDirectory() as root:
        _make(root, files)
        before = _snapshot(root)
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "lossscale_compat", *argv],
                cwd=root,
                env=env,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                check=False,
                timeout=HANG if argv[0] in ("migrate", "compare") else 4 * HANG,
            )
            code, out, err = done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            code, out, err = None, "", ""
        err = err.replace(root + os.sep, "")  # the table names files as the case does, not this machine's paths
        seconds = time.perf_counter() - started
        changed = untouched and _snapshot(root) != before
    verdict, why = _judge(kind, code, out, err, changed)
    return verdict, why, seconds


def run_api(cases: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", API_RUNNER],
        input=json.dumps([(name, code) for name, code, _ in cases]).encode(),
        capture_output=True,
        env=env,
        check=False,
        timeout=1800,
    )
    line = next((x for x in done.stdout.decode().splitlines() if x.startswith("RESULTS")), None)
    if line is None:
        return [(name, "BAD", "the API runner died: " + done.stderr.decode()[-200:]) for name, _, _ in cases]
    observed = {name: (kind, message) for name, kind, message in json.loads(line[len("RESULTS") :])}
    out = []
    for name, _, expected in cases:
        error, message = observed[name]
        first = message.strip().splitlines()[0][:90] if message.strip() else ""
        if error is None:
            verdict = "BAD" if expected == "raises" else "OK"
            out.append((name, verdict, "accepted" + (" (a wrong value taken silently)" if verdict == "BAD" else "")))
        elif not error.startswith("clean "):
            out.append((name, "BAD", f"{error}: {first}"))
        elif (error := error[len("clean ") :]) and expected == "ok":
            out.append((name, "BAD", f"{error}: {first}"))
        elif "\n" in message.strip() and error != "AssertionError":
            out.append((name, "WEAK", f"{error} over {len(message.strip().splitlines())} lines: {first}"))
        else:
            out.append((name, "OK", f"{error}: {first}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run the cases whose name holds one of these words")
    parser.add_argument("--skip-api", action="store_true", help="leave out the Python API cases (they import TF)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()

    def wanted(name: str) -> bool:
        return not args.only or any(word.lower() in name.lower() for word in args.only)

    rows: list[tuple[str, str, str, str, str]] = []
    for name, files, argv, kind, stdin in MIGRATE:
        if wanted(name):
            untouched = "--write" not in argv or kind == "refused" or kind == "unchanged"
            verdict, why, _ = run_command(["migrate", *argv], files, kind, stdin, untouched)
            rows.append(("migrate", name, kind, verdict, why))
            print(*rows[-1], sep=" | ", file=sys.stderr)
    for name, command, files, argv, kind in OTHER_COMMANDS:
        if wanted(name):
            verdict, why, _ = run_command([command, *argv], files, kind, None, True)
            rows.append((command, name, kind, verdict, why))
            print(*rows[-1], sep=" | ", file=sys.stderr)
    if not args.skip_api:
        chosen = [case for case in API if wanted(case[0])]
        for name, verdict, why in run_api(chosen) if chosen else []:
            rows.append(("API", name, {n: e for n, _, e in API}[name], verdict, why))
    counts = {v: sum(1 for row in rows if row[3] == v) for v in ("OK", "WEAK", "BAD")}
    if args.markdown:
        print("| Entry point | Case | Expected | Observed | What was seen |\n|---|---|---|---|---|")
        for row in rows:
            print(
                "| "
                + " | ".join(
                    re.sub(r"([|`])", r"\\\1", cell).replace("\n", " ") for row_cell in [row] for cell in row_cell
                )
                + " |"
            )
    else:
        for row in rows:
            print(f"{row[0]:10} {row[1][:48]:48} {row[2]:10} {row[3]:5} {row[4]}")
    print(f"\n{len(rows)} cases: {counts['OK']} OK, {counts['WEAK']} WEAK, {counts['BAD']} BAD")


if __name__ == "__main__":
    main()
