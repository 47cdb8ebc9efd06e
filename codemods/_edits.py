"""What the rules decide, as typed values: a site's edit, and the change one node of the tree gets.

A rule turns a site into a `SiteEdit` (or raises `_values.Unsafe` with the warning to give instead); the applier
(`_apply`) turns site edits into `NodeEdit`s keyed by the node they change, and then makes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple, Optional, Union

import libcst as cst

from lossscale_compat import _mapping

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
    compiles: Sequence[cst.Call]
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
    positional: Sequence[cst.Arg]
    keywords: Sequence[cst.Arg] = ()


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
    cst.BaseExpression, NewAttr, FirstArgument, DtypePolicyOf, NewCall, AddKeyword, FoldFactor, AssertionCall
]


# ------------------------------------------------------------------ the plan: what the rules produce for one module


class MovedImport(NamedTuple):
    """A from-imported name that now comes from another module, under the same local name."""

    module: str
    name: str
    local: str


ImportAction = Optional[MovedImport]
"""What happens to one import alias: None drops it, a `MovedImport` moves it; an alias with no action is kept."""


@dataclasses.dataclass(eq=False)
class Plan:
    """The rewrite the rules plan for one module, which the command applies; the facts stay as they were read."""

    replace: dict[cst.CSTNode, NodeEdit] = dataclasses.field(default_factory=dict)
    """Each node that changes, and how."""
    drop_statements: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """Whole lines (or an `if` of one) to remove."""
    drop_small: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """Small statements to remove from their line."""
    as_pass: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """Lines that become `pass`, so that their block is not left empty."""
    carry: dict[cst.CSTNode, list[cst.EmptyLine]] = dataclasses.field(default_factory=dict)
    """Comments of removed lines, carried to the next kept statement (or a block's footer)."""
    opens_block: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """Statements that open their indented block once the lines before them are removed: their blank lines go."""
    import_actions: dict[cst.ImportAlias, ImportAction] = dataclasses.field(default_factory=dict)
    """Per import alias: None to drop it, a `MovedImport` to move it; absent to keep it."""
    needed_imports: list[tuple[str, str | None, str | None]] = dataclasses.field(default_factory=list)
    """Imports to add: (module, name or None, alias or None)."""
    warnings: list[tuple[cst.CSTNode, str]] = dataclasses.field(default_factory=list)
    """The warnings to place, as (node, code)."""
    # What planning the site edits settled, which the import planning and the custom-loop rules read.
    folded: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """Loss-scale sites folded into the call that takes them (`_decide.Decisions.folded`)."""
    lso_calls: set[cst.CSTNode] = dataclasses.field(default_factory=set)
    """The `LossScaleOptimizer` calls rewritten."""
    blocked_bindings: set[str] = dataclasses.field(default_factory=set)
    """Module-level import bindings that must not be respelled in place."""
    shim_calls: set[cst.Call] = dataclasses.field(default_factory=set)
    """Calls moved to lossscale_compat's LossScaleOptimizer."""

    def warn(self, node: cst.CSTNode, code: str) -> None:
        self.warnings.append((node, code))

    def add(self, part: Plan) -> None:
        """Adds the node edits, removals, imports and warnings of `part` (a rule's own plan) to this plan."""
        self.replace.update(part.replace)
        self.drop_statements |= part.drop_statements
        self.drop_small |= part.drop_small
        self.as_pass |= part.as_pass
        self.carry.update(part.carry)
        self.import_actions.update(part.import_actions)
        self.needed_imports.extend(part.needed_imports)
        self.warnings.extend(part.warnings)
