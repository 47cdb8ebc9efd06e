"""Start positions of a few nodes, found while printing the module (libcst's PositionProvider places every node).

The same print keeps the text of each top-level statement, so that a transformed copy of the module, which
reuses the statements it does not change, is printed from it: only the changed statements are printed again.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")


class _StartRecorder(CodegenState):
    """Notes the token index where each wanted node starts, by libcst's rules for syntactic positions."""

    def __init__(self, module: cst.Module, wanted: set[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.begin: dict[cst.CSTNode, int] = {}
        """Where each wanted node's print begins."""
        self.at: dict[cst.CSTNode, int] = {}
        """Where each wanted node's syntactic position starts, for the nodes whose print says so."""

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self.begin[node] = len(self.tokens)

    @contextlib.contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        if node not in self.wanted:
            yield
            return
        if start_node is not None:
            self.wanted.add(start_node)
        at = len(self.tokens)
        yield
        self.at[node] = self.start(start_node) if start_node is not None else at

    def start(self, node: cst.CSTNode) -> int:
        """The token index where `node`'s syntactic position starts."""
        return self.at.get(node, self.begin[node])


class ModulePrint:
    """libcst's print of a module, kept as the text of its header, each top-level statement and its footer."""

    def __init__(self, module: cst.Module, code: str, header: str, statements: dict[cst.CSTNode, str], footer: str):
        self.module = module
        self.code = code
        self.header = header
        self.statements = statements
        self.footer = footer

    def print_of(self, new: cst.Module) -> str:
        """Returns `new.code`, reusing the text of the statements `new` shares with the printed module.

        A statement's print depends only on its own nodes and the module's indent and newline (top-level
        statements are not indented), so a statement that is the same object prints the same text.
        """
        old = self.module
        if not (
            old.has_trailing_newline
            and new.has_trailing_newline
            and new.body
            and (new.default_indent, new.default_newline) == (old.default_indent, old.default_newline)
            and _same(new.header, old.header)
            and _same(new.footer, old.footer)
        ):
            return new.code  # the end of the print depends on more than its statements
        if _same(new.body, old.body):
            return self.code
        parts = [self.header]
        for statement in new.body:
            text = self.statements.get(statement)
            if text is None:
                state = CodegenState(default_indent=new.default_indent, default_newline=new.default_newline)
                statement._codegen(state)
                text = "".join(state.tokens)
            parts.append(text)
        parts.append(self.footer)
        return "".join(parts)


def _same(new: Sequence[cst.CSTNode], old: Sequence[cst.CSTNode]) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


def starts(module: cst.Module, nodes: set[cst.CSTNode]) -> tuple[ModulePrint, dict[cst.CSTNode, tuple[int, int]]]:
    """Returns the module's print and, for each of `nodes`, its (line, column) as PositionProvider's start."""
    body = module.body
    ends = (*body, *module.footer)
    state = _StartRecorder(module, {*nodes, *ends})
    module._codegen(state)
    tokens = state.tokens
    code = "".join(tokens)
    statements: dict[cst.CSTNode, str] = {}
    header = footer = ""
    bounds = [state.begin[node] for node in ends]
    bounds.append(len(tokens))
    # Else the print ends other than with its last statement's text, or a node is printed twice.
    if module.has_trailing_newline and body and all(a <= b for a, b in zip(bounds, bounds[1:])):
        header = "".join(tokens[: bounds[0]])
        for index, statement in enumerate(body):
            statements[statement] = "".join(tokens[bounds[index] : bounds[index + 1]])
        footer = "".join(tokens[bounds[len(body)] :])
    out: dict[cst.CSTNode, tuple[int, int]] = {}
    line, column, done = 1, 0, 0
    for node, index in sorted(((node, state.start(node)) for node in nodes), key=lambda item: item[1]):
        for token in tokens[done:index]:
            segments = _NEWLINE.split(token)
            if len(segments) == 1:
                column += len(token)
            else:
                line += len(segments) - 1
                column = len(segments[-1])
        done = max(done, index)
        out[node] = (line, column)
    return ModulePrint(module, code, header, statements, footer), out
