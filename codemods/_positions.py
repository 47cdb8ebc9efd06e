"""Start positions of a few nodes, found while printing the module (libcst's PositionProvider places every node).

The same print keeps the text of each top-level statement, so that a transformed copy of the module, which
reuses the statements it does not change, is printed from it: only the changed statements are printed again.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence

import libcst as cst

from ._libcst_internals import CodegenState, codegen

LINE_BREAK = re.compile(r"\r\n?|\n")
"""A line break as Python and libcst count them (`str.splitlines` also breaks at form feeds and more)."""
_NOTHING = contextlib.nullcontext()


class _Printer(CodegenState):
    """libcst's print, without the context manager libcst makes per node to record positions nobody asks for."""

    def record_syntactic_position(  # type: ignore[override]  # any context manager does for libcst's `with`
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        return _NOTHING


def plain_code(module: cst.Module) -> str:
    """`module.code`, printed without libcst's per-node position bookkeeping."""
    state = _Printer(default_indent=module.default_indent, default_newline=module.default_newline)
    codegen(module, state)
    return "".join(state.tokens)


class _StartRecorder(CodegenState):
    """Notes the token index where each wanted node starts, by libcst's rules for syntactic positions."""

    def __init__(self, module: cst.Module, wanted: set[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.types = {type(node) for node in wanted}
        self.begin: dict[cst.CSTNode, int] = {}
        """Where each wanted node's print begins."""
        self.at: dict[cst.CSTNode, int] = {}
        """Where each wanted node's syntactic position starts, for the nodes whose print says so."""
        self.ends = (*module.body, *module.footer)
        self.bounds: list[int] = []
        """Where each top-level statement and footer line begins (they come in order: no lookup per node)."""
        self._next = self.ends[0] if self.ends else None

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self._next:
            self.bounds.append(len(self.tokens))
            self._next = self.ends[len(self.bounds)] if len(self.bounds) < len(self.ends) else None
        if type(node) in self.types and node in self.wanted:
            self.begin[node] = len(self.tokens)

    def record_syntactic_position(  # type: ignore[override]  # any context manager does for libcst's `with`
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        if type(node) not in self.types or node not in self.wanted:
            return _NOTHING  # most nodes: no generator made per node
        return self._record(node, start_node)

    @contextlib.contextmanager
    def _record(self, node: cst.CSTNode, start_node: cst.CSTNode | None) -> Iterator[None]:
        if start_node is not None:
            self.wanted.add(start_node)
            self.types.add(type(start_node))
        at = len(self.tokens)
        yield
        self.at[node] = self.start(start_node) if start_node is not None else at

    def start(self, node: cst.CSTNode) -> int:
        """The token index where `node`'s syntactic position starts."""
        return self.at.get(node, self.begin[node])


class ModulePrint:
    """libcst's print of a module, with where its header, each top-level statement and its footer begin."""

    def __init__(
        self, module: cst.Module, code: str, spans: dict[cst.CSTNode, tuple[int, int]], header: int, footer: int
    ):
        self.module = module
        self.code = code
        self.spans = spans
        """Each top-level statement's (start, end) in `code`, when the print is made of them."""
        self.header = header
        """The end of the header in `code`."""
        self.footer = footer
        """The start of the footer in `code`."""

    def print_of(self, new: cst.Module) -> str:
        """Returns `new.code`, reusing the text of the statements `new` shares with the printed module.

        A statement's print depends only on its own nodes and the module's indent and newline (top-level
        statements are not indented), so a statement that is the same object prints the same text.
        """
        old = self.module
        if not (
            self.spans
            and new.has_trailing_newline
            and new.body
            and (new.default_indent, new.default_newline) == (old.default_indent, old.default_newline)
            and _same(new.header, old.header)
            and _same(new.footer, old.footer)
        ):
            return plain_code(new)  # the end of the print depends on more than its statements
        code = self.code
        parts = []
        run_start, run_end = 0, self.header  # a run of the print taken as it is, for consecutive statements
        for statement in new.body:
            span = self.spans.get(statement)
            if span is not None and span[0] == run_end:
                run_end = span[1]
                continue
            parts.append(code[run_start:run_end])
            if span is not None:
                run_start, run_end = span
                continue
            state = _Printer(default_indent=new.default_indent, default_newline=new.default_newline)
            codegen(statement, state)
            parts.append("".join(state.tokens))
            run_start = run_end = len(code)
        if run_end == self.footer:
            parts.append(code[run_start:])
        else:
            parts.append(code[run_start:run_end])
            parts.append(code[self.footer :])
        return "".join(parts)


def _same(new: Sequence[cst.CSTNode], old: Sequence[cst.CSTNode]) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


def starts(module: cst.Module, nodes: set[cst.CSTNode]) -> tuple[ModulePrint, dict[cst.CSTNode, tuple[int, int]]]:
    """Returns the module's print and, for each of `nodes`, its (line, column) as PositionProvider's start."""
    body = module.body
    state = _StartRecorder(module, set(nodes))
    codegen(module, state)
    tokens = state.tokens
    code = "".join(tokens)
    bounds = [*state.bounds, len(tokens)]
    places = sorted(((state.start(node), node) for node in nodes), key=lambda item: item[0])
    at = _char_offsets(tokens, sorted({*bounds, *(index for index, _ in places)}))
    spans: dict[cst.CSTNode, tuple[int, int]] = {}
    # Else the print ends other than with its last statement's text, or a node is printed twice.
    if (
        module.has_trailing_newline
        and body
        and len(bounds) == len(state.ends) + 1
        and all(a <= b for a, b in zip(bounds, bounds[1:]))
    ):
        for index, statement in enumerate(body):
            spans[statement] = (at[bounds[index]], at[bounds[index + 1]])
    out: dict[cst.CSTNode, tuple[int, int]] = {}
    if "\r" in code:  # libcst counts the newlines of each token on its own: so do we
        line, column, done = 1, 0, 0
        for index, node in places:
            for token in tokens[done:index]:
                segments = LINE_BREAK.split(token)
                if len(segments) == 1:
                    column += len(token)
                else:
                    line += len(segments) - 1
                    column = len(segments[-1])
            done = max(done, index)
            out[node] = (line, column)
    else:
        line, counted = 1, 0
        for index, node in places:
            offset = at[index]
            line += code.count("\n", counted, offset)
            counted = offset
            out[node] = (line, offset - (code.rfind("\n", 0, offset) + 1))
    if not spans:
        return ModulePrint(module, code, spans, 0, len(code)), out
    return ModulePrint(module, code, spans, at[bounds[0]], at[bounds[len(body)]]), out


def _char_offsets(tokens: list[str], indices: list[int]) -> dict[int, int]:
    """Where each of the (sorted) token `indices` begins in the joined tokens."""
    out = {}
    done = chars = 0
    for index in indices:
        chars += sum(map(len, tokens[done:index]))
        done = index
        out[index] = chars
    return out
