"""Planning the node edits: each decided `SiteEdit` as the frozen plan of the nodes it changes, and the removals.

`plan_site_edits` plans every decided edit once (spelling new names through `_import_plan.spell`, which reads the
import planning's result): an edit that cannot be spelled here is planned as its warning and no edit, so the
applier refuses nothing. It also says which `LossScaleOptimizer` calls were rewritten, and which of them moved to
our class: decisions the custom-loop rules read. `plan_removals` finishes the merged plan: the small statements to
remove become whole-line removals, `pass` lines and carried comments.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

import libcst as cst

from lossscale_compat._mapping import SHIM_OPTIMIZERS

from . import _import_plan
from . import _warnings as w
from ._edits import (
    AddKeyword,
    DropCall,
    DtypePolicyOf,
    FixedFactor,
    FoldFactor,
    Keep,
    LayerPolicy,
    NewCall,
    NewName,
    NewPolicy,
    Plan,
    ShimWrap,
    SiteEdit,
    Wrap,
    merged,
    warned,
)
from ._facts import Facts
from ._import_plan import Imports
from ._values import Expr, Unsafe, kwarg

_KEPT = object()
"""The action of an import alias the plan has none for: it stays."""

# Trailing comments that speak only of their own line (a noqa or type pragma); they go with a removed line.
_PRAGMA_RE = re.compile(r"#\s*(noqa|type:|pylint:|pragma|isort:|fmt:|lossscale-compat:)", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, eq=False)
class SitePlan:
    """The node edits of the decided site edits, and what they settled that later passes read."""

    plan: Plan
    lso_calls: frozenset[cst.CSTNode]
    """The `LossScaleOptimizer` (and graph-rewrite) calls rewritten: a wrap refused when spelled is not one."""
    shim_calls: frozenset[cst.Call]
    """Those of them built with lossscale_compat's class, and the calls respelled as it (`LSC119`)."""


def plan_site_edits(facts: Facts, target: str, imports: Imports, decisions: Mapping[Expr, SiteEdit]) -> SitePlan:
    """Plans the node edits of each site's edit, once; one that cannot be spelled here is warned instead."""
    parts = []
    lso_calls: set[cst.CSTNode] = set()
    shim_calls: set[cst.Call] = set()
    for site, edit in decisions.items():
        part, spelled = _planned(facts, target, imports, site, edit)
        parts.append(part)
        if spelled and isinstance(edit, (Wrap, FixedFactor)):
            lso_calls.add(edit.call)
        if spelled and isinstance(edit, ShimWrap):
            lso_calls.add(edit.wrap.call)
            shim_calls.add(edit.wrap.call)
        call = facts.parent(site)
        respelled = spelled and isinstance(edit, NewName) and edit.name in SHIM_OPTIMIZERS
        if respelled and isinstance(call, cst.Call) and call.func is site:
            shim_calls.add(call)
    return SitePlan(merged(parts), frozenset(lso_calls), frozenset(shim_calls))


def plan_edit(facts: Facts, target: str, imports: Imports, site: Expr, edit: SiteEdit) -> Plan:
    """The plan of one site's edit: its node edits, or (refused when spelled) its warning and no edit."""
    return _planned(facts, target, imports, site, edit)[0]


def _planned(facts: Facts, target: str, imports: Imports, site: Expr, edit: SiteEdit) -> tuple[Plan, bool]:
    """(The plan of one site's edit, whether it was spelled); a refusal (`Unsafe`) is planned as its warning."""
    try:
        return BY_EDIT[type(edit)](facts, target, imports, site, edit), True
    except Unsafe as unsafe:
        return warned(site, unsafe.code), False


def _keep(facts: Facts, target: str, imports: Imports, site: Expr, edit: Keep) -> Plan:
    return Plan()


def _new_name(facts: Facts, target: str, imports: Imports, site: Expr, edit: NewName) -> Plan:
    if edit.name is None:
        raise Unsafe(w.UNSUPPORTED_USE)
    new, needed = _import_plan.spell(facts, target, imports, edit.name, site)
    notes = ((site, edit.note),) if edit.note is not None else ()
    return Plan(replace={site: new}, needed_imports=needed, warnings=notes)


def _shim_wrap(facts: Facts, target: str, imports: Imports, site: Expr, edit: ShimWrap) -> Plan:
    wrapped = _wrap(facts, target, imports, site, edit.wrap)
    return dataclasses.replace(wrapped, warnings=(*wrapped.warnings, (site, edit.note)))


def _layer_policy(facts: Facts, target: str, imports: Imports, site: Expr, edit: LayerPolicy) -> Plan:
    call = facts.parent(site)
    assert call is not None  # the rule saw it: the call of `get_layer_policy`
    return Plan(replace={call: DtypePolicyOf(edit.layer)})


def _drop_call(facts: Facts, target: str, imports: Imports, site: Expr, edit: DropCall) -> Plan:
    return Plan(drop_small=frozenset({edit.statement}), warnings=((site, w.DISABLE_REMOVED_NOTE),))


def _new_policy(facts: Facts, target: str, imports: Imports, site: Expr, edit: NewPolicy) -> Plan:
    assert edit.new_name is not None  # every Policy row names its modern class on both targets
    func, needed = _import_plan.spell(facts, target, imports, edit.new_name, site)
    notes = ((site, edit.note),) if edit.note is not None else ()
    return Plan(replace={edit.call: NewCall(func, (edit.name_arg,))}, needed_imports=needed, warnings=notes)


def _wrap(facts: Facts, target: str, imports: Imports, site: Expr, edit: Wrap) -> Plan:
    kwargs = _import_plan.modern_keywords(facts, edit.scale, site)
    assert edit.new_name is not None  # every LossScaleOptimizer and graph-rewrite row names one on both targets
    func, needed = _import_plan.spell(facts, target, imports, edit.new_name, site)  # after the keywords (may refuse)
    notes: list[tuple[cst.CSTNode, str]] = []
    if edit.row.rule == "graph_rewrite":
        notes.append((site, w.GRAPH_REWRITE_NOTE))
    if edit.iterations_note:
        notes.append((site, w.ITERATIONS_NOTE))
    return Plan(
        replace={edit.call: NewCall(func, (edit.opt,), tuple(kwargs))}, needed_imports=needed, warnings=tuple(notes)
    )


def _fixed_factor(facts: Facts, target: str, imports: Imports, site: Expr, edit: FixedFactor) -> Plan:
    factor = edit.scale.initial_scale
    assert factor is not None  # a fixed loss scale has a value (`optimizer.wrap` checked it is a power of two)
    replace: dict[cst.CSTNode, Any] = {edit.call: FoldFactor(edit.opt, kwarg("loss_scale_factor", factor))}
    for compile_call in edit.compiles:
        if not any(a.keyword is not None and a.keyword.value == "auto_scale_loss" for a in compile_call.args):
            replace[compile_call] = AddKeyword(kwarg("auto_scale_loss", cst.Name("False")))
    notes = ((site, w.GRAPH_REWRITE_NOTE),) if edit.row.rule == "graph_rewrite" else ()
    return Plan(replace=replace, warnings=notes)


# By the type of the edit decided, how to plan it.
BY_EDIT: dict[type, Callable[[Facts, str, Imports, Expr, Any], Plan]] = {
    Keep: _keep,
    NewName: _new_name,
    Wrap: _wrap,
    ShimWrap: _shim_wrap,
    FixedFactor: _fixed_factor,
    NewPolicy: _new_policy,
    LayerPolicy: _layer_policy,
    DropCall: _drop_call,
}


@dataclasses.dataclass
class _Removals:
    """The removal fields of a plan while `plan_removals` finishes them: local to it."""

    drop_statements: set[cst.CSTNode]
    drop_small: set[cst.CSTNode]
    as_pass: set[cst.CSTNode]
    carry: dict[cst.CSTNode, tuple[cst.EmptyLine, ...]]
    opens_block: set[cst.CSTNode]


def plan_removals(facts: Facts, plan: Plan) -> Plan:
    """`plan` with its statements to remove made whole-line removals, `pass` lines and carried comments.

    A line whose every small statement goes is removed, and its leading lines and trailing
    comment move to the next kept statement of its block (or the block's footer); a block
    that would be left empty keeps its first removed line as `pass`.
    """
    out = _Removals(set(plan.drop_statements), set(plan.drop_small), set(plan.as_pass), dict(plan.carry), set())
    out.opens_block.update(plan.opens_block)
    statements = {statement for _, statement, _ in facts.bindings.values()}
    statements.update(parent for alias in plan.import_actions if (parent := facts.parent(alias)) is not None)
    for statement in statements:
        line = facts.parent(statement)
        if (
            isinstance(statement, (cst.Import, cst.ImportFrom))
            and not isinstance(statement.names, cst.ImportStar)
            and all(plan.import_actions.get(alias, _KEPT) is None for alias in statement.names)
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
        ):
            out.drop_statements.add(line)  # leave_Import(From) removes it; keep its comments
    lines: dict[cst.SimpleStatementLine | cst.SimpleStatementSuite, list[cst.CSTNode]] = {}
    for small in plan.drop_small:
        small_line = facts.parent(small)
        assert isinstance(small_line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))  # a small statement's
        lines.setdefault(small_line, []).append(small)
    for line, smalls in lines.items():
        if len(smalls) == len(line.body):
            out.drop_small.difference_update(smalls)
            if isinstance(line, cst.SimpleStatementSuite):
                out.as_pass.add(line)
            else:
                out.drop_statements.add(line)
    for block in {facts.parent(line) for line in out.drop_statements}:
        assert isinstance(block, (cst.IndentedBlock, cst.Module))  # a statement line's
        _carry_comments(out, block)
    return dataclasses.replace(plan, **{field.name: getattr(out, field.name) for field in dataclasses.fields(out)})


def _carry_comments(out: _Removals, block: cst.IndentedBlock | cst.Module) -> None:
    """Moves the comments of `block`'s removed lines to its next kept statement (or its footer)."""
    body = list(block.body)
    if isinstance(block, cst.IndentedBlock) and all(st in out.drop_statements for st in body):
        out.drop_statements.discard(body[0])
        out.as_pass.add(body[0])
    carried: list[cst.EmptyLine] = []
    opening = isinstance(block, cst.IndentedBlock)  # no kept statement before this one in an indented block
    for statement in body:
        if statement not in out.drop_statements:
            if opening and statement is not body[0]:
                out.opens_block.add(statement)
            opening = False
            if carried:
                out.carry[statement] = tuple(carried)
                carried = []
            continue
        assert isinstance(statement, (cst.SimpleStatementLine, cst.If))  # whole lines, or an `if` of one
        carried = carried + list(statement.leading_lines)
        comment = None
        if isinstance(statement, cst.SimpleStatementLine):
            comment = statement.trailing_whitespace.comment
        if comment is not None and not _PRAGMA_RE.match(comment.value):
            carried.append(cst.EmptyLine(indent=True, comment=comment))
    if carried and isinstance(block, cst.IndentedBlock):
        carried = [line for line in carried if line.comment is not None]  # a blank line ends no block
    if carried:
        out.carry[block] = tuple(carried)
