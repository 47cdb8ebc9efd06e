"""What the rules decide, as typed values: a site's edit, and the change one node of the tree gets.

A rule turns a site into a `SiteEdit` (or raises `_values.Unsafe` with the warning to give instead); planning
(`_node_plan`) turns site edits into `NodeEdit`s keyed by the node they change, in a frozen `Plan`, and the applier
(`_apply`) makes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Optional, TypeVar, Union

import libcst as cst

from lossscale_compat import _mapping

_K = TypeVar("_K")
_V = TypeVar("_V")

# ------------------------------------------------------------------ site edits: what to do with one TF 2.4 site


@dataclasses.dataclass(frozen=True)
class Keep:
    """Leave the site as it is (a warning, if any, was given when deciding)."""


KEEP = Keep()


@dataclasses.dataclass(frozen=True)
class NewName:
    """Spell the site as the dotted name `name` (None: the table has no name for this target, so it is unsafe)."""

    name: str | None
    note: str | None = None
    """The warning code that goes with the new name (our shim's, TF1's kept name), if any."""


@dataclasses.dataclass(frozen=True)
class Wrap:
    """`LossScaleOptimizer(opt, loss_scale)` or a graph rewrite -> `new_name(opt, <modern loss-scale kwargs>)`."""

    call: cst.Call
    opt: cst.Arg
    scale: _mapping.ModernScale[cst.BaseExpression]
    new_name: str | None
    row: _mapping.Rename
    folded: cst.CSTNode | None = None
    """The loss-scale class site the call's `loss_scale` argument builds, folded into the call (not renamed)."""
    iterations_note: bool = False
    """Whether the call gets LSC118: Keras 3's dynamic scale with an inner optimizer whose update reads `iterations`."""


@dataclasses.dataclass(frozen=True)
class ShimWrap:
    """A `Wrap` onto our shim, whose class keeps TF 2.4's custom-loop methods; `note` says why."""

    wrap: Wrap
    note: str


@dataclasses.dataclass(frozen=True)
class FixedFactor:
    """Keras 3, a fixed loss scale: the inline optimizer gets `loss_scale_factor`, the compiles `auto_scale_loss`."""

    call: cst.Call
    opt: cst.Arg
    scale: _mapping.ModernScale[cst.BaseExpression]
    row: _mapping.Rename
    compiles: tuple[cst.Call, ...]
    folded: cst.CSTNode | None = None
    """As `Wrap.folded`."""


@dataclasses.dataclass(frozen=True)
class NewPolicy:
    """`Policy(name, loss_scale=...)` -> `new_name(name)`; `note` warns when the loss scale did something."""

    call: cst.Call
    name_arg: cst.Arg
    new_name: str | None
    note: str | None = None


@dataclasses.dataclass(frozen=True)
class LayerPolicy:
    """`get_layer_policy(layer)` -> `layer.dtype_policy`."""

    layer: cst.Arg


@dataclasses.dataclass(frozen=True)
class DropCall:
    """Remove the statement that is only this call (`disable_mixed_precision_graph_rewrite()`)."""

    statement: cst.Expr


SiteEdit = Union[Keep, NewName, Wrap, ShimWrap, FixedFactor, NewPolicy, LayerPolicy, DropCall]


def new_name_of(edit: SiteEdit) -> str | None:
    """The dotted name an edit spells its site with, if it spells one (what an import of the site becomes)."""
    if isinstance(edit, NewName):
        return edit.name
    if isinstance(edit, Wrap):
        return edit.new_name
    if isinstance(edit, ShimWrap):
        return edit.wrap.new_name
    if isinstance(edit, NewPolicy):
        return edit.new_name
    return None


# ------------------------------------------------------------------ node edits: the change one node gets


@dataclasses.dataclass(frozen=True)
class NewAttr:
    """`x.old` -> `x.attr`."""

    attr: str


@dataclasses.dataclass(frozen=True)
class CurrentScale:
    """`opt.loss_scale` -> `opt.scale_loss(1.0)`: Keras 3's current scale, also before the first step builds it."""


@dataclasses.dataclass(frozen=True)
class FirstArgument:
    """`opt.get_unscaled_gradients(g)` -> `g`."""


@dataclasses.dataclass(frozen=True)
class DtypePolicyOf:
    """`get_layer_policy(layer)` -> `layer.dtype_policy`."""

    layer: cst.Arg


@dataclasses.dataclass(frozen=True)
class NewCall:
    """The call, to `func`, with `positional` (arguments of the original call) then `keywords` (new ones)."""

    func: cst.BaseExpression
    positional: tuple[cst.Arg, ...]
    keywords: tuple[cst.Arg, ...] = ()


@dataclasses.dataclass(frozen=True)
class AddKeyword:
    """The call with one more keyword argument at its end."""

    keyword: cst.Arg


@dataclasses.dataclass(frozen=True)
class FoldFactor:
    """`LossScaleOptimizer(Inner(...), ...)` -> `Inner(..., loss_scale_factor=...)`."""

    opt: cst.Arg
    keyword: cst.Arg


@dataclasses.dataclass(frozen=True)
class AssertionCall:
    """`assert a.get_config() == b.get_config()` (or `self.assertEqual(...)` of them) -> `call`, a statement."""

    call: cst.Call


NodeEdit = Union[
    cst.BaseExpression,
    NewAttr,
    CurrentScale,
    FirstArgument,
    DtypePolicyOf,
    NewCall,
    AddKeyword,
    FoldFactor,
    AssertionCall,
]


# ------------------------------------------------------------------ the plan: what the rules produce for one module


class MovedImport(NamedTuple):
    """A from-imported name that now comes from another module, under the same local name."""

    module: str
    name: str
    local: str


ImportAction = Optional[MovedImport]
"""What happens to one import alias: None drops it, a `MovedImport` moves it; an alias with no action is kept."""


Needed = tuple[str, Optional[str], Optional[str]]
"""An import to add: (module, name or None, alias or None)."""


def _no_entries() -> Mapping[Any, Any]:
    return MappingProxyType({})


def _read_only(mapping: Mapping[_K, _V]) -> Mapping[_K, _V]:
    return MappingProxyType(dict(mapping))


@dataclasses.dataclass(frozen=True, eq=False)
class Plan:
    """The rewrite planned for one module, or one rule's part of it: frozen, of read-only mappings, frozensets and
    tuples (a mutable value given is copied into one of those). The command merges the parts once (`merged`)."""

    replace: Mapping[cst.CSTNode, NodeEdit] = dataclasses.field(default_factory=_no_entries)
    """Each node that changes, and how."""
    drop_statements: frozenset[cst.CSTNode] = frozenset()
    """Whole lines (or an `if` of one) to remove."""
    drop_small: frozenset[cst.CSTNode] = frozenset()
    """Small statements to remove from their line."""
    as_pass: frozenset[cst.CSTNode] = frozenset()
    """Lines that become `pass`, so that their block is not left empty."""
    carry: Mapping[cst.CSTNode, tuple[cst.EmptyLine, ...]] = dataclasses.field(default_factory=_no_entries)
    """Comments of removed lines, carried to the next kept statement (or a block's footer)."""
    opens_block: frozenset[cst.CSTNode] = frozenset()
    """Statements that open their indented block once the lines before them are removed: their blank lines go."""
    import_actions: Mapping[cst.ImportAlias, ImportAction] = dataclasses.field(default_factory=_no_entries)
    """Per import alias: None to drop it, a `MovedImport` to move it; absent to keep it."""
    needed_imports: tuple[Needed, ...] = ()
    """Imports to add, in order."""
    warnings: tuple[tuple[cst.CSTNode, str], ...] = ()
    """The warnings to place, as (node, code)."""

    def __post_init__(self) -> None:
        for name in ("replace", "import_actions"):
            object.__setattr__(self, name, _read_only(getattr(self, name)))
        object.__setattr__(self, "carry", _read_only({node: tuple(lines) for node, lines in self.carry.items()}))
        for name in ("drop_statements", "drop_small", "as_pass", "opens_block"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
        object.__setattr__(self, "needed_imports", tuple(self.needed_imports))
        object.__setattr__(self, "warnings", tuple(self.warnings))


EMPTY_PLAN = Plan()


def warned(node: cst.CSTNode, code: str) -> Plan:
    """The plan of one warning and no edit (what a refused edit plans instead)."""
    return Plan(warnings=((node, code),))


def merged(parts: Iterable[Plan]) -> Plan:
    """One plan of `parts`, in order: a later part's edit of a node wins; removals, imports and warnings add up."""
    draft = Draft()
    for part in parts:
        draft.add(part)
    return draft.frozen()


@dataclasses.dataclass(eq=False)
class Draft:
    """A plan being written by one rule call, local to it: what the rule returns is `frozen()`."""

    replace: dict[cst.CSTNode, NodeEdit] = dataclasses.field(default_factory=dict)
    drop_statements: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    drop_small: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    as_pass: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    carry: dict[cst.CSTNode, tuple[cst.EmptyLine, ...]] = dataclasses.field(default_factory=dict)
    opens_block: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    import_actions: dict[cst.ImportAlias, ImportAction] = dataclasses.field(default_factory=dict)
    needed_imports: list[Needed] = dataclasses.field(default_factory=list)
    warnings: list[tuple[cst.CSTNode, str]] = dataclasses.field(default_factory=list)

    def warn(self, node: cst.CSTNode, code: str) -> None:
        self.warnings.append((node, code))

    def add(self, part: Plan) -> None:
        """Adds `part`'s edits, removals, imports and warnings (its edit of a node wins)."""
        self.replace.update(part.replace)
        self.drop_statements |= part.drop_statements
        self.drop_small |= part.drop_small
        self.as_pass |= part.as_pass
        self.carry.update(part.carry)
        self.opens_block |= part.opens_block
        self.import_actions.update(part.import_actions)
        self.needed_imports.extend(part.needed_imports)
        self.warnings.extend(part.warnings)

    def frozen(self) -> Plan:
        return Plan(**{field.name: getattr(self, field.name) for field in dataclasses.fields(self)})
