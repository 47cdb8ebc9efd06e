"""Looking names up under many bindings of one name, in time that does not grow with the bindings.

A name bound again and again (`import tensorflow as tf` in each notebook cell) has as many bindings as cells. A use
(`Access`) holds where its prefix of one scope's bindings ends (`Seen`), a binding's uses are slices of its name's
uses grouped by scope (`Group`), and for each collection of bindings (a dict in a scope's `_bindings`, keyed by its id
and size) the nodes that make them are indexed once, and the qualified names of each dotted name under all of them
are worked out once.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection
from typing import Any

import libcst as cst
from libcst.metadata import QualifiedName

Binding = Any  # a `_scopes.Binding` (which imports this module)
Scope = Any  # a `_scopes.Scope`


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


class Access:
    """One use of a name: the node (a Name, the dotted Attribute an import binds, or a string annotation)."""

    __slots__ = ("_end", "_index", "_seen", "node", "scope")

    def __init__(self, node: cst.CSTNode, scope: Scope, index: int, seen: Seen, end: int) -> None:
        self.node = node
        self.scope = scope
        self._index = index
        self._seen = seen
        self._end = end

    @property
    def referents(self) -> list[Binding]:
        """The bindings this use may see, in order: the first `_end` of one scope's bindings of its name."""
        return self._seen.bindings[: self._end]

    def qualified_names(self) -> frozenset[QualifiedName]:
        """What this use may stand for: the qualified names of its referents, worked out once per prefix."""
        return self._seen.qualified_names(self._end)


class Seen:
    """One scope's bindings of one name, in order, as the uses that see some of them look them up.

    A use sees a prefix of them (those before it in its own scope, or all), so a use stores only where its prefix
    ends, and the qualified names of each prefix are built up once: a name bound in each of n notebook cells costs
    n steps, not n * n.
    """

    __slots__ = ("_unions", "bindings", "indices")

    def __init__(self, bound: Collection[Binding]) -> None:
        self.bindings = list(bound)
        self.indices = [binding._index for binding in self.bindings]  # never decreasing: see `Scope.bind`
        self._unions: list[frozenset[QualifiedName]] = [frozenset()]

    def qualified_names(self, end: int) -> frozenset[QualifiedName]:
        unions = self._unions
        while len(unions) <= end:
            last, own = unions[-1], self.bindings[len(unions) - 1].own_qualified_names()
            unions.append(last if own <= last else last | own)
        return unions[end]


class Group:
    """The uses of one name in one scope, in the order of the walk (so by index), and what they resolve to."""

    __slots__ = ("_last", "_shadowed", "accesses", "indices", "name", "scope", "seen")

    def __init__(self, scope: Scope, name: str, seen: Collection[Binding]) -> None:
        self.scope = scope
        self.name = name
        self.seen = seen
        """The bindings `name` may stand for in `scope`: all of one scope's."""
        self.accesses: list[Access] = []
        self.indices: list[int] = []
        self._shadowed: Collection[Binding] | None = None
        self._last = max((bound._index for bound in seen), default=-1)

    def shadowed(self) -> Collection[Binding]:
        """The bindings a use made before every binding of its own scope falls back to (`Binding.references`)."""
        if self._shadowed is None:
            owner = next(iter(self.seen)).scope if self.seen else None
            self._shadowed = ()
            if owner is self.scope and owner.parent is not owner:
                self._shadowed = owner.parent[self.name]
        return self._shadowed

    def uses_of(self, binding: Binding) -> list[Access]:
        """The uses of this group that may see `binding`, as libcst records them (see `Binding.references`)."""
        if binding in self.seen:
            if binding.scope is not self.scope:
                return self.accesses
            return self.accesses[bisect_right(self.indices, binding._index) :]
        if binding in self.shadowed():  # the uses made before the last binding of their own scope
            return self.accesses[: bisect_right(self.indices, self._last)]
        return []
