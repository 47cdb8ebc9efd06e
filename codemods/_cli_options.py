"""The `migrate` command line's options: the parser and its help text, and the options it leaves out read from
`[tool.lossscale-compat]` (checked, with a message saying what to do instead)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import NoReturn, TextIO

from lossscale_compat._mapping import TARGETS

from . import _files, _isolate, _write

EXIT_CLEAN, EXIT_PENDING, EXIT_ERROR = 0, 1, 2
EXIT_CODES_HELP = """exit codes:
  0  nothing left to do
  1  changes pending: --diff/--check would change a file, or a site needs a person
     (any warning but a note), also after --write
  2  a file could not be read, parsed or written, a usage error, or (with
     --fail-on-empty) a directory named holds no Python file or notebook"""
DEFAULT_TIMEOUT, DEFAULT_MAX_MEMORY, DEFAULT_MAX_FILE_SIZE = 120.0, 4096, 1.0  # seconds, MB, MB (docs/codemod.md)
MIN_MEMORY = 8
"""The least --max-memory (MB) other than 0: with 4 a worker could not load libcst's native parser."""
_CONFIG_KEYS = {"target", "exclude", "extend-exclude", "jobs", "format", "respect-gitignore"}


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line that says where the options are."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_ERROR,
            f"lossscale-compat migrate: error: {message}. Run `lossscale-compat migrate --help` for the options.\n",
        )


def build_parser() -> argparse.ArgumentParser:
    """The parser of `lossscale-compat migrate`, its help text included."""
    parser = _Parser(
        prog="lossscale-compat",
        description="Tools for moving TF 2.4 mixed-precision code to the modern Keras API.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    migrate = commands.add_parser(
        "migrate",
        help="rewrite TF 2.4 loss-scaling call sites",
        description="Rewrite TF 2.4 mixed-precision (loss scaling) code to the modern Keras API.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    migrate.add_argument("paths", nargs="*", metavar="PATH", help="files, directories, or - for stdin")
    mode = migrate.add_mutually_exclusive_group()
    mode.add_argument("--diff", dest="mode", action="store_const", const="diff", help="print a unified diff (default)")
    mode.add_argument(
        "--check", dest="mode", action="store_const", const="check", help="list the files that would change"
    )
    mode.add_argument("--write", dest="mode", action="store_const", const="write", help="rewrite files in place")
    migrate.add_argument("--target", choices=TARGETS, help="modern API (default: keras3)")
    migrate.add_argument("--report", metavar="FILE.json", help="write a JSON report")
    migrate.add_argument("--format", choices=("text", "json", "github"), help="output format (default: text)")
    migrate.add_argument(
        "-j",
        "--jobs",
        type=int,
        help="parallel jobs (default: number of CPUs; at most the number of files)",
    )
    migrate.add_argument("--stdin-filename", help="the name to report for - (only with -)")
    migrate.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"stop migrating a file after this long and report it (default: {DEFAULT_TIMEOUT:g}; 0: no bound)",
    )
    migrate.add_argument(
        "--max-memory",
        type=int,
        default=DEFAULT_MAX_MEMORY,
        metavar="MB",
        help=f"memory a worker may use for one file; a file needing more is reported (default: {DEFAULT_MAX_MEMORY}; "
        "0: no bound)",
    )
    migrate.add_argument(
        "--max-file-size",
        type=float,
        default=DEFAULT_MAX_FILE_SIZE,
        metavar="MB",
        help=f"refuse Python files larger than this (default: {DEFAULT_MAX_FILE_SIZE:g}; 0: no bound)",
    )
    migrate.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="gitignore-style pattern to skip in directory walks",
    )
    migrate.add_argument(
        "--no-gitignore", dest="gitignore", action="store_false", default=None, help="do not read .gitignore files"
    )
    migrate.add_argument(
        "--write-link-targets",
        action="store_true",
        help="with --write, also write files that a symbolic link points to outside the paths named",
    )
    migrate.add_argument(
        "--fail-on-empty",
        action="store_true",
        help="exit 2 when a directory named holds no Python file or notebook (a mistyped path in CI)",
    )
    migrate.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print each warning's full text instead of its one-line short text",
    )
    migrate.add_argument(
        "--explain",
        metavar="CODE",
        help="print what a warning code (LSC1xx, LSC2xx) means and what to do, then exit",
    )
    comments = migrate.add_mutually_exclusive_group()
    comments.add_argument(
        "--annotate",
        action="store_true",
        help="also leave a `# lossscale-compat: CODE short text` comment on each line with a warning or note",
    )
    comments.add_argument(
        "--strip-annotations",
        action="store_true",
        help="only remove the `# lossscale-compat:` comments (no migration), e.g. once their sites are resolved",
    )
    return parser


def _check_report_path(path: str) -> None:
    """Raises ValueError unless a report can be written to `path`."""
    if not path:
        raise ValueError("--report needs a file name, got ''. Instead, name a file, e.g. --report report.json.")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        example = os.path.join(path, "report.json")
        raise ValueError(f"--report {path} is a directory. Instead, name a file, e.g. {example}.")
    if path.endswith((".py", ".pyi", ".ipynb")):  # `--report a.py b.py` took a source file as the report's name
        raise ValueError(
            f"--report {path} names a Python file, which the report would overwrite. Instead, name a .json file, "
            "e.g. --report report.json, and list the files to migrate after it."
        )
    if not os.path.isdir(parent):
        raise ValueError(
            f"--report {path}: the directory {parent} does not exist. Create it first or name another file."
        )
    why = _write.output_refusal(path)
    if why is not None:
        raise ValueError(
            f"--report {path}: {why}; the report is written only as a regular file, never in place of another kind. "
            "Instead, name a regular file, e.g. --report report.json."
        )
    if not os.access(path if os.path.exists(path) else parent, os.W_OK):
        raise ValueError(f"--report {path} cannot be written (permission denied). Instead, name a file you can write.")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _jobs(args: argparse.Namespace, config: dict[str, object]) -> int:
    """Returns the requested number of jobs (before capping to the number of files)."""
    jobs = args.jobs if args.jobs is not None else config.get("jobs")
    if jobs is None:
        return _cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(
            f"`-j`/`jobs` must be a whole number of at least 1, got {jobs!r}. Instead, pass -j 1 to run in one process."
        )
    return min(jobs, 2 * _cores())


def _config(args: argparse.Namespace, stderr: TextIO) -> dict[str, object]:
    start = args.paths[0] if args.paths and args.paths[0] != "-" else os.getcwd()
    if args.stdin_filename and args.paths == ["-"]:
        start = os.path.dirname(os.path.abspath(args.stdin_filename))
    path, table, note = _files.find_config(start)
    if note:  # its excludes may protect files: stop before reading any
        raise ValueError(note)
    unknown = set(table) - _CONFIG_KEYS
    if unknown:
        raise ValueError(
            f"{path}: [tool.lossscale-compat] has unknown keys {sorted(unknown)}; "
            f"the known keys are {sorted(_CONFIG_KEYS)}."
        )
    return table


def _patterns(config: dict[str, object], key: str) -> list[str]:
    """Returns the table's `key`, a list of gitignore-style patterns."""
    value = config.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(
            f"`{key}` in [tool.lossscale-compat] must be a list of patterns, got {value!r}. Instead, write "
            f'it as a list, such as {key} = ["build/"].'
        )
    return value


@dataclasses.dataclass(frozen=True)
class Options:
    """The command line's choices, with the configuration's where the command line leaves one out."""

    target: str
    out_format: str
    excludes: list[str]
    gitignore: bool
    jobs: int
    limits: _isolate.Limits
    max_file_size: int
    """In bytes; 0 for no bound."""


def _limits(args: argparse.Namespace) -> tuple[_isolate.Limits, int]:
    """The per-file bounds and the largest file size in bytes; raises ValueError for a negative one."""
    for flag, value in (
        ("--timeout", args.timeout),
        ("--max-memory", args.max_memory),
        ("--max-file-size", args.max_file_size),
    ):
        if not 0 <= value < float("inf"):  # also NaN
            raise ValueError(
                f"{flag} must be 0 (no bound) or more, got {value}: a finite number. Instead, pass 0 for no bound"
            )
    if 0 < args.max_memory < MIN_MEMORY:
        raise ValueError(
            f"--max-memory must be 0 (no bound) or at least {MIN_MEMORY} MB, got {args.max_memory}: a worker needs "
            f"that much to load its parser. Instead, pass {MIN_MEMORY} or more, or 0 for no bound"
        )
    return _isolate.Limits(args.timeout, args.max_memory << 20), int(args.max_file_size * (1 << 20))


def read_options(args: argparse.Namespace, stderr: TextIO) -> Options:
    """Reads `[tool.lossscale-compat]` and merges it with `args`; raises ValueError or TypeError for a bad value."""
    config = _config(args, stderr)
    target = args.target or str(config.get("target", "keras3"))
    if target not in TARGETS:
        raise ValueError(f"`target` must be one of {', '.join(map(repr, TARGETS))}, got {target!r}")
    out_format = args.format or str(config.get("format", "text"))
    if out_format not in ("text", "json", "github"):
        raise ValueError(f"`format` must be 'text', 'json' or 'github', got {out_format!r}")
    excludes = _patterns(config, "exclude") + _patterns(config, "extend-exclude") + args.exclude
    gitignore = args.gitignore if args.gitignore is not None else config.get("respect-gitignore", True)
    if not isinstance(gitignore, bool):  # `respect-gitignore = "no"` was read as true
        raise ValueError(
            f"`respect-gitignore` in [tool.lossscale-compat] must be true or false, got {gitignore!r}. Instead, write "
            "respect-gitignore = false (TOML's booleans take no quotes)."
        )
    jobs = _jobs(args, config)
    if args.report is not None:
        _check_report_path(args.report)
    limits, max_file_size = _limits(args)
    return Options(target, out_format, excludes, gitignore, jobs, limits, max_file_size)
