"""Migrates the code cells of a Jupyter notebook, leaving every other byte alone."""

from __future__ import annotations

import dataclasses
import json
import re

from . import _engine
from . import _warnings as w

_MAGIC = re.compile(r"^\s*(%|!|\?)|\?\s*$")
_MARK = "# lossscale-compat-cell-{}"
_MARK_RE = re.compile(r"# lossscale-compat-cell-(\d+)$")
_MAGIC_MARK = "# lossscale-compat-magic"


def _dump(notebook: object, indent: int | None, ensure_ascii: bool, newline: bool) -> str:
    text = json.dumps(notebook, indent=indent, ensure_ascii=ensure_ascii)
    return text + ("\n" if newline else "")


def _layout(text: str, notebook: object) -> tuple[int | None, bool, bool] | None:
    """Returns the json.dumps settings that reproduce `text` exactly, if any do."""
    newline = text.endswith("\n")
    match = re.search(r"\n( +)\S", text)
    indents = [len(match.group(1))] if match else [None]
    for indent in indents:
        for ensure_ascii in (False, True):
            if _dump(notebook, indent, ensure_ascii, newline) == text:
                return indent, ensure_ascii, newline
    return None


PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
"""Cell magics whose body is Python that IPython runs: the body is migrated like any cell's."""


def _mask(source: str) -> tuple[str, list[str]] | None:
    """Replaces IPython magic lines by comments; returns None for a cell magic (`%%`) whose body is not Python."""
    stripped = source.lstrip()
    if stripped.startswith("%%") and (stripped[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
        return None
    lines = source.split("\n")
    magics: list[str] = []
    out = []
    for line in lines:
        if _MAGIC.search(line) and not line.lstrip().startswith("#"):
            magics.append(line)
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{_MAGIC_MARK}")
        else:
            out.append(line)
    return "\n".join(out), magics


def _unmask(source: str, magics: list[str]) -> str:
    lines = source.split("\n")
    it = iter(magics)
    return "\n".join(next(it) if line.strip() == _MAGIC_MARK else line for line in lines)


def _code_cells(cells: list[dict]) -> tuple[list[tuple[int, list[str], bool]], list[str]]:
    """The code cells that can be migrated: (index in `cells`, masked magics, source was a list) each, and their
    masked sources."""
    code_cells: list[tuple[int, list[str], bool]] = []
    masked_sources: list[str] = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        joined = "".join(source) if isinstance(source, list) else source
        masked = _mask(joined)
        if masked is None:
            continue
        code_cells.append((index, masked[1], isinstance(source, list)))
        masked_sources.append(masked[0])
    return code_cells, masked_sources


def _join(code_cells: list[tuple[int, list[str], bool]], masked_sources: list[str]) -> bytes:
    """The masked sources as one Python file, each after a line that marks its cell."""
    parts = [_MARK.format(index) + "\n" + source + "\n" for (index, _, _), source in zip(code_cells, masked_sources)]
    return "".join(parts).encode("utf-8")


def _migrate_cells(
    code_cells: list[tuple[int, list[str], bool]], masked_sources: list[str], target: str, path: str
) -> tuple[list[tuple[int, list[str], bool]], bytes, _engine.FileResult, list[int]]:
    """Migrates the cells as one file; when that fails, again without the cells that do not parse alone.

    Returns the cells migrated, their joined source, the result, and the indices of the cells left out.
    """
    combined = _join(code_cells, masked_sources)
    result = _engine.migrate_source(combined, target, path)
    if result.status != "error":
        return code_cells, combined, result, []
    unread = _failing_cells(code_cells, masked_sources)
    kept = [(cell, source) for cell, source in zip(code_cells, masked_sources) if cell[0] not in unread]
    if not unread or not kept:
        return code_cells, combined, result, unread
    code_cells, masked_sources = [cell for cell, _ in kept], [source for _, source in kept]
    combined = _join(code_cells, masked_sources)
    return code_cells, combined, _engine.migrate_source(combined, target, path), unread


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
    cells = notebook["cells"]
    layout = _layout(text, notebook)
    if layout is None:
        return _engine.FileResult(path, "skipped", data, data, [w.Finding(1, 0, w.NOTEBOOK_LAYOUT)])
    code_cells, combined, result, unread = _migrate_cells(*_code_cells(cells), target, path)
    if result.status == "error":
        cell = unread[0] if unread else None
        return _engine.FileResult(path, "skipped", data, data, [w.Finding(1, 0, w.NOTEBOOK_CELL, cell)])
    unreadable = [w.Finding(1, 0, w.NOTEBOOK_CELL, index) for index in unread]  # named; the rest is migrated
    old_lines = combined.decode("utf-8").split("\n")
    findings = unreadable + [_cell_finding(f, old_lines) for f in result.findings]
    if result.status != "changed":
        return _engine.FileResult(
            path, "unchanged" if result.status == "unchanged" else result.status, data, data, findings
        )
    new_text = result.new.decode("utf-8")
    pieces = re.split(r"^# lossscale-compat-cell-(\d+)\n", new_text, flags=re.M)
    head, rest = pieces[0], pieces[1:]
    indices = [int(i) for i in rest[0::2]]
    if indices != [index for index, _, _ in code_cells]:
        return _engine.FileResult(path, "skipped", data, data, [*findings, w.Finding(1, 0, w.NOTEBOOK_CELL)])
    bodies = rest[1::2]
    if head:
        bodies[0] = head + bodies[0]  # imports added above the first cell belong to it
    for (index, magics, as_list), body in zip(code_cells, bodies):
        body = body[:-1] if body.endswith("\n") else body
        source = _unmask(body, magics)
        cells[index]["source"] = source.splitlines(keepends=True) if as_list else source
    indent, ensure_ascii, newline = layout
    new = _dump(notebook, indent, ensure_ascii, newline).encode("utf-8")
    status = "changed" if new != data else "unchanged"
    new_lines = new_text.split("\n")
    head_lines = head.count("\n")
    after = []
    for finding in result.findings:
        moved = dataclasses.replace(finding, line=result.new_line(finding.line))
        placed = _cell_finding(moved, new_lines)
        if placed.cell is None:  # in the lines added above the first cell, which belong to it
            placed = dataclasses.replace(moved, cell=code_cells[0][0])
        elif head_lines and placed.cell == code_cells[0][0]:
            placed = dataclasses.replace(placed, line=placed.line + head_lines)
        after.append(placed)
    return _engine.FileResult(path, status, data, new, findings, line_map=None, new_findings=unreadable + after)


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


def _failing_cells(code_cells: list[tuple[int, list[str], bool]], masked_sources: list[str]) -> list[int]:
    """Returns the indices (in `cells`) of the code cells that do not parse alone."""
    import libcst as cst

    failing = []
    for (index, _, _), source in zip(code_cells, masked_sources):
        if _engine.too_deep(source.encode("utf-8")):  # libcst's parser could crash on it
            failing.append(index)
            continue
        try:
            cst.parse_module(source)
        except Exception:  # noqa: BLE001 - any parse failure names the cell
            failing.append(index)
    return failing
