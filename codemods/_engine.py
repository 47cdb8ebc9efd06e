"""Migrates one file's bytes: prefilter (`_prefilter`), parse, transform, splice when needed, verify."""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Callable

from . import _linediff, _verify_names
from . import _warnings as w
from ._prefilter import may_match, may_match_ast, may_match_parsed, surely_matches  # noqa: F401 - and the CLI's, tests'

VERIFY = True
"""Whether the verifier checks each output (`_verify_names`); a test turns it off to show it is what warns."""


@dataclasses.dataclass
class FileResult:
    """The outcome of migrating one file."""

    path: str
    status: str
    """"changed", "unchanged", "error" or "skipped"."""
    old: bytes = b""
    new: bytes = b""
    findings: list[w.Finding] = dataclasses.field(default_factory=list)
    error: str | None = None
    line_map: Callable[[int], int] | None = None
    """Maps a line of the old file to the same line in the new one."""
    new_findings: list[w.Finding] | None = None
    """`findings` placed in the new file, when `line_map` cannot say where (notebook cells)."""

    def new_line(self, line: int) -> int:
        """Where line `line` of the old file is in the new one (the same line when nothing moved)."""
        return self.line_map(line) if self.line_map else line


def import_command() -> None:
    """Imports libcst and the command, which `transform_code` imports when first called."""
    from . import migrate_loss_scale  # noqa: F401


def transform_code(data: bytes, target: str, filename: str = "") -> tuple[bytes, bytes, list[w.Finding]]:
    """Parses `data` and runs the command; returns (libcst's print of the input, output, findings).

    Raises libcst.ParserSyntaxError, SyntaxError or UnicodeError when `data` cannot be read.
    """
    import libcst as cst
    from libcst.codemod import CodemodContext

    from .migrate_loss_scale import MigrateLossScaleCommand, prints

    module = cst.parse_module(data)
    command = MigrateLossScaleCommand(CodemodContext(filename=filename), target=target, source=data)
    new_module = command.transform_module(module)
    printed, new = prints(command, module, new_module)
    return printed, new, list(command.findings)


def splice(original: bytes, printed: bytes, new: bytes) -> bytes | None:
    """Applies the line changes between `printed` and `new` to `original`, or returns None.

    `printed` is libcst's (inexact) print of `original`. A change is only applied where the
    lines it replaces are identical in `original` and `printed`.
    """
    orig_lines = original.splitlines(keepends=True)
    printed_lines = printed.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    # Map each printed line that is identical in the original to its original index.
    same = {}
    matched = _linediff.opcodes(orig_lines, printed_lines, exact=True)
    changes = _linediff.opcodes(printed_lines, new_lines, exact=True)
    if matched is None or changes is None:
        return None
    for tag, i1, i2, j1, _j2 in matched:
        if tag == "equal":
            for k in range(i2 - i1):
                same[j1 + k] = i1 + k
    out: list[bytes] = []
    cursor = 0  # next original line to copy
    for tag, i1, i2, j1, j2 in changes:
        if tag == "equal":
            continue
        if i1 in same:
            anchor = same[i1]
        elif i1 == i2 and i1 - 1 in same:
            anchor = same[i1 - 1] + 1
        elif i1 == i2 == 0:
            anchor = 0
        else:
            return None
        if anchor < cursor or any(same.get(i1 + k) != anchor + k for k in range(i2 - i1)):
            return None
        out.extend(orig_lines[cursor:anchor])
        out.extend(new_lines[j1:j2])
        cursor = anchor + (i2 - i1)
    out.extend(orig_lines[cursor:])
    return b"".join(out)


line_mapper = _linediff.line_mapper


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return f"{type(error).__name__}: {first}"


_LIBCST_AT = re.compile(r"error at (\d+):(\d+): (.*)")


def parse_error(data: bytes, error: BaseException) -> str:
    """Says where and why `data` does not parse: Python's own position and message, then libcst's detail."""
    import ast

    detail = ""
    line = col = None
    message = getattr(error, "message", None)
    if isinstance(message, str):  # a libcst.ParserSyntaxError
        found = _LIBCST_AT.search(message)
        if found:
            line, col, detail = int(found.group(1)), int(found.group(2)) + 1, found.group(3)
        else:
            line, col, detail = error.editor_line, error.editor_column, message  # type: ignore[attr-defined]
    elif isinstance(error, SyntaxError):
        line, col, detail = error.lineno, error.offset, error.msg
    else:
        detail = _describe(error)
    try:
        ast.parse(data)
    except SyntaxError as python:
        where = f"line {python.lineno}, column {python.offset}: " if python.lineno else ""
        extra = f" (libcst: {detail})" if detail and detail != python.msg else ""
        return f"{where}{python.msg}{extra}"
    except (ValueError, UnicodeError, LookupError, RecursionError, MemoryError):
        pass
    # `ast.parse` of bytes lets a bad byte in a comment pass; running the file does not.
    undecodable = _undecodable(data)
    if undecodable:
        return undecodable
    where = f"line {line}, column {col}: " if line else ""
    return f"{where}{detail} (Python accepts this file; libcst cannot parse it)"


def _undecodable(data: bytes) -> str | None:
    """Says where `data` is not text in its declared encoding (UTF-8 by default), which Python rejects; else None."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return (
            f"line {line}, column {col}: byte 0x{data[error.start]:02x} is not {error.encoding}: Python rejects "
            "this file. Instead, fix the byte or declare the file's encoding (PEP 263)"
        )
    except (SyntaxError, LookupError):
        return None  # a bad encoding declaration: Python's own message says it
    return None


_VALID_BUT_DEEP = (
    "It is valid Python (Python's own parser reads it), but libcst, which the codemod reads it with, cannot handle "
    "expressions nested or chained this deeply. Instead, split the deepest expression into several statements, "
    "or migrate the file by hand"
)


def too_deep(data: bytes) -> str | None:
    """Says why `data` is refused before libcst parses it, or returns None.

    libcst's native parser overflows its stack (SIGSEGV) on expressions nested or chained thousands deep
    (brackets, `a.b.b...`, `1 + 1 + ...`). Python's own parser refuses them cleanly, and first: more than
    200 open brackets (`too many nested parentheses`), or a tree too deep to build (RecursionError).
    """
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
    except SyntaxError as error:
        if "too many nested" not in str(error.msg):
            return None  # libcst reports it, with Python's message
        return (
            f"cannot parse: line {error.lineno}: {error.msg}: Python rejects this file, and libcst's parser would "
            "crash on it, so it was left alone. Instead, nest fewer brackets (Python allows 200)"
        )
    except MemoryError as error:
        if "too complex" not in str(error):  # not the parser's own stack (Python 3.9-3.11's message): memory
            raise
        return _TOO_DEEP
    except RecursionError:
        return _TOO_DEEP
    except (ValueError, UnicodeError, LookupError):
        return None
    return None


_TOO_DEEP = (
    "cannot parse: an expression is nested or chained too deeply for Python's own parser (RecursionError), "
    "and libcst's parser would crash on it, so it was left alone. Instead, split the deepest expression "
    "into several statements"
)


def nul_error(data: bytes) -> str | None:
    """Returns a message if `data` holds a NUL byte, which Python rejects anywhere in a source file."""
    at = data.find(b"\0")
    if at < 0:
        return None
    line = data.count(b"\n", 0, at) + 1
    col = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return (
        f"a NUL byte at line {line}, column {col}: Python rejects a source file holding one, so it was "
        "left alone. Remove the byte and run again"
    )


def _verify(old: bytes, new: bytes) -> ast.Module | None:
    """Raises if `new` does not parse: Python's own parser, or libcst's when Python rejects the input too.

    Returns Python's tree of `new`, or None when only libcst reads it.
    """
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an invalid escape in a string is the input's, already reported by Python
            return ast.parse(new)
    except (SyntaxError, ValueError):
        try:
            ast.parse(old)
        except (SyntaxError, ValueError):
            import libcst as cst

            cst.parse_module(new)  # input Python rejects but libcst reads: hold the output to libcst's parser
            return None
        raise


def _parse(data: bytes) -> ast.Module | None:
    """Python's tree of `data`, or None when it does not parse."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return None


def names_left(
    old: bytes,
    new: bytes,
    tree: ast.Module | None,
    target: str,
    findings: list[w.Finding],
    to_new: Callable[[int], int] | None = None,
) -> list[w.Finding]:
    """The verifier: an LSC150 finding (at an `old` line) for each reference in `new` to a name `target` lacks that no
    finding marks. `tree` is `new`'s (parsed here when None); `to_new` maps `old`'s lines to `new`'s (None: same)."""
    if not VERIFY or not _verify_names.may_reference(new):
        return []
    tree = tree if tree is not None else _parse(new)
    if tree is None:
        return []
    warned = {to_new(f.line) if to_new else f.line for f in findings}
    if b"lossscale-compat" in new:  # a line the user told the codemod to leave alone
        from ._scan import SUPPRESS_RE

        lines = re.split(r"\r\n|\r|\n", new.decode("utf-8", "replace"))  # Python's line breaks, not a form feed
        warned.update(number for number, text in enumerate(lines, start=1) if SUPPRESS_RE.search(text))
    left = _verify_names.unwarned(tree, target, warned)
    to_old = line_mapper(new, old) if left and to_new else None
    return [
        w.Finding(
            to_old(line) if to_old else line, col, w.NAME_LEFT, detail=(name, _part(name, missing), ", ".join(stacks))
        )
        for line, col, name, missing, stacks in left
    ]


def _part(name: str, missing: str) -> str:
    return "it" if name == missing else f"`{missing}`"


def _with(findings: list[w.Finding], more: list[w.Finding]) -> list[w.Finding]:
    return sorted([*findings, *more], key=lambda f: (f.line, f.col, f.code)) if more else findings


def migrate_source(data: bytes, target: str = "keras3", path: str = "<string>") -> FileResult:
    """Migrates the bytes of one Python file; never raises for bad input, reports it instead."""
    if not may_match(data, target):
        return FileResult(path, "unchanged", data, data, names_left(data, data, None, target, []))
    import gc

    # A big file's syntax trees (`ast`'s for the prefilter, then libcst's) and scopes are millions of
    # objects that live until the file is done; the cyclic collector would walk them again and again
    # (a sixth of the time at 8,000 sites, three quarters of the `ast` prefilter's at 20,000).
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = None
        if not surely_matches(data):
            tree = _parse(data)
            if tree is not None and not may_match_parsed(data, tree, target):
                return FileResult(path, "unchanged", data, data, names_left(data, data, tree, target, []))
        return _migrate_parsable(data, target, path, tree)
    finally:
        if collecting:
            gc.enable()


def _migrate_parsable(data: bytes, target: str, path: str, tree: ast.Module | None = None) -> FileResult:
    import libcst as cst

    nul = nul_error(data)
    if nul:
        return FileResult(path, "error", data, data, error=nul)
    deep = too_deep(data)
    if deep:
        return FileResult(path, "error", data, data, error=deep)
    try:
        printed, new, findings = transform_code(data, target, path)
    except (cst.ParserSyntaxError, SyntaxError, UnicodeError, LookupError) as error:
        return FileResult(path, "error", data, data, error=f"cannot parse: {parse_error(data, error)}")
    except RecursionError:
        return FileResult(
            path, "error", data, data, error=f"cannot parse: the file nests too deeply. {_VALID_BUT_DEEP}"
        )
    if new == printed:
        return FileResult(
            path, "unchanged", data, data, _with(findings, names_left(data, data, tree, target, findings))
        )
    if printed + b"\r" == data and not new.endswith(b"\r"):  # libcst drops the last `\r` of a CR-only file
        printed, new = data, new + b"\r"
    if printed != data:
        spliced = splice(data, printed, new)
        if spliced is None:
            return FileResult(path, "skipped", data, data, [*findings, w.Finding(1, 0, w.NOT_BYTE_EXACT)])
        new = spliced
    try:
        new_tree = _verify(data, new)
    except Exception as error:  # noqa: BLE001 - the output is ours; any failure means do not write
        return FileResult(
            path, "error", data, data, findings, error=f"internal error, output does not parse: {_describe(error)}"
        )
    to_new = line_mapper(data, new)
    findings = _with(findings, names_left(data, new, new_tree, target, findings, to_new))
    return FileResult(path, "changed", data, new, findings, line_map=to_new)
