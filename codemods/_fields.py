"""The fields libcst visits for each node, in its order: what a read-only walk of ours follows."""

from __future__ import annotations

import dataclasses

import libcst as cst

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
    node._visit_and_replace_children(recorder)
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
        if isinstance(value, cst.CSTNode) or (isinstance(value, (tuple, list)) and value):
            return _recorded(node)
    return known[0]
