"""Migrates the code cells of a Jupyter notebook: each edited cell's `source` is replaced in the JSON text, so every
other byte (layout, escapes, key order, outputs) stays as it was."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Callable

from . import _annotate, _engine
from . import _warnings as w

# A line IPython reads as a magic, a shell escape, help, or an assignment from one (`files = !ls`).
_MAGIC = re.compile(r"^\s*(%|!|\?)|\?\s*$|^\s*[\w.]+\s*=\s*[!%]")
# A line magic whose argument is one Python statement, run in the notebook's namespace: (prefix, statement).
_PYTHON_LINE_MAGIC = re.compile(
    r"^(?P<indent>\s*)(?P<prefix>%(?:time|timeit(?:\s+-(?:[nrp]\s*\d+|[tcqo]))*|prun)\s+)(?P<statement>[^-\s].*)$"
)
_LOSS_SCALING_WORDS = re.compile(r"mixed_precision|LossScale|loss_scale")
_MARK = "# lossscale-compat-cell-{}"
_MARK_RE = re.compile(r"# lossscale-compat-cell-(\d+)$")
_MAGIC_MARK = "# lossscale-compat-magic"
_PREFIX_MARK = "  # lossscale-compat-magic-prefix-{}"
_PREFIX_MARK_RE = re.compile(r"  # lossscale-compat-magic-prefix-(\d+)")

PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
"""Cell magics whose body is Python that IPython runs in the notebook's namespace: migrated with the other cells."""

_SCRIPT_CELL_MAGIC = re.compile(
    r"%%(?:python3?|script\s+(?:\S*/)?python3?(?:\.\d+)?|writefile(?:\s+-a)?\s+\S+\.py)\s*$"
)
"""Cell magics whose body is a Python program of its own (another process, or a file written): migrated alone."""


@dataclasses.dataclass
class _Cell:
    """A code cell's source as the codemod sees it, and how to put IPython's lines back."""

    index: int
    """Its index in the notebook's `cells`."""
    masked: str
    magics: list[str]
    prefixes: list[str]
    as_list: bool
    head: str = ""
    """The cell magic line (with its newline) of a cell migrated alone, else empty."""


def _mask(source: str) -> tuple[str, list[str], list[str]]:
    """Replaces IPython's lines by comments, and line magics holding a statement by the statement (marked)."""
    magics: list[str] = []
    prefixes: list[str] = []
    out = []
    for line in source.split("\n"):
        statement = _PYTHON_LINE_MAGIC.match(line)
        if statement:
            out.append(statement["indent"] + statement["statement"] + _PREFIX_MARK.format(len(prefixes)))
            prefixes.append(statement["prefix"])
        elif _is_ipython(line):
            magics.append(line)
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{_MAGIC_MARK}")
        else:
            out.append(line)
    return "\n".join(out), magics, prefixes


def _is_ipython(line: str) -> bool:
    """Whether `_mask` keeps `line` from the codemod (IPython's, not Python, and not a line magic's statement)."""
    return not _PYTHON_LINE_MAGIC.match(line) and bool(_MAGIC.search(line)) and not line.lstrip().startswith("#")


def _ipython_lines(source: str) -> list[int]:
    """The 1-based numbers of a code cell's IPython lines that `_mask` keeps, below its cell magic if any."""
    head = _script_head(source)
    below = head.count("\n")
    return [number + below for number, line in enumerate(source[len(head) :].split("\n"), 1) if _is_ipython(line)]


def _ipython_findings(index: int, source: str, target: str) -> list[w.Finding]:
    """An IPYTHON_LINE_LEFT finding for each IPython line of code cell `index` that names a loss-scaling API."""
    lines = source.split("\n")
    found = []
    for number in _ipython_lines(source):
        line = lines[number - 1].strip()
        if _names_legacy(line, target):
            kind = "IPython help (`?`)" if line.endswith("?") or line.startswith("?") else "a line magic (`%`)"
            kind = "a shell command (`!`)" if re.match(r"!|[\w.]+\s*=\s*!", line) else kind
            found.append(w.Finding(number, 0, w.IPYTHON_LINE_LEFT, index, (kind,)))
    return found


def _ipython_moved(finding: w.Finding, old: str, new: str) -> w.Finding:
    """`finding` on an IPython line of a cell's `old` source, placed on the same line of its `new` source."""
    before, after = _ipython_lines(old), _ipython_lines(new)
    if len(before) != len(after):  # never so far: the codemod keeps IPython's lines as they are
        return finding
    return dataclasses.replace(finding, line=after[before.index(finding.line)])


def _unmask(source: str, magics: list[str], prefixes: list[str]) -> str:
    it = iter(magics)
    out = []
    for line in source.split("\n"):
        if line.strip() == _MAGIC_MARK:
            out.append(next(it))
            continue
        marked = _PREFIX_MARK_RE.search(line)
        if marked:
            line = line[: marked.start()] + line[marked.end() :]  # an annotation may follow the mark
            body = line.lstrip()
            line = line[: len(line) - len(body)] + prefixes[int(marked.group(1))] + body
        out.append(line)
    return "\n".join(out)


def _cells(cells: list[dict], target: str) -> tuple[list[_Cell], list[_Cell], list[w.Finding]]:
    """The code cells migrated together (one namespace), those migrated alone (a program of their own, behind a
    cell magic), and a finding for each cell that names a loss-scaling API but cannot be migrated."""
    together: list[_Cell] = []
    alone: list[_Cell] = []
    named: list[w.Finding] = []
    for index, cell in enumerate(cells):
        source = cell.get("source", "")
        joined = "".join(source) if isinstance(source, list) else source
        kind = cell.get("cell_type")
        if kind != "code":
            if kind is None and _names_legacy(joined, target):
                named.append(w.Finding(1, 0, w.NOTEBOOK_CELL_LEFT, index, ("it has no `cell_type`",)))
            continue
        head = _script_head(joined)
        joined = joined[len(head) :]
        stripped = joined.lstrip()
        if not head and stripped.startswith("%%"):
            first = stripped.split("\n", 1)[0].rstrip()
            if (first[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
                if _names_legacy(joined, target):
                    detail = (f"its body is run by `{first}`, not as Python",)
                    named.append(w.Finding(1, 0, w.NOTEBOOK_CELL_LEFT, index, detail))
                continue
        masked, magics, prefixes = _mask(joined)
        named += _ipython_findings(index, head + joined, target)
        (alone if head else together).append(_Cell(index, masked, magics, prefixes, isinstance(source, list), head))
    return together, alone, named


def _script_head(source: str) -> str:
    """The cell magic line (with its newline) of a cell whose body is a Python program of its own, else ""."""
    stripped = source.lstrip()
    first = stripped.split("\n", 1)[0]
    if not _SCRIPT_CELL_MAGIC.match(first.rstrip()):
        return ""
    return source[: len(source) - len(stripped)] + first + ("\n" if "\n" in stripped else "")


def _names_legacy(source: str, target: str) -> bool:
    """Whether a cell left alone may name a loss-scaling API (in code, or in a shell command's Python)."""
    return _engine.may_match(source.encode("utf-8"), target) or _LOSS_SCALING_WORDS.search(source) is not None


def _join(cells: list[_Cell]) -> bytes:
    """The masked sources as one Python file, each after a line that marks its cell."""
    return "".join(_MARK.format(cell.index) + "\n" + cell.masked + "\n" for cell in cells).encode("utf-8")


def _migrate_cells(
    cells: list[_Cell], target: str, path: str
) -> tuple[list[_Cell], bytes, _engine.FileResult, list[int]]:
    """Migrates the cells as one file; when that fails, again without the cells that do not parse alone.

    Returns the cells migrated, their joined source, the result, and the indices of the cells left out.
    """
    combined = _join(cells)
    result = _engine.migrate_source(combined, target, path)
    if result.status != "error":
        return cells, combined, result, []
    unread = _failing_cells(cells)
    kept = [cell for cell in cells if cell.index not in unread]
    if not unread or not kept:
        return cells, combined, result, unread
    combined = _join(kept)
    return kept, combined, _engine.migrate_source(combined, target, path), unread


@dataclasses.dataclass
class _Outcome:
    """What migrating some cells gave: new sources by cell index, findings in the old and the new cells."""

    sources: dict[int, str] = dataclasses.field(default_factory=dict)
    old: list[w.Finding] = dataclasses.field(default_factory=list)
    new: list[w.Finding] = dataclasses.field(default_factory=list)
    failed: bool = False


def _together(cells: list[_Cell], target: str, path: str) -> _Outcome:
    """Migrates the cells that share the notebook's namespace, as one file."""
    outcome = _Outcome()
    if not cells:
        return outcome
    cells, combined, result, unread = _migrate_cells(cells, target, path)
    if result.status == "error":
        outcome.old = outcome.new = [w.Finding(1, 0, w.NOTEBOOK_CELL, unread[0] if unread else None)]
        outcome.failed = True
        return outcome
    unreadable = [w.Finding(1, 0, w.NOTEBOOK_CELL, index) for index in unread]  # named; the rest is migrated
    old_lines = combined.decode("utf-8").split("\n")
    outcome.old = unreadable + [_cell_finding(f, old_lines) for f in result.findings]
    outcome.new = list(outcome.old)
    if result.status != "changed":
        return outcome
    new_text = result.new.decode("utf-8")
    pieces = re.split(r"^# lossscale-compat-cell-(\d+)\n", new_text, flags=re.M)
    head, rest = pieces[0], pieces[1:]
    if [int(i) for i in rest[0::2]] != [cell.index for cell in cells]:
        outcome.old = outcome.new = [*outcome.old, w.Finding(1, 0, w.NOTEBOOK_CELL)]
        outcome.failed = True
        return outcome
    bodies = rest[1::2]
    if head:
        bodies[0] = head + bodies[0]  # imports added above the first cell belong to it
    for cell, body in zip(cells, bodies):
        body = body[:-1] if body.endswith("\n") else body
        outcome.sources[cell.index] = _unmask(body, cell.magics, cell.prefixes)
    new_lines = new_text.split("\n")
    head_lines = head.count("\n")
    outcome.new = list(unreadable)
    for finding in result.findings:
        moved = dataclasses.replace(finding, line=result.new_line(finding.line))
        placed = _cell_finding(moved, new_lines)
        if placed.cell is None:  # in the lines added above the first cell, which belong to it
            placed = dataclasses.replace(moved, cell=cells[0].index)
        elif head_lines and placed.cell == cells[0].index:
            placed = dataclasses.replace(placed, line=placed.line + head_lines)
        outcome.new.append(placed)
    return outcome


def _alone(cell: _Cell, target: str, path: str) -> _Outcome:
    """Migrates a cell whose body is a program of its own (`%%python`, `%%writefile x.py`)."""
    outcome = _Outcome()
    result = _engine.migrate_source(cell.masked.encode("utf-8"), target, path)
    if result.status == "error":
        outcome.old = outcome.new = [w.Finding(1, 0, w.NOTEBOOK_CELL, cell.index)]
        return outcome
    below = 1 if cell.head else 0  # the magic's line comes first
    outcome.old = [dataclasses.replace(f, line=f.line + below, cell=cell.index) for f in result.findings]
    outcome.new = [
        dataclasses.replace(f, line=result.new_line(f.line) + below, cell=cell.index) for f in result.findings
    ]
    if result.status == "changed":
        outcome.sources[cell.index] = cell.head + _unmask(result.new.decode("utf-8"), cell.magics, cell.prefixes)
    return outcome


def migrate_notebook(data: bytes, target: str = "keras3", path: str = "<notebook>") -> _engine.FileResult:
    """Migrates the code cells of a notebook's bytes; all other bytes stay as they are."""
    if not _engine.may_match(data, target):
        return _engine.FileResult(path, "unchanged", data, data)
    try:
        text = data.decode("utf-8")
        notebook = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return _engine.FileResult(path, "error", data, data, error=f"cannot read notebook: {error}")
    problem = _malformed(notebook)
    if problem:
        return _engine.FileResult(
            path,
            "error",
            data,
            data,
            error=f"cannot read notebook: {problem}. Fix the notebook (e.g. open and save it in Jupyter) and run again",
        )
    together, alone, named = _cells(notebook["cells"], target)
    outcomes = [_together(together, target, path), *(_alone(cell, target, path) for cell in alone)]
    sources = {index: source for outcome in outcomes for index, source in outcome.sources.items()}
    cells = notebook["cells"]
    moved = [
        _ipython_moved(f, _source(cells[f.cell]), sources[f.cell])
        if f.code == w.IPYTHON_LINE_LEFT and f.cell in sources
        else f
        for f in named
    ]
    pairs = [*zip(named, moved), *(pair for outcome in outcomes for pair in zip(outcome.old, outcome.new))]
    pairs.sort(key=lambda pair: _place(pair[0]))
    old, new_findings = [old for old, _ in pairs], [new for _, new in pairs]
    if not sources:
        status = "skipped" if outcomes[0].failed else "unchanged"
        return _engine.FileResult(path, status, data, data, old)
    as_list = {index: isinstance(notebook["cells"][index]["source"], list) for index in sources}
    for index, source in sources.items():
        notebook["cells"][index]["source"] = source.splitlines(keepends=True) if as_list[index] else source
    new_text = _splice(text, notebook, sources, as_list)
    if new_text is None:
        note = w.Finding(1, 0, w.NOTEBOOK_LAYOUT)
        old, new_findings = [note, *old], [note, *new_findings]
        new_text = _standard_layout(notebook)
    new = new_text.encode("utf-8")
    status = "changed" if new != data else "unchanged"
    return _engine.FileResult(path, status, data, new, old, line_map=None, new_findings=new_findings)


def _place(finding: w.Finding) -> tuple[int, int, int]:
    return (-1 if finding.cell is None else finding.cell, finding.line, finding.col)


def _malformed(notebook: object) -> str | None:
    """Says what in a parsed notebook is not laid out as nbformat 4 says, or returns None."""
    if not isinstance(notebook, dict):
        return f"the top level is {_kind(notebook)}, not an object"
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        return "it has no `cells` list" if cells is None else f"`cells` is {_kind(cells)}, not a list"
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            return f"cell {index} is {_kind(cell)}, not an object"
        source = cell.get("source", "")
        if isinstance(source, list):
            odd = [line for line in source if not isinstance(line, str)]
            if odd:
                return f"cell {index}'s `source` list holds {_kind(odd[0])}, where nbformat has only strings"
        elif not isinstance(source, str):
            return f"cell {index}'s `source` is {_kind(source)}, not a string or a list of strings"
    return None


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _cell_finding(finding: w.Finding, lines: list[str]) -> w.Finding:
    """Re-numbers a finding of the joined cells to a line within its code cell, and names the cell."""
    for number in range(min(finding.line, len(lines)) - 1, -1, -1):
        match = _MARK_RE.match(lines[number])
        if match and number == finding.line - 1:  # on a marker: about the whole notebook
            return dataclasses.replace(finding, line=1)
        if match:
            return dataclasses.replace(finding, line=finding.line - number - 1, cell=int(match.group(1)))
    return dataclasses.replace(finding, cell=None)


def _failing_cells(cells: list[_Cell]) -> list[int]:
    """Returns the indices (in `cells`) of the code cells that do not parse alone."""
    import libcst as cst

    failing = []
    for cell in cells:
        if _engine.too_deep(cell.masked.encode("utf-8")):  # libcst's parser could crash on it
            failing.append(cell.index)
            continue
        try:
            cst.parse_module(cell.masked)
        except Exception:  # noqa: BLE001 - any parse failure names the cell
            failing.append(cell.index)
    return failing


# --- the JSON text: where each cell's `source` is, and its new text in the same layout

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET_OR_STRING = re.compile(r'["\[\]{}]')
_SCALAR = re.compile(r"[^,\]}\s]+")


def _value_end(text: str, start: int) -> int:
    """Where the JSON value at `start` ends (the text is valid JSON: json.loads read it)."""
    if text[start] == '"':
        return _STRING.match(text, start).end()  # type: ignore[union-attr]
    if text[start] not in "[{":
        return _SCALAR.match(text, start).end()  # type: ignore[union-attr]
    depth, at = 0, start
    while True:
        found = _BRACKET_OR_STRING.search(text, at)
        assert found is not None
        char, at = found.group(), found.end()
        if char == '"':
            at = _STRING.match(text, found.start()).end()  # type: ignore[union-attr]
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return at


def _members(text: str, start: int) -> list[tuple[str, int, int]]:
    """The members of the JSON object at `start`: (key, start, end of its value) each, in order."""
    members = []
    at = _WHITESPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    while text[at] != "}":
        key_end = _STRING.match(text, at).end()  # type: ignore[union-attr]
        key = json.loads(text[at:key_end])
        at = _WHITESPACE.match(text, key_end).end() + 1  # type: ignore[union-attr] # past the colon
        value = _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]
        end = _value_end(text, value)
        members.append((key, value, end))
        at = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = _WHITESPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    return members


def _elements(text: str, start: int) -> list[tuple[int, int]]:
    """The (start, end) of each element of the JSON array at `start`."""
    elements = []
    at = _WHITESPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    while text[at] != "]":
        end = _value_end(text, at)
        elements.append((at, end))
        at = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = _WHITESPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    return elements


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Cell index -> (start, end) of its `source` value in the notebook's JSON text (the last one, as json reads)."""
    top = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    cells = [(value, end) for key, value, end in _members(text, top) if key == "cells"][-1]
    spans = {}
    for index, (cell, _) in enumerate(_elements(text, cells[0])):
        sources = [(value, end) for key, value, end in _members(text, cell) if key == "source"]
        if sources:
            spans[index] = sources[-1]
    return spans


def _ascii_only(text: str) -> bool:
    """Whether the notebook writes non-ASCII characters as `\\uXXXX` escapes (json's ensure_ascii)."""
    if not text.isascii():
        return False
    return re.search(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}", text) is not None


def _string(value: str, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _render(text: str, span: tuple[int, int], new: str, as_list: bool, ascii_only: bool) -> str:
    """The JSON text of a cell's new source, laid out as its old one; its unchanged lines keep their old text."""
    start, end = span
    if not as_list:
        return _string(new, ascii_only)
    lines = new.splitlines(keepends=True)
    if not lines:
        return "[]"
    old = _elements(text, start)
    kept: dict[str, str] = {}
    for element_start, element_end in old:
        kept.setdefault(json.loads(text[element_start:element_end]), text[element_start:element_end])
    if old:
        opening = text[start + 1 : old[0][0]]
        closing = text[old[-1][1] : end - 1]
    else:
        line_start = text.rfind("\n", 0, start) + 1
        indent = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
        step = _indent_step(text)
        opening = f"\n{indent}{step}" if step is not None else ""
        closing = f"\n{indent}" if step is not None else ""
    if len(old) > 1:
        separator = text[old[0][1] : old[1][0]]
    elif "\n" in opening:
        separator = "," + opening
    else:
        separator = ", " if re.search(r'":\s', text) else ","
    return "[" + opening + separator.join(kept.get(line) or _string(line, ascii_only) for line in lines) + closing + "]"


def _indent_step(text: str) -> str | None:
    """The notebook's indent unit (the indent of its first member), or None for JSON on one line."""
    found = re.match(r"\s*\{\n([ \t]*)", text)
    return found.group(1) if found else None


def _splice(text: str, notebook: dict, new_sources: dict[int, str], as_list: dict[int, bool]) -> str | None:
    """The text of `notebook` (whose cells hold `new_sources`): the old `text` with each new source in place of
    the old one, or None if that cannot be done."""
    try:
        spans = _source_spans(text)
    except (AttributeError, AssertionError, IndexError, ValueError):
        return None
    if any(index not in spans for index in new_sources):
        return None
    ascii_only = _ascii_only(text)
    pieces, at = [], 0
    for index in sorted(new_sources):
        start, end = spans[index]
        pieces += [text[at:start], _render(text, (start, end), new_sources[index], as_list[index], ascii_only)]
        at = end
    pieces.append(text[at:])
    new = "".join(pieces)
    try:
        read = json.loads(new)
    except ValueError:
        return None
    return new if read == notebook else None


def _standard_layout(notebook: dict) -> str:
    """The notebook as nbformat writes it: indent 1, keys sorted, non-ASCII as is, a final newline."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def changed_cells(old: bytes, new: bytes) -> list[tuple[int, int, int]]:
    """(cell index, first line, last line) of each change between two versions of a notebook, lines 1-based in the
    old cell's source (a line added after line N is at N+1, with last = first - 1)."""
    from . import _linediff

    def sources(data: bytes) -> list[list[str]]:
        cells = json.loads(data.decode("utf-8"))["cells"]
        return [_source(cell).splitlines(keepends=True) for cell in cells]

    old_cells, new_cells = sources(old), sources(new)
    changes = []
    for index, (before, after) in enumerate(zip(old_cells, new_cells)):
        if before == after:
            continue
        for tag, i1, i2, _, _ in _linediff.opcodes(before, after) or [("replace", 0, len(before), 0, 0)]:
            if tag != "equal":
                changes.append((index, i1 + 1, i2))
    return changes


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def annotate_notebook(data: bytes, findings: list[w.Finding]) -> bytes:
    """Returns the notebook with a comment in its cell for each LSC1xx finding not annotated yet."""
    by_cell: dict[int, list[w.Finding]] = {}
    for finding in findings:
        if finding.cell is not None:
            by_cell.setdefault(finding.cell, []).append(finding)
    return _edit_cells(data, by_cell, lambda body, found: _annotate.annotate(body, found))


def strip_notebook(data: bytes) -> bytes:
    """Returns the notebook without `# lossscale-compat:` annotations in its code cells."""
    try:
        cells = json.loads(data.decode("utf-8"))["cells"]
        marked: dict[int, list[w.Finding]] = {
            index: [] for index, cell in enumerate(cells) if "lossscale-compat:" in _source(cell)
        }
    except (UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return data
    return _edit_cells(data, marked, lambda body, _: _annotate.strip(body))


def _edit_cells(data: bytes, by_cell: dict[int, list[w.Finding]], edit: Callable[[bytes, list], bytes]) -> bytes:
    """The notebook with `edit(masked body, the cell's findings in its body's lines)` applied to each cell named."""
    if not by_cell:
        return data
    text = data.decode("utf-8")
    notebook = json.loads(text)
    sources, as_list = {}, {}
    for index, found in by_cell.items():
        cell = notebook["cells"][index]
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        head = _script_head(source)
        masked, magics, prefixes = _mask(source[len(head) :])
        below = 1 if head else 0
        kept = set(_ipython_lines(source))  # IPython's lines: a comment there would change what IPython does
        found = [dataclasses.replace(f, line=f.line - below, cell=None) for f in found if below < f.line not in kept]
        edited = head + _unmask(edit(masked.encode("utf-8"), found).decode("utf-8"), magics, prefixes)
        if edited != source:
            sources[index], as_list[index] = edited, isinstance(cell.get("source"), list)
            cell["source"] = edited.splitlines(keepends=True) if as_list[index] else edited
    if not sources:
        return data
    return (_splice(text, notebook, sources, as_list) or _standard_layout(notebook)).encode("utf-8")
