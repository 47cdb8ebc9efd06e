"""The fields libcst visits for each node, in its order: what a read-only walk of ours follows."""

from __future__ import annotations

import dataclasses

import libcst as cst

from ._libcst_internals import visit_children

_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


class _FieldRecorder(cst.CSTVisitor):
    """Records the fields of one node in the order libcst's visit goes through them."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False  # the node's children only, not theirs

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def _recorded(node: cst.CSTNode) -> tuple[str, ...]:
    recorder = _FieldRecorder(node)
    visit_children(node, recorder)
    return tuple(recorder.fields)


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields libcst visits for this node, in its order.

    Asked of libcst once per node class, and again for a node that holds a child in a field the
    first node of its class had no use for (an f-string expression with a format spec, say).
    """
    kind = type(node)
    known = _FIELDS.get(kind)
    if known is None:
        fields = _recorded(node)
        others = tuple(field.name for field in dataclasses.fields(kind) if field.name not in fields)
        known = _FIELDS[kind] = (fields, others)
    for name in known[1]:
        value = getattr(node, name)
        if _kind(value) == _NODE or (_kind(value) == _SEQUENCE and value):
            return _recorded(node)
    return known[0]


# Nodes that hold no name: whitespace, punctuation, operators, numbers. No rule looks inside them.
_NO_NAMES = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Comment,
    cst.Newline,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Asynchronous,
    cst.ImportStar,
    cst.Pass,
    cst.Break,
    cst.Continue,
)
_OTHER, _NODE, _SEQUENCE, _NAMELESS = 0, 1, 2, 3
_KINDS: dict[type, int] = {}
"""Per type: a node worth walking, a sequence, a nameless node or anything else (asked once per type, since
`isinstance` against libcst's abstract node class is slow)."""


def _kind(value: object) -> int:
    kind = type(value)
    known = _KINDS.get(kind)
    if known is None:
        if issubclass(kind, cst.CSTNode):
            known = _NAMELESS if issubclass(kind, _NO_NAMES) else _NODE
        else:
            known = _SEQUENCE if issubclass(kind, (tuple, list)) else _OTHER
        _KINDS[kind] = known
    return known


def holds_no_name(node: cst.CSTNode) -> bool:
    """Whether `node` is whitespace, punctuation, an operator or a number: nothing a rule looks at."""
    return _kind(node) == _NAMELESS


def named_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of `node` libcst visits, in its order, without those that hold no name."""
    out = []
    kinds = _KINDS
    for name in _fields(node):
        value = getattr(node, name)
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind(value)
        if kind == _NODE:
            out.append(value)
        elif kind == _SEQUENCE:
            for child in value:
                if kinds.get(type(child)) == _NODE or _kind(child) == _NODE:
                    out.append(child)
    return out
