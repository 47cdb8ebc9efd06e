"""The `lossscale-compat migrate` command line."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import NamedTuple, NoReturn, TextIO, cast

from . import _annotate, _files, _isolate, _output, _target_names, _write
from . import _warnings as w
from ._cli_options import EXIT_CLEAN, EXIT_ERROR, EXIT_PENDING, Options, build_parser, read_options


class _Result:
    """One file's outcome in the form the CLI reports."""

    def __init__(
        self,
        path: str,
        status: str,
        old: bytes = b"",
        new: bytes = b"",
        findings: Sequence[tuple[w.Finding, w.Finding]] = (),
        error: str | None = None,
    ) -> None:
        self.path = path
        self.status = status
        self.old = old
        self.new = new
        self.findings = list(findings)  # (finding in the old file, the same in the new file)
        self.error = error
        self.notebook = path.endswith(".ipynb")
        self.unread = False  # stdin past its bound: the rest of it was never read

    def warnings(self, after_write: bool) -> list[dict]:
        return [(new if after_write else old).as_dict(notebook=self.notebook) for old, new in self.findings]

    def needs_person(self) -> bool:
        return any(old.code not in w.NOTE_CODES for old, _ in self.findings)


def _skipped(path: str, reason: str) -> _Result:
    """A path that is not migrated, for a reason that needs no one to act (a FIFO, a directory link)."""
    return _Result(path, "skipped", error=reason)


def _process(path: str, data: bytes, target: str) -> _Result:
    """Migrates one file's bytes in this process; never raises."""
    try:
        if path.endswith(".ipynb"):
            from ._notebook import migrate_notebook

            result = migrate_notebook(data, target, path)
        else:
            from ._engine import migrate_source

            result = migrate_source(data, target, path)
    except MemoryError:
        raise  # the worker's to report, with --max-memory
    except Exception as error:  # noqa: BLE001 - one file's failure must not stop the run
        return _Result(path, "error", data, data, error=f"internal error: {type(error).__name__}: {error}")
    if result.new_findings is not None:
        findings = list(zip(result.findings, result.new_findings))
    else:
        findings = [(f, dataclasses.replace(f, line=result.new_line(f.line))) for f in result.findings]
    return _Result(path, result.status, data, result.new, findings, result.error)


def _process_many(
    tasks: list[tuple[str, bytes]], target: str, jobs: int, limits: _isolate.Limits, job: str = "migrate"
) -> list[_Result]:
    """Does `job` ("migrate", "annotate": migrate and annotate, or "strip" annotations) to the files in `jobs` worker
    processes, each file bounded in time and memory."""
    if not tasks:
        return []
    if job != "strip":
        from . import _engine

        _engine.import_command()  # once here, so that forked workers start warm
    pool = _isolate.Pool(functools.partial(_process_in_worker, target, job), _failed, jobs, limits)
    return pool.run(tasks)


def _process_in_worker(target: str, job: str, path: str, data: bytes) -> _Result:
    try:
        if job == "strip":
            from ._notebook import strip_notebook

            result = _Result(path, "unchanged", data, data)
            result.new = (strip_notebook if result.notebook else _annotate.strip)(data)
            result.status = "changed" if result.new != data else "unchanged"
            return result
        result = _process(path, data, target)
        if job == "annotate":
            _annotate_result(result)
        return result
    except MemoryError:
        return _failed(path, data, "it ran out of the memory that --max-memory allows")


def _failed(path: str, data: bytes, cause: str) -> _Result:
    """The result of a file whose worker crashed, hung or ran out of memory: an error, the file left alone."""
    return _Result(
        path,
        "error",
        data,
        data,
        error=f"not migrated: {cause}. The rest of the run went on. Instead, migrate this file by hand, split "
        "its longest or deepest expression, or raise --timeout/--max-memory (see docs/codemod.md, 'Bad input')",
    )


def _decode(data: bytes) -> str:
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return data.decode("utf-8", errors="replace")


def _diff(result: _Result) -> str:
    from . import _linediff

    # Lines as `patch` and `git apply` count them: ended by \n alone, so a file of lines ended by \r alone is one line
    # (`str.splitlines` also breaks at \r, form feeds and more, and its diff of such a file did not apply).
    old = _decode(result.old).split("\n")
    new = _decode(result.new).split("\n")
    shown = _output.name(result.path)
    lines = _linediff.unified(_ended(old), _ended(new), f"a/{shown}", f"b/{shown}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _ended(pieces: list[str]) -> list[str]:
    """The lines of a text split at \n, each with its \n back, the last one without if the text did not end in one."""
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _gather(
    paths: Sequence[str], excludes: Sequence[str], gitignore: bool, empty: list[str] | None = None
) -> tuple[list[str], list[_Result]]:
    """Returns the files to read (each resolved file once, under the first name met) and the paths not read; adds
    each directory named that holds no Python file or notebook to `empty`."""
    files: list[str] = []
    others: list[_Result] = []
    seen: set[object] = set()

    def add(found: str) -> None:
        try:
            info = os.stat(found)
            key: object = (info.st_dev, info.st_ino)  # one file, whatever its names: links, hard links
        except OSError:
            key = os.path.realpath(found)
        if key not in seen:
            seen.add(key)
            files.append(found)

    for path in paths:
        if path == "-":
            files.append(path)
        elif os.path.isdir(path):
            skipped: list[tuple[str, str]] = []
            unreadable: list[tuple[str, str]] = []
            found = None
            for found in _files.walk(
                path, excludes=excludes, respect_gitignore=gitignore, skipped=skipped, unreadable=unreadable
            ):
                add(found)
            if found is None and empty is not None:
                empty.append(path)
            others += [_skipped(found, reason) for found, reason in skipped]
            others += [_Result(found, "error", error=reason) for found, reason in unreadable]
        elif os.path.isfile(path):
            add(path)
        elif os.path.exists(path):
            others.append(_skipped(path, f"not a regular file ({_write.kind(os.stat(path).st_mode)}), skipped"))
        else:
            broken = _files.broken_link(path) if os.path.islink(path) else None
            if broken:
                broken = broken.replace(", skipped", "") + ", so there is no file to read. Instead, name a file"
            others.append(_Result(path, "error", error=broken or "no such file or directory"))
    return files, others


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code."""
    stdout, stderr = sys.stdout, sys.stderr
    _output.tolerant(stdout, stderr)  # a file name stdout cannot encode is escaped, not a UnicodeEncodeError
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (one line, printed) or --help
        return stop.code if isinstance(stop.code, int) else EXIT_ERROR
    if args.explain is not None:
        return _explain(args.explain, stdout, stderr)
    written: list[str] = []
    try:
        return _run(args, stdout, stderr, written)
    except KeyboardInterrupt:
        print(
            f"lossscale-compat: interrupted; {len(written)} file(s) were written before it (listed above as "
            "`migrated:`), no other file was changed. Run again to migrate the rest.",
            file=stderr,
        )
        return 128 + 2  # as a shell reports SIGINT


def _explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    """Prints the full text of a warning code (`--explain CODE`); an unknown code is a one-line error."""
    text = w.explain(code)
    if text is None:
        codes = sorted(w.MESSAGES)
        print(
            f"lossscale-compat migrate: error: --explain {_output.name(code)}: no such warning code. Instead, pass "
            f"one of {codes[0]}-{codes[-1]} as printed by a run (the list: docs/codemod.md#warning-codes).",
            file=stderr,
        )
        return EXIT_ERROR
    stdout.write(text)
    return EXIT_CLEAN


def _paths_error(paths: Sequence[str], stdin_filename: str | None) -> str | None:
    """Says what is wrong with the paths given, or None."""
    if stdin_filename is not None and paths != ["-"]:
        return (
            "--stdin-filename names what is read from -, and - is not among the paths. Instead, pass - as the only "
            "path, or leave --stdin-filename out"
        )
    if not paths:
        return "no paths given. Instead, pass files, directories or -."
    if paths.count("-") > 1 or ("-" in paths and len(paths) > 1):
        return "- (stdin) must be the only path."
    return None


class Done(NamedTuple):
    """What a run does to a file, in its output: the line for a file written, or that would be, and the summary's."""

    written: str
    pending: str
    summary: str


MIGRATED = Done("migrated", "would migrate", "migrated")
STRIPPED = Done("stripped annotations", "would strip annotations", "stripped of annotations")


def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, written: list[str]) -> int:
    """Runs the parsed command line; appends each file it writes to `written` as it writes it."""
    try:
        options = read_options(args, stderr)
    except (ValueError, TypeError) as error:
        print(f"lossscale-compat: error: {error}", file=stderr)
        return EXIT_ERROR
    if not args.strip_annotations:
        try:  # read once, here, before any work: the workers inherit it
            missing = _target_names.missing_note(options.target)
        except _target_names.DamagedData as error:
            print(f"lossscale-compat: {error}", file=stderr)
            return EXIT_ERROR
        if missing is not None:
            print(f"lossscale-compat: {missing}", file=stderr)  # the verifier cannot run: said once, never silently
    mode = args.mode or "diff"
    paths_error = _paths_error(args.paths, args.stdin_filename)
    if paths_error is not None:
        print(f"lossscale-compat: error: {paths_error}", file=stderr)
        return EXIT_ERROR
    empty: list[str] = []
    job = "strip" if args.strip_annotations else "annotate" if args.annotate else "migrate"
    results = _paths_done(args.paths, args.stdin_filename, options, job, empty)
    for path in empty:  # said at once, as ruff and black do: a mistyped or empty folder is not a clean run
        level = "error: " if args.fail_on_empty else ""
        print(f"lossscale-compat: {level}{_output.name(path)}: no Python files or notebooks found", file=stderr)
    stdin_mode = args.paths == ["-"]
    if not stdin_mode and not args.write_link_targets:
        _refuse_outside_links(results, args.paths, mode)
    if mode != "write" and not stdin_mode:
        _refuse_unwritable(results)
    done = STRIPPED if args.strip_annotations else MIGRATED
    if mode == "write":
        try:
            _write_back(results, stdin_mode, written, stderr, done)
        except BrokenPipeError:
            _output.closed(stdout, stderr)
    try:
        _print(results, mode, options.out_format, options.target, stdout, stderr, stdin_mode, done, args.verbose)
        stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has all it wants; the run's exit code stands
        _output.closed(stdout, stderr)
    if args.report is not None and not _write_report(args.report, results, mode, options.target, stderr):
        return EXIT_ERROR
    return EXIT_ERROR if empty and args.fail_on_empty else _exit_code(results, mode)


def _paths_done(
    paths: Sequence[str], stdin_filename: str | None, options: Options, job: str, empty: list[str] | None = None
) -> list[_Result]:
    """Finds and reads the files under `paths`, and does `job` to them in bounded workers (see `_process_many`);
    one result for each file, and for each path not read. Directories with nothing to read go to `empty`."""
    files, results = _gather(paths, options.excludes, options.gitignore, empty)
    if job == "strip":
        wanted = _annotated
    else:
        from ._engine import may_match

        wanted = functools.partial(may_match, target=options.target)
    tasks, order = _read_all(files, stdin_filename, wanted, options.max_file_size, options.limits.memory)
    jobs = min(options.jobs, max(len(tasks), 1))
    done = {r.path: r for r in _process_many(tasks, options.target, jobs, options.limits, job)}
    return results + [result if result is not None else done[shown] for shown, result in order]


def _annotated(data: bytes) -> bool:
    """Whether `data` may hold an annotation to strip (cheap byte test)."""
    return _annotate.PREFIX.strip().encode() in data


def _annotate_result(result: _Result) -> None:
    """Adds a file's warnings to it as comments (into its cells, in a notebook); a file that gains one is `changed`."""
    from ._notebook import annotate_notebook

    if result.status in ("changed", "unchanged"):
        annotate = annotate_notebook if result.notebook else _annotate.annotate
        result.new = annotate(result.new, [new for _, new in result.findings])
        result.status = "changed" if result.new != result.old else result.status


def _read_all(
    files: Sequence[str], stdin_filename: str | None, wanted: Callable[[bytes], bool], max_size: int, memory: int
) -> tuple[list[tuple[str, bytes]], list[tuple[str, _Result | None]]]:
    """Reads each file (`-` is stdin): (the (name, bytes) to work on, each name in order with its result if known).

    A file that cannot be read, is over its bound, or whose bytes `wanted` rules out has its result already. A
    Python file's bound is `max_size`, a notebook's `memory` (what a worker may use); neither is read whole past it.
    """
    tasks: list[tuple[str, bytes]] = []
    order: list[tuple[str, _Result | None]] = []
    for path in files:
        shown = (stdin_filename or "-") if path == "-" else path
        limit = memory if shown.endswith(".ipynb") else max_size
        try:
            data = _read_stdin(limit) if path == "-" else _write.read_bounded(path, limit)
        except _write.NotRegular as error:
            order.append((shown, _skipped(shown, str(error))))
            continue
        except OSError as error:
            order.append((shown, _Result(shown, "error", error=f"cannot read: {error.strerror}")))
            continue
        if isinstance(data, _write.Mapped):  # over the bound: refused, unless its bytes rule it out
            matters = wanted(cast(bytes, data))  # `in` is all that `wanted` asks of its bytes
            order.append(
                (
                    shown,
                    _Result(shown, "error", error=_too_big(shown, data.size, limit))
                    if matters
                    else _Result(shown, "unchanged"),
                )
            )
            continue
        if isinstance(data, _Unread):  # stdin over the bound: refused, whatever it holds, its start kept
            result = _Result(shown, "error", data.start, data.start, error=_too_big(shown, data.size, limit, "more"))
            result.unread = True
            order.append((shown, result))
            continue
        refused = _unsupported(data)
        if refused:
            order.append((shown, _Result(shown, "error", data, data, error=refused)))
        elif wanted(data):
            tasks.append((shown, data))
            order.append((shown, None))
        else:
            order.append((shown, _Result(shown, "unchanged", data, data)))
    return tasks, order


class _Unread(NamedTuple):
    """Stdin over its bound: the bytes read (one more than the bound) and their number; the rest is still unread."""

    start: bytes
    size: int


def _read_stdin(limit: int) -> bytes | _Unread:
    """Stdin's bytes, or, past `limit` bytes (0: no bound), the first ones as _Unread, the rest left unread."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sys.stdin.buffer.read(min(1 << 20, limit + 1 - size) if limit else 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if limit and size > limit:
            return _Unread(b"".join(chunks), size)


_BOMS = ((b"\xff\xfe\0\0", "UTF-32"), (b"\0\0\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _unsupported(data: bytes) -> str | None:
    """Says why bytes in an encoding Python does not read source in (UTF-16 or -32, by their BOM) are refused."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return (
                f"unsupported encoding: the file starts with a {encoding} byte-order mark, and Python reads source "
                f"files as UTF-8 (or an 8-bit encoding declared as PEP 263 says), never {encoding}. Instead, convert "
                f"it to UTF-8 (e.g. `iconv -f {encoding} -t UTF-8`) and run again"
            )
    return None


def _too_big(shown: str, size: int, limit: int, more: str = "") -> str:
    """Says why a file over its bound is refused, unread: a Python file over --max-file-size, a notebook (whose
    outputs are never parsed) over the --max-memory a worker may use. `more`: the size is a lower bound (stdin)."""
    size_mb = f"{more} than {limit / (1 << 20):g}" if more else f"{size / (1 << 20):.1f}"
    if shown.endswith(".ipynb"):
        return (
            f"not migrated: the notebook is {size_mb} MB, over the --max-memory a worker may use "
            f"({limit >> 20} MB). Instead, clear its outputs, or pass a larger --max-memory"
        )
    return (
        f"not migrated: the file is {size_mb} MB, over --max-file-size ({limit / (1 << 20):g} "
        "MB); parsing it would need up to 1.5 GB of memory and a minute per MB. Instead, split the file, or pass "
        "a larger --max-file-size (and --max-memory) to migrate it"
    )


def _write_back(
    results: Sequence[_Result], stdin_mode: bool, written: list[str], stderr: TextIO, done: Done = MIGRATED
) -> None:
    """Writes the changed files, or, from stdin, the output (the input unchanged when it cannot be migrated)."""
    if not stdin_mode:
        _write_all(results, written, stderr, done)
    elif results:  # what a filter writes back
        result = results[0]
        sys.stdout.buffer.write(result.old if result.status == "error" else result.new)
        if result.unread:  # over its bound: the rest goes through unread, so that a filter never cuts a file
            import shutil

            shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()


def _write_report(path: str, results: Sequence[_Result], mode: str, target: str, stderr: TextIO) -> bool:
    """Writes the JSON report to `path`; says why not and returns False when it cannot."""
    text = json.dumps(_report(results, mode, target), indent=2) + "\n"
    try:
        _write.write_whole(path, text.encode("utf-8"))
    except OSError as error:
        print(f"lossscale-compat: error: --report {path}: cannot write: {error.strerror or error}", file=stderr)
        return False
    return True


def _exit_code(results: Sequence[_Result], mode: str) -> int:
    """Error if any file failed; pending if one needs a person or, before `--write`, would change; else clean."""
    if any(r.status == "error" for r in results):
        return EXIT_ERROR
    if any(r.needs_person() for r in results) or (mode != "write" and any(r.status == "changed" for r in results)):
        return EXIT_PENDING
    return EXIT_CLEAN


def _refuse_outside_links(results: Sequence[_Result], named: Sequence[str], mode: str) -> None:
    """Turns each change to a file that a symbolic link leads to, outside the paths named, into an error.

    In every mode, so that `--check` and `--diff` say what `--write` will do.
    """
    roots = [os.path.realpath(path) for path in named]
    verb = "not written" if mode == "write" else "would not be written"
    for result in results:
        real = os.path.realpath(result.path)
        if result.status == "changed" and not _write.inside(real, roots):
            result.status = "error"
            result.error = (
                f"{verb}: a symbolic link to {_output.name(real)}, outside the paths named. Instead, name that file, "
                "or pass --write-link-targets to write through the link."
            )


def _refuse_unwritable(results: Sequence[_Result]) -> None:
    """Turns each change `--write` would refuse to write (a read-only file) into the error it will give."""
    for result in results:
        if result.status != "changed":
            continue
        try:
            why = _write.refusal(os.path.realpath(result.path))
        except OSError:
            continue
        if why is not None:
            result.status, result.error = "error", f"would not be written: {why}"


def _write_all(results: Sequence[_Result], written: list[str], stderr: TextIO, done: Done = MIGRATED) -> None:
    """Writes every changed file, saying so as each is written; turns each one left alone into an error."""
    import signal

    started = time.time()
    cleaned: set = set()
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum, handler in previous.items():  # a signal in a write is held back; one outside it ends the run at once
        if handler is not signal.SIG_IGN:  # ignored as the run was started (a script's `cmd &`): it stays ignored
            signal.signal(signum, _held_back)
    try:
        for result in results:
            if result.status != "changed":
                continue
            with _interrupt_after():
                try:
                    _write.replace(os.path.realpath(result.path), result.old, result.new, cleaned, started)
                except _write.NotWritten as error:
                    result.status, result.error = "error", str(error)
                    continue
                except OSError as error:
                    result.status, result.error = "error", f"cannot write: {error.strerror or error}"
                    continue
                written.append(result.path)
                stderr.write(
                    f"{done.written}: {_output.name(result.path)}\n"
                )  # now, so that a run killed later leaves a record
                stderr.flush()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_HOLDING: list[int] = []
"""While a file is written and listed: [] outside, [0] inside, [0, signum, ...] once a signal came in it."""


@contextlib.contextmanager
def _interrupt_after() -> Iterator[None]:
    """Holds back Ctrl-C (SIGINT) and SIGTERM until the body is done, so that a file is written and listed, or not.

    Blocking the signals for this thread is not enough: the kernel hands a process-wide signal to any thread that has
    it unblocked (the worker pool's), and Python then runs the handler here at once. So the handler only notes it.
    """
    _HOLDING[:] = [0]
    try:
        yield
    finally:
        held, _HOLDING[:] = _HOLDING[1:], []
        if held:
            _interrupted(held[0])


def _held_back(signum: int, frame: FrameType | None) -> None:
    if _HOLDING:
        _HOLDING.append(signum)
    else:
        _interrupted(signum)


def _interrupted(signum: int) -> NoReturn:
    import signal

    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def _report(results: Sequence[_Result], mode: str, target: str) -> dict[str, object]:
    after = mode == "write"
    files = [
        {
            "path": r.path,
            "status": r.status,
            "warnings": r.warnings(after and r.status == "changed"),
            "error": r.error,
        }
        for r in results
    ]
    return {"files": files, "summary": _summary(results, mode, target)}


def _summary(results: Sequence[_Result], mode: str, target: str) -> dict[str, object]:
    summary: dict[str, object] = {
        status: sum(1 for r in results if r.status == status) for status in ("changed", "unchanged", "error", "skipped")
    }
    summary.update(
        files=len(results),
        warnings=sum(len(r.findings) for r in results),
        needs_person=sum(1 for r in results if r.needs_person()),
        mode=mode,
        target=target,
    )
    return summary


def _print(
    results: Sequence[_Result],
    mode: str,
    out_format: str,
    target: str,
    stdout: TextIO,
    stderr: TextIO,
    stdin_mode: bool,
    done: Done = MIGRATED,
    verbose: bool = False,
) -> None:
    if out_format == "json":
        if not (stdin_mode and mode == "write"):
            json.dump(_report(results, mode, target), stdout, indent=2)
            stdout.write("\n")
        return
    after = mode == "write"
    for r in results:
        if r.status == "changed":
            if mode == "diff":
                stdout.write(_diff(r))
            elif mode == "check":
                stdout.write(f"{done.pending}: {_output.name(r.path)}\n")
                if r.notebook:
                    stdout.write(_cell_changes(r))
        for warning in r.warnings(after and r.status == "changed"):
            stderr.write(_warning_line(r.path, warning, out_format, verbose))
        if r.error is not None:
            level = "error" if r.status == "error" else "note"
            if out_format == "github":
                kind = "error" if level == "error" else "notice"
                stderr.write(f"::{kind} file={_output.prop(r.path)}::{_output.data(r.error)}\n")
            else:
                stderr.write(f"{_output.name(r.path)}: {level}: {r.error}\n")
    counts = _summary(results, mode, target)
    verb = done.summary if mode == "write" else f"would be {done.summary}"
    stderr.write(
        f"lossscale-compat: {counts['changed']} file(s) {verb}, {counts['unchanged']} unchanged, "
        f"{counts['skipped']} skipped, {counts['error']} error(s), {counts['warnings']} warning(s).\n"
    )
    if counts["warnings"] and out_format == "text" and not verbose:
        stderr.write(
            f"lossscale-compat: `lossscale-compat migrate --explain {_first_code(results)}` explains a code; "
            "--verbose prints every warning in full.\n"
        )


def _cell_changes(result: _Result) -> str:
    """One line per change in a notebook's cells: which cell, which of its lines."""
    from ._notebook import changed_cells

    lines = []
    for cell, first, last in changed_cells(result.old, result.new):
        where = f"line {first}" if last <= first else f"lines {first}-{last}"
        what = f"lines added after line {first - 1}" if last < first else f"{where} changed"
        lines.append(f"  {_output.name(result.path)}[cell {cell}]: {what}\n")
    return "".join(lines)


def _first_code(results: Sequence[_Result]) -> str:
    """The first warning code of the run, for the hint that names `--explain`."""
    return next(old.code for r in results for old, _ in r.findings)


def _warning_line(path: str, warning: dict, out_format: str, verbose: bool = False) -> str:
    """One warning as a line of text output (its short text, or with `verbose` its full one), or as a GitHub workflow
    command with its parts escaped (the short text in the title, the full one as the message)."""
    cell = warning.get("cell")
    place = f"[cell {cell}]" if cell is not None else ""
    if out_format != "github":
        text = warning["message"] if verbose else warning["short"]
        return f"{_output.name(path)}{place}:{warning['line']}:{warning['col']}: {warning['code']} {text}\n"
    level = "notice" if warning["code"] in w.NOTE_CODES else "warning"
    file, title = _output.prop(path), _output.prop(f"{warning['code']} {warning['short']}")
    if cell is None:
        where = f"line={warning['line']},col={warning['col']}"
        return f"::{level} file={file},{where},title={title}::{_output.data(warning['message'])}\n"
    # a line of the notebook's JSON would point at the wrong place: say it in the text
    where = f"{path}{place}:{warning['line']}:{warning['col']}"
    return f"::{level} file={file},title={title}::{_output.data(f'{where}: ' + warning['message'])}\n"
