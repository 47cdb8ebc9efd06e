"""The libcst command that rewrites TF 2.4 mixed-precision call sites to the modern Keras API.

It only orchestrates: collect the module's frozen facts (`_scan.collect_facts`), decide each site by its row's
rule (`_decide`, the rules in `codemods.rules`), let the custom-loop rules move optimizers to our class, plan the
imports (`_import_plan`) and the site edits' node edits (`_apply.plan_site_edits`), add the plans the other rules
return, apply the plan (`_apply.apply`) and place the warnings.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping

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
        """Decides each site of the module's facts and plans the edits, imports and warnings."""
        facts, keras3 = self.facts, self.target == "keras3"
        decided = _decide.decide_sites(facts, self.target, facts.sites)
        self.plan = Plan(warnings=[*facts.warnings, *decided.warnings], folded=set(decided.folded))
        decisions = decided.edits
        loops_kept = keras3 and self._loops_on_shim(decisions)
        moved, call_warnings = tf24_calls.calls_on_shim(facts, decisions, facts.loops, self.target)
        decisions.update(moved)
        self.plan.warnings.extend(call_warnings)
        loops_kept = loops_kept or (keras3 and bool(moved))
        if keras3:
            decisions.update(custom_loop.escaping_on_shim(facts, decisions, facts.loops))
            decisions.update(keras3_notes.checkpointed_on_shim(facts, decisions))
        _import_plan.plan_imports(facts, self.plan, decisions)
        _import_plan.plan_nested_imports(facts, self.plan, decisions)
        _import_plan.plan_private_imports(facts, self.plan)
        private_modules.plan_private_modules(facts, self.target, self.plan)
        private_modules.plan_device_checks(facts, self.plan)
        _apply.plan_site_edits(facts, self.target, self.plan, decisions)
        if keras3:
            self._plan_custom_loops(loops_kept)
            self.plan.warnings.extend(keras3_notes.iterations_read_warnings(facts, decisions, self.plan.lso_calls))
        _import_plan.plan_local_aliases(facts, self.plan, decisions)
        _import_plan.plan_self_aliases(facts, self.plan, decisions)
        _apply.plan_removals(self.plan, facts)
        _import_plan.warn_kept_imports(facts, self.plan, decisions)
        self.plan.warnings.extend(policy.global_scale_read_warnings(facts, decisions))
        self.plan.add(config_compare.plan_comparisons(facts))
        return self.plan

    def _loops_on_shim(self, decisions: dict[Expr, SiteEdit]) -> bool:
        """Moves the optimizers decided to our class where the file's custom loop, or its applying of gradients it
        never scaled, needs TF 2.4's contract (Keras 3); returns whether it did."""
        moved, warnings = custom_loop.loops_on_shim(self.facts, decisions, self.facts.loops)
        if not moved:
            moved = custom_loop.applies_on_shim(self.facts, decisions, self.facts.loops)
        decisions.update(moved)
        self.plan.warnings.extend(warnings)
        return bool(moved)

    def _plan_custom_loops(self, loops_kept: bool) -> None:
        """Plans the Keras 3 custom-loop rewrites and `loss_scale` reads, unless the file stays on our class."""
        facts, sites, loops = self.facts, self.facts.sites, self.facts.loops
        on_shim = loops_kept or ((loops or facts.other_scale_reads) and _tf1.builds_shim_optimizer(facts))
        if not on_shim:
            self.plan.add(custom_loop.plan_loops(facts, loops, self.plan.lso_calls))
        kept = [call for call in (*loops, *facts.applies) if _keeps_tf24_method(facts, call, self.plan)]
        final_class = keras3_notes.final_class_on_shim(facts, kept)
        _apply.plan_site_edits(facts, self.target, self.plan, final_class)
        if not on_shim and not final_class:
            self.plan.warnings.extend(keras3_notes.get_gradients_warnings(facts, loops, self.plan.lso_calls))
        if sites:
            for read in facts.optimizer_scale_reads:
                self.plan.add(custom_loop.plan_scale_read(facts, read))
        if (sites or loops) and not on_shim:  # TF 2.4's API is in use here
            for read in facts.other_scale_reads:
                part = custom_loop.plan_other_scale_read(facts, read, self.plan.lso_calls, self.plan.shim_calls)
                self.plan.add(part)
            self.plan.add(custom_loop.plan_wrap_scale_reads(facts, facts.policy_scale_reads, self.plan))


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
