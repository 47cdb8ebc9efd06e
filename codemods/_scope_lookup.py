"""Looking a dotted name up under every binding of its first part, in time that does not grow with the bindings.

A name bound again and again (`import tensorflow as tf` in each notebook cell) has as many bindings as cells; for
each collection of bindings (a dict in a scope's `_bindings`, keyed by its id and size) the nodes that make them are
indexed once, and the qualified names of each dotted name under all of them are worked out once.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import libcst as cst


def qualified_under(cache: dict[tuple[Any, ...], Any], bindings: Collection[Any], node: cst.CSTNode, full: str) -> set:
    """The qualified names `full` may stand for under `bindings`; only the binding's own when `node` makes one."""
    key = (id(bindings), len(bindings))
    if key not in cache:
        cache[key] = _binding_nodes(bindings)
    made_by = cache[key].get(id(node))
    if made_by is not None:
        return made_by.qualified_names(full)
    names_key = (*key, full)
    if names_key not in cache:
        cache[names_key] = {name for binding in bindings for name in binding.qualified_names(full)}
    return set(cache[names_key])


def _binding_nodes(bindings: Collection[Any]) -> dict[int, Any]:
    """id of a node -> the first of `bindings` (_scopes' Bindings) it makes: its own node, or an imported name."""
    nodes: dict[int, Any] = {}
    for binding in bindings:
        bound_by = binding.node
        if bound_by is None:  # a builtin
            continue
        made = [bound_by]
        if isinstance(bound_by, (cst.Import, cst.ImportFrom)) and not isinstance(bound_by.names, cst.ImportStar):
            for alias in bound_by.names:
                made.append(alias.name)
                if alias.asname is not None:
                    made.append(alias.asname.name)
        for made_node in made:
            nodes.setdefault(id(made_node), binding)
    return nodes
