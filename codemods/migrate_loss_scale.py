"""The libcst command that rewrites TF 2.4 mixed-precision call sites to the modern Keras API.

It only orchestrates: collect the module's frozen facts (`_scan.collect_facts`), decide each site by its row's
rule (`_decide`, the rules in `codemods.rules`), run the declared `PASSES` in order, each on the results of the
earlier passes it names (the rules that move optimizers to our class, the imports, the site edits' node edits, the
custom loops, ...), merge their frozen plans once, apply the plan (`_apply.apply`) and place the warnings.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.metadata import CodeRange, PositionProvider

from lossscale_compat import _mapping

from . import _apply, _blockers, _decide, _import_plan, _node_plan, _positions, _tf1
from . import _warnings as w
from ._edits import EMPTY_PLAN, Plan, SiteEdit, merged
from ._facts import Facts
from ._libcst_internals import ResolveWithoutCopy
from ._scan import collect_facts
from ._values import Expr
from .rules import config_compare, custom_loop, keras3_notes, legacy_optimizers, policy, private_modules, tf24_calls

TARGETS = _mapping.TARGETS


class MigrateLossScaleCommand(ResolveWithoutCopy, CodemodCommand):
    """Rewrites TF 2.4 mixed-precision names and calls to the modern Keras API.

    It rewrites: every name in `lossscale_compat._mapping.RENAMES` matched by qualified name;
    `LossScaleOptimizer(opt, loss_scale)` and `enable_mixed_precision_graph_rewrite(opt, ...)`
    with the loss scale folded in; `Policy(name, loss_scale=...)`; `get_layer_policy(layer)`;
    and, on Keras 3, `get_scaled_loss` and an `apply_gradients`-only `get_unscaled_gradients`.
    Non-goals: it never guesses a value it cannot read, never follows names across modules,
    does not touch subclasses of the experimental classes or `from_config` calls, and leaves
    anything rebound or shadowed alone; each of those gets a warning instead.
    """

    DESCRIPTION = "Rewrites TF 2.4 mixed-precision (loss scaling) code to the modern Keras API."
    # None resolved up front: scopes come from `_scopes` (our own analysis), qualified names from the scopes on demand,
    # parents from our own first pass, and positions from the print of the module that the engine needs
    # anyway (see `_position`).
    METADATA_DEPENDENCIES = ()

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        """Adds `--target` to libcst.tool's parser."""
        arg_parser.add_argument("--target", choices=TARGETS, default="keras3", help="modern API to migrate to")

    def __init__(self, context: CodemodContext, target: str = "keras3", source: bytes | None = None) -> None:
        super().__init__(context)
        if target not in TARGETS:
            raise ValueError(f"`target` must be one of {TARGETS}, got {target!r}")
        self.target = target
        self.source = source
        """The bytes the module was parsed from, when the caller has them (saves a print per file)."""
        self.findings: list[w.Finding] = []
        self.plan = Plan()
        self.printed: bytes | None = None
        """libcst's print of the module last transformed, made while placing the findings."""
        self.input_print: _positions.ModulePrint | None = None
        """The same print, by top-level statement, when the findings were placed from it."""

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        """Analyses `tree`, rewrites only the paths to the nodes that change, adds imports, places findings."""
        self.findings = []
        self.facts = collect_facts(tree, self.source, functools.partial(_resolve_positions, self.context))
        self.plan = self._planned()
        new = _apply.apply(tree, self.plan, self.facts.parents, self.context.full_package_name)
        self._place_findings(tree)
        self.facts.global_scope.tracker.release()
        return new

    def _place_findings(self, module: cst.Module) -> None:
        """Turns the warned nodes into sorted findings with positions; prints the module on the way."""
        resolved = self.facts.positions.resolved
        if resolved is not None:
            self.input_print = None
            self.printed = _positions.plain_code(module).encode(module.encoding)
            starts = {node: resolved[node].start for node, _ in self.plan.warnings}
            places = {node: (start.line, start.column) for node, start in starts.items()}
        else:
            self.input_print, places = _positions.starts(module, {node for node, _ in self.plan.warnings})
            self.printed = self.input_print.code.encode(module.encoding)
        self.findings = [
            w.Finding(*places[node], code, detail=_blockers.detail(self.facts, node, code))
            for node, code in self.plan.warnings
        ]
        self.findings.sort(key=lambda f: (f.line, f.col, f.code))
        for finding in self.findings:
            self.warn(f"{finding.line}:{finding.col}: {finding.code} {finding.message}")

    # ------------------------------------------------------------------ analysis
    def _planned(self) -> Plan:
        """Decides each site of the module's facts, runs `PASSES` in order, each on the results it names, and
        merges their plans once (then the removals finish it)."""
        facts = self.facts
        run = Run(facts, self.target, _decide.decide_sites(facts, self.target, facts.sites))
        results: dict[str, object] = {}
        for step in PASSES:
            done = MappingProxyType({name: results[name] for name in step.uses})
            results[step.name] = step.run(run, done) if run.keras3 or not step.keras3_only else step.otherwise
        first = Plan(warnings=(*facts.warnings, *run.decided.warnings))
        parts = [first, *(part for result in results.values() if (part := _plan_of(result)) is not None)]
        return _node_plan.plan_removals(facts, merged(parts))


@dataclasses.dataclass(frozen=True)
class Run:
    """What every pass over one module reads: its facts, its target, and the sites' decisions (`_decide`)."""

    facts: Facts
    target: str
    decided: _decide.Decisions

    @property
    def keras3(self) -> bool:
        return self.target == "keras3"


@dataclasses.dataclass(frozen=True)
class Moved:
    """What a pass that moves decided optimizers to our class returns: the new edits, and the warnings given."""

    edits: Mapping[Expr, SiteEdit] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[tuple[cst.CSTNode, str], ...] = ()
    loops_kept: bool = False
    """Whether they were moved for the file's custom loop or TF 2.4 calls (Keras 3): the loops stay as they are."""


NOT_MOVED = Moved()


class Pass(NamedTuple):
    """One step of planning a module: its name, the facts it reads, the earlier passes whose results it takes (by
    name: it is given those only), whether only Keras 3 runs it, what it does, and its result when not run."""

    name: str
    reads: tuple[str, ...]
    uses: tuple[str, ...]
    keras3_only: bool
    run: Callable[[Run, Mapping[str, Any]], object]
    otherwise: object = None


def _plan_of(result: object) -> Plan | None:
    """A pass's part of the module's plan."""
    if isinstance(result, Plan):
        return result
    if isinstance(result, (_import_plan.Imports, _node_plan.SitePlan)):
        return result.plan
    if isinstance(result, Moved):
        return Plan(warnings=result.warnings)
    return None  # the decisions


def decisions_after(decided: Mapping[Expr, SiteEdit], moves: Sequence[Moved]) -> Mapping[Expr, SiteEdit]:
    """The decided edits with `moves` made in order, as one read-only mapping (a later move wins)."""
    edits = dict(decided)
    for moved in moves:
        edits.update(moved.edits)
    return MappingProxyType(edits)


def _so_far(run: Run, done: Mapping[str, Any]) -> Mapping[Expr, SiteEdit]:
    """The decisions after the moves of the passes in `done` (the movers before the caller)."""
    return decisions_after(run.decided.edits, [result for result in done.values() if isinstance(result, Moved)])


def _loops_on_shim(run: Run, done: Mapping[str, Any]) -> Moved:
    """Moves the optimizers decided to our class where the file's custom loop, or its applying of gradients it
    never scaled, needs TF 2.4's contract."""
    facts, decisions = run.facts, _so_far(run, done)
    moved, warnings = custom_loop.loops_on_shim(facts, decisions, facts.loops)
    if not moved:
        moved = custom_loop.applies_on_shim(facts, decisions, facts.loops)
    return Moved(MappingProxyType(moved), tuple(warnings), bool(moved))


def _calls_on_shim(run: Run, done: Mapping[str, Any]) -> Moved:
    """Moves the optimizers whose TF 2.4 calls the target's class would take differently to our class."""
    moved, warnings = tf24_calls.calls_on_shim(run.facts, _so_far(run, done), run.facts.loops, run.target)
    return Moved(MappingProxyType(moved), tuple(warnings), run.keras3 and bool(moved))


def _escaping_on_shim(run: Run, done: Mapping[str, Any]) -> Moved:
    return Moved(MappingProxyType(custom_loop.escaping_on_shim(run.facts, _so_far(run, done), run.facts.loops)))


def _checkpointed_on_shim(run: Run, done: Mapping[str, Any]) -> Moved:
    return Moved(MappingProxyType(keras3_notes.checkpointed_on_shim(run.facts, _so_far(run, done))))


def _iterations_set_on_shim(run: Run, done: Mapping[str, Any]) -> Moved:
    return Moved(MappingProxyType(keras3_notes.iterations_set_on_shim(run.facts, _so_far(run, done))))


def _decisions(run: Run, done: Mapping[str, Any]) -> Mapping[Expr, SiteEdit]:
    """The final decisions: the decided edits with every move made, built once."""
    return _so_far(run, done)


def _imports(run: Run, done: Mapping[str, Any]) -> _import_plan.Imports:
    return _import_plan.plan_imports(run.facts, done["decisions"], run.decided.folded)


def _private_modules(run: Run, done: Mapping[str, Any]) -> Plan:
    modules = private_modules.plan_private_modules(run.facts, run.target, done["imports"])
    return merged((modules, private_modules.plan_device_checks(run.facts)))


def _site_edits(run: Run, done: Mapping[str, Any]) -> _node_plan.SitePlan:
    return _node_plan.plan_site_edits(run.facts, run.target, done["imports"], done["decisions"])


def _custom_loops(run: Run, done: Mapping[str, Any]) -> Plan:
    """Plans the Keras 3 custom-loop rewrites and `loss_scale` reads, unless the file stays on our class, and the
    uses of TF 2.4's final class as ours where a TF 2.4 loop method stays."""
    facts, sites, loops = run.facts, done["site edits"], run.facts.loops
    loops_kept = done["loops on our class"].loops_kept or done["TF 2.4 calls on our class"].loops_kept
    on_shim = loops_kept or ((loops or facts.other_scale_reads) and _tf1.builds_shim_optimizer(facts))
    parts = [] if on_shim else [custom_loop.plan_loops(facts, loops, sites.lso_calls)]
    before = (done["imports"].plan, done["private modules"], sites.plan, *parts)
    kept = [call for call in (*loops, *facts.applies) if _keeps_tf24_method(facts, call, before)]
    final_class = keras3_notes.final_class_on_shim(facts, kept)
    parts.extend(_node_plan.plan_edit(facts, run.target, done["imports"], *item) for item in final_class.items())
    warnings: list[tuple[cst.CSTNode, str]] = []
    if not on_shim and not final_class:
        warnings.extend(keras3_notes.get_gradients_warnings(facts, loops, sites.lso_calls))
    if facts.sites:
        parts.extend(custom_loop.plan_scale_read(facts, read) for read in facts.optimizer_scale_reads)
    if (facts.sites or loops) and not on_shim:  # TF 2.4's API is in use here
        reads = facts.other_scale_reads
        parts.extend(custom_loop.plan_other_scale_read(facts, r, sites.lso_calls, sites.shim_calls) for r in reads)
        parts.append(
            custom_loop.plan_wrap_scale_reads(
                facts, facts.policy_scale_reads, sites.lso_calls, sites.shim_calls, sites.plan.replace
            )
        )
    warnings.extend(keras3_notes.iterations_read_warnings(facts, done["decisions"], sites.lso_calls))
    return merged([*parts, Plan(warnings=tuple(warnings))])


def _aliases(run: Run, done: Mapping[str, Any]) -> Plan:
    decisions, folded = done["decisions"], run.decided.folded
    return merged(
        (
            _import_plan.plan_local_aliases(run.facts, decisions, folded),
            _import_plan.plan_self_aliases(run.facts, decisions, folded),
        )
    )


def _kept_imports(run: Run, done: Mapping[str, Any]) -> Plan:
    return _import_plan.warn_kept_imports(run.facts, done["decisions"], run.decided.folded)


def _global_scale_reads(run: Run, done: Mapping[str, Any]) -> Plan:
    return Plan(warnings=tuple(policy.global_scale_read_warnings(run.facts, done["decisions"])))


def _legacy_optimizers(run: Run, done: Mapping[str, Any]) -> Plan:
    return legacy_optimizers.plan_legacy_optimizers(run.facts, run.target, done["decisions"])


def _config_comparisons(run: Run, done: Mapping[str, Any]) -> Plan:
    return config_compare.plan_comparisons(run.facts)


MOVERS = (
    "loops on our class",
    "TF 2.4 calls on our class",
    "escaping optimizers on our class",
    "checkpointed optimizers on our class",
    "optimizers given iterations on our class",
)
# The passes after `_decide`, in the order they run. Each names the `Facts` fields it reads itself (its helpers use
# the facts' methods too) and the earlier passes whose results it takes; it returns its own frozen result, and the
# command merges their plans once. The first five only move decided optimizers to our class (asking
# `rules.optimizer_class`), each given the moves before it; "decisions" builds the final decisions once; the site
# edits become node edits (once) after the imports are planned, whose result spelling a new name reads.
PASSES: tuple[Pass, ...] = (
    Pass(MOVERS[0], ("loops", "applies"), (), True, _loops_on_shim, NOT_MOVED),
    Pass(MOVERS[1], ("loops", "applies"), MOVERS[:1], False, _calls_on_shim, NOT_MOVED),
    Pass(MOVERS[2], ("loops",), MOVERS[:2], True, _escaping_on_shim, NOT_MOVED),
    Pass(MOVERS[3], (), MOVERS[:3], True, _checkpointed_on_shim, NOT_MOVED),
    Pass(MOVERS[4], ("scanned",), MOVERS[:4], True, _iterations_set_on_shim, NOT_MOVED),
    Pass("decisions", (), MOVERS, False, _decisions),
    Pass("imports", ("bindings", "global_scope", "scopes", "private_imports"), ("decisions",), False, _imports),
    Pass("private modules", ("private_imports", "scanned", "scopes"), ("imports",), False, _private_modules),
    Pass("site edits", (), ("decisions", "imports"), False, _site_edits),
    Pass(
        "custom loops",
        ("sites", "loops", "applies", "optimizer_scale_reads", "other_scale_reads", "policy_scale_reads", "scanned"),
        (*MOVERS[:2], "decisions", "imports", "private modules", "site edits"),
        True,
        _custom_loops,
        EMPTY_PLAN,
    ),
    Pass("local aliases", ("local_aliases", "self_aliases"), ("decisions",), False, _aliases),
    Pass("kept imports", ("bindings", "global_scope"), ("decisions",), False, _kept_imports),
    Pass("global loss-scale reads", ("policy_scale_reads",), ("decisions",), False, _global_scale_reads),
    Pass("config comparisons", ("config_reads",), (), False, _config_comparisons),
    Pass("legacy optimizers", ("applies", "parents"), ("decisions",), False, _legacy_optimizers),
)


# TF 2.4 LossScaleOptimizer methods Keras 3's class does not have.
_TF24_ONLY_METHODS = frozenset(_mapping.LOOP_METHODS) | (frozenset(_mapping.APPLY_METHODS) - {"apply_gradients"})


def _keeps_tf24_method(facts: Facts, call: cst.Call, plans: Sequence[Plan]) -> bool:
    """Whether `call` is a TF 2.4 loop method (`get_scaled_loss`, `get_unscaled_gradients`, `get_gradients`) the
    `plans` leave in place: neither it, its method name nor a statement around it is replaced or dropped."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _TF24_ONLY_METHODS):
        return False
    if any(func in plan.replace for plan in plans):
        return False
    node: cst.CSTNode | None = call
    while node is not None:
        if any(node in plan.replace or node in plan.drop_statements or node in plan.drop_small for plan in plans):
            return False
        node = facts.parent(node)
    return True


def _resolve_positions(context: CodemodContext) -> Mapping[cst.CSTNode, CodeRange]:
    """The module's positions (a function of the context, not a method: the facts must not hold the command)."""
    return context.wrapper.resolve(PositionProvider)  # type: ignore[union-attr]  # set by _handle_metadata_reference


def prints(command: MigrateLossScaleCommand, module: cst.Module, new_module: cst.Module) -> tuple[bytes, bytes]:
    """(libcst's print of the module `command` transformed, the print of its result), as bytes."""
    printed = command.printed if command.printed is not None else _positions.plain_code(module).encode(module.encoding)
    if command.input_print is not None and command.input_print.module is module:
        new = command.input_print.print_of(new_module)
    else:
        new = _positions.plain_code(new_module)
    return printed, new.encode(new_module.encoding)
