"""`--annotate` and `--strip-annotations`: the warnings of a run kept in the files as `# lossscale-compat:` comments.

An annotation goes at the end of the first line, from the line the warning names on, where a comment may end a line:
the warning's own line, unless that line ends inside a string or with a backslash, where the comment goes at the end
of the string or of the continued line. Only comments are added or removed, so the file still compiles to the same
code, and the codemod, run again, changes nothing else.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

from . import _warnings as w

PREFIX = "# lossscale-compat: "
# One annotation inside a comment: the prefix, a code and a short text, up to the next `#` or the end of the line.
ANNOTATION = re.compile(r"[ \t]*# lossscale-compat: LSC\d{3}\b[^#\r\n]*")
SHORT_TEXT_LIMIT = w.SHORT_LIMIT
SHORT_TEXTS = w.SHORT  # kept under this name for callers of the annotations


def short_text(code: str) -> str:
    """A few words on one line for `code`, without `#`: its entry in SHORT_TEXTS, else its message's first clause."""
    text = SHORT_TEXTS.get(code) or re.split(r"(?<=[.;:,])\s", w.MESSAGES.get(code, "see docs/codemod.md"))[0]
    text = " ".join(text.replace("#", "").split()).rstrip(".:;,")
    if len(text) > SHORT_TEXT_LIMIT:
        text = text[: SHORT_TEXT_LIMIT - 3].rsplit(" ", 1)[0] + "..."
    return text


def annotation(code: str) -> str:
    """The comment for one warning: `# lossscale-compat: CODE short text`."""
    return f"{PREFIX}{code} {short_text(code)}"


def _decode(data: bytes) -> tuple[str, str] | None:
    """The text and its encoding, or None where an annotation cannot be written in that encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if "#".encode(encoding.replace("-sig", "")) != b"#":  # UTF-8 with a BOM: kept, as `encode` writes it
            return None
        return data.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _line_ends(text: str) -> dict[int, tuple[int, str]] | None:
    """For each line a comment may end: (the column where it may go, the comment already there, or "")."""
    ends: dict[int, tuple[int, str]] = {}
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
            elif token.type in (tokenize.NL, tokenize.NEWLINE):
                row, col = token.start
                ends[row] = (col, comments.get(row, ""))
    except (tokenize.TokenError, SyntaxError):
        return None
    return ends


def _lines(text: str) -> list[str]:
    """The lines as Python counts them, each with its line break."""
    return io.StringIO(text, newline="").readlines()


def _read(data: bytes) -> tuple[list[str], dict[int, tuple[int, str]], str] | None:
    """(the lines, where each line's code ends with its comment, the encoding), or None where no comment can go."""
    decoded = _decode(data)
    if decoded is None:
        return None
    text, encoding = decoded
    ends = _line_ends(text)
    return None if ends is None else (_lines(text), ends, encoding)


def annotate(data: bytes, findings: Iterable[w.Finding]) -> bytes:
    """Returns `data` with a comment for each LSC1xx finding not annotated yet (`data` itself where none can go)."""
    read = _read(data)
    if read is None:
        return data
    lines, ends, encoding = read
    added: dict[int, list[str]] = {}
    for finding in sorted(findings, key=lambda f: (f.line, f.code)):
        if not finding.code.startswith("LSC1"):
            continue
        row = next((r for r in range(finding.line, len(lines) + 1) if r in ends), None)
        if row is None:
            continue
        comment = ends[row][1]
        if f"{PREFIX}{finding.code} " in comment or finding.code in added.get(row, []):
            continue
        added.setdefault(row, []).append(finding.code)
    if not added:
        return data
    for row, codes in added.items():
        col, _ = ends[row]
        line = lines[row - 1]
        comments = "".join(f"  {annotation(code)}" for code in codes)
        lines[row - 1] = line[:col].rstrip(" \t") + comments + line[col:] if col else comments.lstrip() + line
    return "".join(lines).encode(encoding)


def strip(data: bytes) -> bytes:
    """Returns `data` without its `# lossscale-compat:` annotations (comments only, never a string's text)."""
    read = _read(data)
    if read is None:
        return data
    lines, ends, encoding = read
    changed = False
    for row, (col, comment) in ends.items():
        if PREFIX not in comment or row > len(lines):
            continue
        line = lines[row - 1]
        start = col - len(comment)
        kept = ANNOTATION.sub("", comment)
        code = line[:start].rstrip(" \t") if not kept else line[:start]
        lines[row - 1] = code + kept + line[col:]
        changed = True
    return "".join(lines).encode(encoding) if changed else data
