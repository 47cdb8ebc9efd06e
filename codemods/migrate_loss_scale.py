"""The libcst command that rewrites TF 2.4 mixed-precision call sites to the modern Keras API.

It only orchestrates: collect the module's frozen facts (`_scan.collect_facts`), decide each site by its row's
rule (`_decide`, the rules in `codemods.rules`), run the declared `PASSES` in order over one plan (the rules that
move optimizers to our class, the imports, the site edits' node edits, the custom loops, ...), apply the plan
(`_apply.apply`) and place the warnings.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import NamedTuple

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.metadata import CodeRange, PositionProvider

from lossscale_compat import _mapping

from . import _apply, _decide, _import_plan, _positions, _tf1
from . import _warnings as w
from ._edits import Plan, SiteEdit
from ._facts import Facts
from ._libcst_internals import ResolveWithoutCopy
from ._scan import collect_facts
from ._values import Expr
from .rules import config_compare, custom_loop, keras3_notes, policy, private_modules, tf24_calls

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
        self.findings = [w.Finding(*places[node], code) for node, code in self.plan.warnings]
        self.findings.sort(key=lambda f: (f.line, f.col, f.code))
        for finding in self.findings:
            self.warn(f"{finding.line}:{finding.col}: {finding.code} {finding.message}")

    # ------------------------------------------------------------------ analysis
    def _planned(self) -> Plan:
        """Decides each site of the module's facts, then runs `PASSES` in order over the one plan."""
        facts = self.facts
        decided = _decide.decide_sites(facts, self.target, facts.sites)
        plan = Plan(warnings=[*facts.warnings, *decided.warnings], folded=set(decided.folded))
        run = Run(facts, self.target, plan, decided.edits)
        for step in PASSES:
            if run.keras3 or not step.keras3_only:
                step.run(run)
        return plan


@dataclasses.dataclass
class Run:
    """What the passes over one module share: its facts and target (read), the plan and the decisions (grown)."""

    facts: Facts
    target: str
    plan: Plan
    decisions: dict[Expr, SiteEdit]
    loops_kept: bool = False
    """Whether the file's optimizers were moved to our class for its custom loop or TF 2.4 calls (Keras 3)."""

    @property
    def keras3(self) -> bool:
        return self.target == "keras3"


class Pass(NamedTuple):
    """One step of planning a module: its name, the facts it reads, whether only Keras 3 runs it, and what it does."""

    name: str
    reads: tuple[str, ...]
    keras3_only: bool
    run: Callable[[Run], None]


def _loops_on_shim(run: Run) -> None:
    """Moves the optimizers decided to our class where the file's custom loop, or its applying of gradients it
    never scaled, needs TF 2.4's contract."""
    facts, decisions = run.facts, run.decisions
    moved, warnings = custom_loop.loops_on_shim(facts, decisions, facts.loops)
    if not moved:
        moved = custom_loop.applies_on_shim(facts, decisions, facts.loops)
    decisions.update(moved)
    run.plan.warnings.extend(warnings)
    run.loops_kept = bool(moved)


def _calls_on_shim(run: Run) -> None:
    """Moves the optimizers whose TF 2.4 calls the target's class would take differently to our class."""
    moved, call_warnings = tf24_calls.calls_on_shim(run.facts, run.decisions, run.facts.loops, run.target)
    run.decisions.update(moved)
    run.plan.warnings.extend(call_warnings)
    run.loops_kept = run.loops_kept or (run.keras3 and bool(moved))


def _escaping_on_shim(run: Run) -> None:
    run.decisions.update(custom_loop.escaping_on_shim(run.facts, run.decisions, run.facts.loops))


def _checkpointed_on_shim(run: Run) -> None:
    run.decisions.update(keras3_notes.checkpointed_on_shim(run.facts, run.decisions))


def _imports(run: Run) -> None:
    _import_plan.plan_imports(run.facts, run.plan, run.decisions)
    _import_plan.plan_nested_imports(run.facts, run.plan, run.decisions)
    _import_plan.plan_private_imports(run.facts, run.plan)


def _private_modules(run: Run) -> None:
    private_modules.plan_private_modules(run.facts, run.target, run.plan)
    private_modules.plan_device_checks(run.facts, run.plan)


def _site_edits(run: Run) -> None:
    _apply.plan_site_edits(run.facts, run.target, run.plan, run.decisions)


def _custom_loops(run: Run) -> None:
    """Plans the Keras 3 custom-loop rewrites and `loss_scale` reads, unless the file stays on our class."""
    facts, plan, sites, loops = run.facts, run.plan, run.facts.sites, run.facts.loops
    on_shim = run.loops_kept or ((loops or facts.other_scale_reads) and _tf1.builds_shim_optimizer(facts))
    if not on_shim:
        plan.add(custom_loop.plan_loops(facts, loops, plan.lso_calls))
    kept = [call for call in (*loops, *facts.applies) if _keeps_tf24_method(facts, call, plan)]
    final_class = keras3_notes.final_class_on_shim(facts, kept)
    _apply.plan_site_edits(facts, run.target, plan, final_class)
    if not on_shim and not final_class:
        plan.warnings.extend(keras3_notes.get_gradients_warnings(facts, loops, plan.lso_calls))
    if sites:
        for read in facts.optimizer_scale_reads:
            plan.add(custom_loop.plan_scale_read(facts, read))
    if (sites or loops) and not on_shim:  # TF 2.4's API is in use here
        for read in facts.other_scale_reads:
            plan.add(custom_loop.plan_other_scale_read(facts, read, plan.lso_calls, plan.shim_calls))
        plan.add(custom_loop.plan_wrap_scale_reads(facts, facts.policy_scale_reads, plan))
    plan.warnings.extend(keras3_notes.iterations_read_warnings(facts, run.decisions, plan.lso_calls))


def _aliases(run: Run) -> None:
    _import_plan.plan_local_aliases(run.facts, run.plan, run.decisions)
    _import_plan.plan_self_aliases(run.facts, run.plan, run.decisions)


def _removals(run: Run) -> None:
    _apply.plan_removals(run.plan, run.facts)


def _kept_imports(run: Run) -> None:
    _import_plan.warn_kept_imports(run.facts, run.plan, run.decisions)


def _global_scale_reads(run: Run) -> None:
    run.plan.warnings.extend(policy.global_scale_read_warnings(run.facts, run.decisions))


def _config_comparisons(run: Run) -> None:
    run.plan.add(config_compare.plan_comparisons(run.facts))


# The passes after `_decide`, in the order they run: each names the `Facts` fields it reads itself (its helpers use
# the facts' methods too), and reads the decisions and the plan so far. The first four only move decided
# optimizers to our class (asking `rules.optimizer_class`); the site edits become node edits once the decisions
# are final.
PASSES: tuple[Pass, ...] = (
    Pass("loops on our class", ("loops", "applies"), True, _loops_on_shim),
    Pass("TF 2.4 calls on our class", ("loops", "applies"), False, _calls_on_shim),
    Pass("escaping optimizers on our class", ("loops",), True, _escaping_on_shim),
    Pass("checkpointed optimizers on our class", (), True, _checkpointed_on_shim),
    Pass("imports", ("bindings", "global_scope", "scopes", "private_imports"), False, _imports),
    Pass("private modules", ("private_imports", "scanned", "scopes"), False, _private_modules),
    Pass("site edits", (), False, _site_edits),
    Pass(
        "custom loops",
        ("sites", "loops", "applies", "optimizer_scale_reads", "other_scale_reads", "policy_scale_reads", "scanned"),
        True,
        _custom_loops,
    ),
    Pass("local aliases", ("local_aliases", "self_aliases"), False, _aliases),
    Pass("removals", ("parents",), False, _removals),
    Pass("kept imports", ("bindings", "global_scope"), False, _kept_imports),
    Pass("global loss-scale reads", ("policy_scale_reads",), False, _global_scale_reads),
    Pass("config comparisons", ("config_reads",), False, _config_comparisons),
)


# TF 2.4 LossScaleOptimizer methods Keras 3's class does not have.
_TF24_ONLY_METHODS = frozenset(_mapping.LOOP_METHODS) | (frozenset(_mapping.APPLY_METHODS) - {"apply_gradients"})


def _keeps_tf24_method(facts: Facts, call: cst.Call, plan: Plan) -> bool:
    """Whether `call` is a TF 2.4 loop method (`get_scaled_loss`, `get_unscaled_gradients`, `get_gradients`) the plan
    leaves in place: neither it, its method name nor a statement around it is replaced or dropped."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _TF24_ONLY_METHODS) or func in plan.replace:
        return False
    node: cst.CSTNode | None = call
    while node is not None:
        if node in plan.replace or node in plan.drop_statements or node in plan.drop_small:
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
