"""The libcst command that rewrites TF 2.4 mixed-precision call sites to the modern Keras API.

The read-only pass is `codemods._scan.collect_facts` (over our own scopes, `codemods._scopes`): it gives the
module's frozen `codemods._facts.Facts`. Value reading is in `codemods._values`, import planning in
`codemods._import_plan`, and each API family's rule in `codemods.rules`. Here: each site's row of the mapping
table picks how it is decided (`_DECIDE`), the typed edit decided (`codemods._edits`) picks how it is planned
(`_APPLY`) into the module's `Plan`, and the `leave_*` methods apply the plan. The rules are still mixins of this
one class; they read `self.facts` and write `self.plan` (see `codemods._state`).
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.metadata import CodeRange, PositionProvider

from lossscale_compat import _mapping, _translation

from . import _imports, _positions, _tf1
from . import _warnings as w
from ._edits import (
    KEEP,
    AddKeyword,
    AssertionCall,
    DropCall,
    DtypePolicyOf,
    FirstArgument,
    FixedFactor,
    FoldFactor,
    Keep,
    LayerPolicy,
    NewAttr,
    NewCall,
    NewName,
    NewPolicy,
    Plan,
    ShimWrap,
    SiteEdit,
    Wrap,
)
from ._import_plan import ImportPlanning
from ._libcst_internals import ResolveWithoutCopy
from ._scan import collect_facts
from ._values import (
    Expr,
    Unsafe,
    bind_args,
    has_comment,
    is_power_of_two,
    kwarg,
    restyle,
    restyle_aliases,
)
from .rules.config_compare import ConfigCompareRule
from .rules.custom_loop import CustomLoopRule
from .rules.graph_rewrite import GraphRewriteRule
from .rules.keras3_notes import Keras3NotesRule
from .rules.loss_scale import LossScaleRule
from .rules.optimizer import LOOP_SHIM, SHIM_INSTEAD, OptimizerRule
from .rules.policy import PolicyRule
from .rules.private_modules import PrivateModuleRule

TARGETS = _mapping.TARGETS
_Node = TypeVar("_Node", bound=cst.CSTNode)
_Line = TypeVar("_Line", cst.SimpleStatementLine, cst.SimpleStatementSuite)
# Trailing comments that speak only of their own line (a noqa or type pragma); they go with a removed line.
_PRAGMA_RE = re.compile(r"#\s*(noqa|type:|pylint:|pragma|isort:|fmt:|lossscale-compat:)", re.IGNORECASE)


_RULE_PARAMS = {
    "loss_scale_optimizer": (("optimizer", "loss_scale"), 2),
    "graph_rewrite": (("opt", "loss_scale"), 1),
    "policy": (("name", "loss_scale"), 1),
    "get_layer_policy": (("layer",), 1),
}


class MigrateLossScaleCommand(
    PrivateModuleRule,
    ImportPlanning,
    OptimizerRule,
    LossScaleRule,
    PolicyRule,
    GraphRewriteRule,
    Keras3NotesRule,
    CustomLoopRule,
    ConfigCompareRule,
    ResolveWithoutCopy,
    CodemodCommand,
    cst.CSTTransformer,
):
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
        self._path: set[cst.CSTNode] = set()
        self.printed: bytes | None = None
        """libcst's print of the module last transformed, made while placing the findings."""
        self.input_print: _positions.ModulePrint | None = None
        """The same print, by top-level statement, when the findings were placed from it."""

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        """Analyses `tree`, rewrites only the paths to the nodes that change, adds imports, places findings."""
        new = tree.visit(self)
        if self.plan.needed_imports:
            new = _imports.add_imports(new, self.plan.needed_imports, self.context.full_package_name)
        self._place_findings(tree)
        self.facts.global_scope.tracker.release()
        return new

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            return super().on_visit(node)
        return node in self._path  # a subtree with nothing to rewrite is left as it is

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

    def _mark_path(self) -> None:
        """Records every ancestor of a node the transform changes, so that only those paths are walked."""
        plan, parents = self.plan, self.facts.parents
        changed = [*plan.replace, *plan.drop_statements, *plan.drop_small, *plan.as_pass, *plan.carry]
        changed.extend(parent for alias in plan.import_actions if (parent := parents.get(alias)) is not None)
        path = self._path
        for node in changed:
            parent = parents.get(node)
            while parent is not None and parent not in path:
                path.add(parent)
                parent = parents.get(parent)

    # ------------------------------------------------------------------ analysis
    def visit_Module(self, node: cst.Module) -> bool:
        self.findings = []
        self._path = set()
        self.facts = collect_facts(node, self.source, functools.partial(_resolve_positions, self.context))
        self.plan = Plan(warnings=list(self.facts.warnings))
        sites, loops = self.facts.sites, self.facts.loops
        decisions = self._decide_sites(sites)
        loops_kept = self.target == "keras3" and (
            self._keep_loops_on_shim(decisions, loops) or self._keep_applies_on_shim(decisions, loops)
        )
        if self.target == "keras3":
            self._shim_escaping(decisions, loops)
            self._keep_checkpointed_on_shim(decisions)
        self._plan_imports(decisions)
        self._plan_private_imports()
        self._plan_private_modules()
        for site, edit in decisions.items():
            self._apply_decision(site, edit)
        on_shim = self.target == "keras3" and (
            loops_kept or ((loops or self.facts.other_scale_reads) and _tf1.builds_shim_optimizer(self.facts))
        )
        if self.target == "keras3" and not on_shim:
            self._plan_loops(loops)
            self._warn_get_gradients(loops)
        if self.target == "keras3" and sites:
            for read in self.facts.optimizer_scale_reads:
                self._plan_scale_read(read)
        if self.target == "keras3" and (sites or loops) and not on_shim:  # TF 2.4's API is in use here
            for read in self.facts.other_scale_reads:
                self._plan_other_scale_read(read)
        if self.target == "keras3":
            self._warn_iterations_reads(decisions)
        self._plan_local_aliases(decisions)
        self._plan_drops()
        self._warn_kept_imports(decisions)
        self._warn_global_scale_reads(decisions)
        self._plan_config_comparisons()
        self._mark_path()
        return True

    def _decide_sites(self, sites: Sequence[tuple[Expr, str]]) -> dict[Expr, SiteEdit]:
        """Decides each site's edit; a site inside a call left alone is kept, and a refused one warned."""
        decisions: dict[Expr, SiteEdit] = {}
        # Calls that fold an inner loss scale go first, so the inner site is not renamed too.
        order = sorted(
            sites,
            key=lambda site: 0 if _mapping.BY_OLD_NAME[site[1]].rule != "loss_scale" else 1,
        )
        for site, old in order:
            if site in self.plan.folded:
                continue
            kept = self._inside_kept_call(site)
            if kept is not None and not self._tf1_loss_scale_in(site, kept):
                decisions[site] = KEEP
                if self.facts.position(site).start.line != self.facts.position(kept).start.line:
                    self.plan.warn(site, self.plan.kept_calls[kept])  # each line that keeps a TF 2.4 name says why
                continue
            folded_before = set(self.plan.folded)
            try:
                decisions[site] = self._decide(site, _mapping.BY_OLD_NAME[old])
            except Unsafe as unsafe:
                self.plan.folded = folded_before
                row = _mapping.BY_OLD_NAME[old]
                if row.rule == "loss_scale_optimizer" and unsafe.code in SHIM_INSTEAD:
                    decisions[site] = NewName(row.shim, w.OPTIMIZER_SHIM_NOTE)  # the same arguments, TF 2.4's class
                    continue
                self.plan.warn(site, unsafe.code)
                decisions[site] = KEEP
                parent = self.facts.parent(site)
                if isinstance(parent, cst.Call) and parent.func is site:
                    self.plan.kept_calls[parent] = unsafe.code
        return decisions

    def _tf1_decision(self, site: Expr) -> SiteEdit:
        """Keeps a TF1 site on TensorFlow's own `tf.compat.v1.mixed_precision` name (unchanged if it already is)."""
        name = self.facts.qualified_one(site)
        assert name is not None  # a site has one qualified name (`SiteCollector._site`)
        if name.startswith("tensorflow.compat.v1."):
            return KEEP  # still exported by TensorFlow: nothing to change
        return NewName(f"{_tf1.TF1_MODULE}.{name.rpartition('.')[2]}", w.TF1_KEPT_NOTE)

    def _tf1_optimizer_decision(self, site: Expr, call: cst.Call | None) -> SiteEdit:
        """TF1's `MixedPrecisionLossScaleOptimizer` of a provably TF1 optimizer stays on TensorFlow's v1 name."""
        try:
            bound = bind_args(call.args, ("opt", "loss_scale"), 2) if call is not None else None
        except Unsafe:
            bound = None
        if (
            bound is None
            or _tf1.optimizer_kind(self.facts, bound["opt"].value, cst.ensure_type(call, cst.Call)) != _tf1.TF1
        ):
            raise Unsafe(w.TF1_LOSS_SCALE_OPTIMIZER)
        self.plan.tf1_consumers.add(cst.ensure_type(call, cst.Call))
        return self._tf1_decision(site)

    def _tf1_loss_scale_in(self, site: Expr, kept: cst.CSTNode) -> bool:
        """Whether `site` builds the loss scale argument of a TF1 consumer that is itself left alone."""
        parent = self.facts.parent(site)
        row = _mapping.BY_OLD_NAME.get(self.facts.qualified_one(site) or "")
        return (
            isinstance(parent, cst.Call)
            and parent.func is site
            and row is not None
            and row.rule == "loss_scale"
            and _tf1.only_tf1_consumers(self.facts, parent, self.plan.tf1_consumers)
            and (grandparent := self.facts.parent(parent)) is not None
            and self.facts.parent(grandparent) is kept
        )

    def _inside_kept_call(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The call left alone that contains `node`, if any."""
        parent = self.facts.parent(node)
        while parent is not None:
            if parent in self.plan.kept_calls:
                return parent
            parent = self.facts.parent(parent)
        return None

    def _decide(self, site: Expr, row: _mapping.Rename) -> SiteEdit:
        """Returns what to do with one site, by the rule its row of the table names, or raises Unsafe."""
        parent = self.facts.parent(site)
        call = parent if isinstance(parent, cst.Call) and parent.func is site else None
        return _DECIDE[row.rule](self, site, row, call)

    def _decide_rename(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        return NewName(_mapping.replacement(row, self.target))

    def _decide_loss_scale(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        if call is not None and _tf1.only_tf1_consumers(self.facts, call, self.plan.tf1_consumers):
            return self._tf1_decision(site)
        return NewName(row.shim, w.SHIM_NOTE)

    def _decide_tf1_optimizer(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        return self._tf1_optimizer_decision(site, call)

    def _decide_disable(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        return DropCall(self._disable_statement(call))

    def _decide_policy_site(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        if call is None:
            return NewName(_mapping.replacement(row, self.target))
        return self._decide_policy(call, self._bound(call, row), row)

    def _decide_layer_policy(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        if call is None:
            raise Unsafe(w.UNSUPPORTED_USE)
        return LayerPolicy(self._bound(call, row)["layer"])

    def _decide_optimizer(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        if call is None:
            parent = self.facts.parent(site)
            if isinstance(parent, cst.Attribute) and parent.value is site:
                return NewName(row.shim, w.OPTIMIZER_SHIM_NOTE)  # `LossScaleOptimizer.from_config(...)`
            if isinstance(parent, cst.Assign) and parent.value is site:
                # `wrapper_class = LossScaleOptimizer`, called with TF 2.4's arguments
                return NewName(row.shim, w.CLASS_SHIM_NOTE)
            if self._class_checked(site):
                return NewName(row.fallback, w.CLASS_CHECK_FALLBACK_NOTE)  # `isinstance(x, <the class>)`
            raise Unsafe(w.UNSUPPORTED_USE)
        return self._decide_wrap(call, self._bound(call, row), row)

    def _decide_graph_rewrite(self, site: Expr, row: _mapping.Rename, call: cst.Call | None) -> SiteEdit:
        if call is None:
            raise Unsafe(w.UNSUPPORTED_USE)
        bound = self._bound(call, row)
        kind = _tf1.optimizer_kind(self.facts, bound["opt"].value, call)
        if kind is None and self._decided_when_called(bound):
            return NewName(row.fallback, w.GRAPH_REWRITE_FALLBACK_NOTE)  # TF 2.4's choice by kind, made when called
        if kind != _tf1.KERAS:
            self.plan.tf1_consumers.add(call)
            if kind is None:
                raise Unsafe(w.GRAPH_REWRITE_KIND_UNKNOWN)
            return self._tf1_decision(site)
        return self._decide_wrap(call, bound, row)

    @staticmethod
    def _bound(call: cst.Call, row: _mapping.Rename) -> dict[str, cst.Arg]:
        """The call's arguments by TF 2.4's parameter names for the row's rule, or raises Unsafe."""
        params, required = _RULE_PARAMS[row.rule]
        return bind_args(call.args, params, required)

    def _decide_wrap(self, call: cst.Call, bound: dict[str, cst.Arg], row: _mapping.Rename) -> SiteEdit:
        """`LossScaleOptimizer(opt, loss_scale)` or a graph rewrite of a Keras optimizer: the loss scale folded in."""
        new_name = _mapping.replacement(row, self.target)
        if "loss_scale" in bound:
            if has_comment(bound["loss_scale"]):
                raise Unsafe(w.UNSUPPORTED_USE)
            scale = self._read_loss_scale(bound["loss_scale"].value)
        else:
            scale = _translation.translate(_translation.DYNAMIC, {})
        opt = bound[_RULE_PARAMS[row.rule][0][0]]
        if self.target == "keras3" and not scale.dynamic:
            inner = opt.value
            if not self._is_inline_keras3_optimizer(inner):
                raise Unsafe(w.FIXED_SCALE_NOT_INLINE)
            if not is_power_of_two(scale.initial_scale):
                raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
            compiles = self._compiles_receiving(call)
            return FixedFactor(call, opt, scale, row, compiles)
        return Wrap(call, opt, scale, new_name, row)

    # ------------------------------------------------------------------ planning rewrites
    def _apply_decision(self, site: Expr, edit: SiteEdit) -> None:
        try:
            _APPLY[type(edit)](self, site, edit)
        except Unsafe as unsafe:
            self.plan.warn(site, unsafe.code)

    def _apply_keep(self, site: Expr, edit: Keep) -> None:
        pass

    def _apply_new_name(self, site: Expr, edit: NewName) -> None:
        if edit.name is None:
            raise Unsafe(w.UNSUPPORTED_USE)
        self.plan.replace[site] = self.spell(edit.name, site)
        if edit.note is not None:
            self.plan.warn(site, edit.note)

    def _apply_shim_wrap(self, site: Expr, edit: ShimWrap) -> None:
        self._apply_wrap(site, edit.wrap)
        self.plan.shim_calls.add(edit.wrap.call)
        self.plan.warn(site, edit.note)

    def _apply_layer_policy(self, site: Expr, edit: LayerPolicy) -> None:
        call = self.facts.parent(site)
        assert call is not None  # `_decide` saw it: the call of `get_layer_policy`
        self.plan.replace[call] = DtypePolicyOf(edit.layer)

    def _apply_drop_call(self, site: Expr, edit: DropCall) -> None:
        self.plan.drop_small.add(edit.statement)
        self.plan.warn(site, w.DISABLE_REMOVED_NOTE)

    def _apply_new_policy(self, site: Expr, edit: NewPolicy) -> None:
        assert edit.new_name is not None  # every Policy row names its modern class on both targets
        func = self.spell(edit.new_name, site)
        self.plan.replace[edit.call] = NewCall(func, [edit.name_arg])
        if edit.note is not None:
            self.plan.warn(site, edit.note)

    def _apply_wrap(self, site: Expr, edit: Wrap) -> None:
        scale = edit.scale
        kwargs = [kwarg(key, self._source_of(key, value, scale, site)) for key, value in scale.kwargs().items()]
        assert edit.new_name is not None  # every LossScaleOptimizer and graph-rewrite row names one on both targets
        func = self.spell(edit.new_name, site)  # after `_as_float`, which may leave the call alone
        self.plan.replace[edit.call] = NewCall(func, [edit.opt], kwargs)
        self.plan.lso_calls.add(edit.call)
        if edit.row.rule == "graph_rewrite":
            self.plan.warn(site, w.GRAPH_REWRITE_NOTE)
        if (
            self.target == "keras3"
            and scale.dynamic
            and edit.new_name != LOOP_SHIM
            and self._reads_iterations(edit.opt.value)
        ):
            self.plan.warn(site, w.ITERATIONS_NOTE)

    def _apply_fixed_factor(self, site: Expr, edit: FixedFactor) -> None:
        factor = edit.scale.initial_scale
        assert factor is not None  # a fixed loss scale has a value (`_decide_wrap` checked it is a power of two)
        self.plan.replace[edit.call] = FoldFactor(edit.opt, kwarg("loss_scale_factor", factor))
        self.plan.lso_calls.add(edit.call)
        for compile_call in edit.compiles:
            if not any(a.keyword is not None and a.keyword.value == "auto_scale_loss" for a in compile_call.args):
                self.plan.replace[compile_call] = AddKeyword(kwarg("auto_scale_loss", cst.Name("False")))
        if edit.row.rule == "graph_rewrite":
            self.plan.warn(site, w.GRAPH_REWRITE_NOTE)

    def _plan_drops(self) -> None:
        """Turns the statements to remove into whole-line removals, `pass` lines and carried comments.

        A line whose every small statement goes is removed, and its leading lines and trailing
        comment move to the next kept statement of its block (or the block's footer); a block
        that would be left empty keeps its first removed line as `pass`.
        """
        for _, statement, _ in self.facts.bindings.values():
            line = self.facts.parent(statement)
            if (
                isinstance(statement, (cst.Import, cst.ImportFrom))
                and not isinstance(statement.names, cst.ImportStar)
                and all(self.plan.import_actions.get(alias, "keep") is None for alias in statement.names)
                and isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1
            ):
                self.plan.drop_statements.add(line)  # leave_Import(From) removes it; keep its comments
        lines: dict[cst.SimpleStatementLine | cst.SimpleStatementSuite, list[cst.CSTNode]] = {}
        for small in self.plan.drop_small:
            small_line = self.facts.parent(small)
            assert isinstance(small_line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))  # a small statement's
            lines.setdefault(small_line, []).append(small)
        for line, smalls in lines.items():
            if len(smalls) == len(line.body):
                self.plan.drop_small.difference_update(smalls)
                if isinstance(line, cst.SimpleStatementSuite):
                    self.plan.as_pass.add(line)
                else:
                    self.plan.drop_statements.add(line)
        blocks = {self.facts.parent(line) for line in self.plan.drop_statements}
        for block in blocks:
            assert isinstance(block, (cst.IndentedBlock, cst.Module))  # a statement line's
            body = list(block.body)
            if isinstance(block, cst.IndentedBlock) and all(st in self.plan.drop_statements for st in body):
                self.plan.drop_statements.discard(body[0])
                self.plan.as_pass.add(body[0])
            carried: list[cst.EmptyLine] = []
            for statement in body:
                if statement not in self.plan.drop_statements:
                    if carried:
                        self.plan.carry[statement] = carried
                        carried = []
                    continue
                assert isinstance(statement, (cst.SimpleStatementLine, cst.If))  # whole lines, or an `if` of one
                carried = carried + list(statement.leading_lines)
                comment = None
                if isinstance(statement, cst.SimpleStatementLine):
                    comment = statement.trailing_whitespace.comment
                if comment is not None and not _PRAGMA_RE.match(comment.value):
                    carried.append(cst.EmptyLine(indent=True, comment=comment))
            if carried:
                self.plan.carry[block] = carried

    # ------------------------------------------------------------------ transform
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> Expr:
        new = self.plan.replace.get(original_node)
        return new if isinstance(new, cst.BaseExpression) else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> Expr:
        new = self.plan.replace.get(original_node)
        if isinstance(new, cst.BaseExpression):
            return new
        if isinstance(new, NewAttr):
            return updated_node.with_changes(attr=cst.Name(new.attr))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> Expr:
        plan = self.plan.replace.get(original_node)
        if plan is None or isinstance(plan, cst.BaseExpression):
            return updated_node
        if isinstance(plan, AssertionCall):  # `self.assertEqual(a.get_config(), b.get_config())`
            return plan.call
        index = {id(arg): i for i, arg in enumerate(original_node.args)}

        def updated(arg: cst.Arg) -> cst.Arg:
            return updated_node.args[index[id(arg)]]

        if isinstance(plan, FirstArgument):  # `opt.get_unscaled_gradients(g)` -> `g`
            return updated_node.args[0].value
        if isinstance(plan, DtypePolicyOf):
            value = updated(plan.layer).value
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return cst.Attribute(value=value, attr=cst.Name("dtype_policy"))
        if isinstance(plan, NewCall):
            args = [
                updated(arg).with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for arg in plan.positional
            ] + list(plan.keywords)
            return updated_node.with_changes(func=plan.func, args=restyle(updated_node.args, args))
        if isinstance(plan, AddKeyword):
            args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args]
            return updated_node.with_changes(args=restyle(updated_node.args, [*args, plan.keyword]))
        if isinstance(plan, FoldFactor):
            inner = updated(plan.opt).value
            assert isinstance(inner, cst.Call)
            args = [*list(inner.args), plan.keyword]
            if inner.args:
                args = restyle(inner.args, [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])
            return inner.with_changes(
                lpar=updated_node.lpar or inner.lpar,
                rpar=updated_node.rpar or inner.rpar,
                args=args,
            )
        raise AssertionError(plan)

    def leave_Assert(self, original_node: cst.Assert, updated_node: cst.Assert) -> cst.Assert | cst.Expr:
        plan = self.plan.replace.get(original_node)
        if isinstance(plan, AssertionCall):  # `assert a.get_config() == b.get_config()`
            return cst.Expr(value=plan.call, semicolon=updated_node.semicolon)
        return updated_node

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.Expr | cst.RemovalSentinel:
        if original_node in self.plan.drop_small:
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        if original_node in self.plan.drop_statements:
            return cst.RemovalSentinel.REMOVE
        return self._leave_small_statements(original_node, updated_node)

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If | cst.RemovalSentinel:
        if original_node in self.plan.drop_statements:  # an `if flag:` that only held a dropped line
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        return self._leave_small_statements(original_node, updated_node)

    def _leave_small_statements(self, original_node: _Line, updated_node: _Line) -> _Line:
        if original_node in self.plan.as_pass:
            return updated_node.with_changes(body=[cst.Pass()])
        if any(small in self.plan.drop_small for small in original_node.body) and updated_node.body:
            last = updated_node.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(body=[*updated_node.body[:-1], last])
        return updated_node

    def on_leave(
        self, original_node: _Node, updated_node: _Node
    ) -> _Node | cst.RemovalSentinel | cst.FlattenSentinel[_Node]:
        result = super().on_leave(original_node, updated_node)
        carried = self.plan.carry.get(original_node)
        if carried and isinstance(result, (cst.Module, cst.IndentedBlock)):
            return result.with_changes(footer=[*carried, *result.footer])
        if carried and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result.with_changes(leading_lines=[*carried, *result.leading_lines])
        return result

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import | cst.RemovalSentinel:
        kept = [
            new
            for old, new in zip(original_node.names, updated_node.names)
            if self.plan.import_actions.get(old, "keep") is not None
        ]
        if len(kept) == len(updated_node.names):
            return updated_node
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated_node.with_changes(names=restyle_aliases(updated_node.names, kept))

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom | cst.RemovalSentinel:
        if isinstance(original_node.names, cst.ImportStar) or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        actions = [self.plan.import_actions.get(alias, "keep") for alias in original_node.names]
        if all(action == "keep" for action in actions):
            return updated_node
        kept = [alias for alias, action in zip(updated_node.names, actions) if action == "keep"]
        moved = [action for action in actions if isinstance(action, tuple)]  # neither kept nor dropped
        modules = {action[0] for action in moved}
        if not kept and len(modules) == 1:
            names = [
                cst.ImportAlias(
                    name=cst.Name(short),
                    asname=None if local == short else cst.AsName(name=cst.Name(local)),
                )
                for _, short, local in moved
            ]
            new_names = restyle_aliases(updated_node.names, names)
            return updated_node.with_changes(module=cst.parse_expression(modules.pop()), names=new_names, relative=())
        for module, short, local in moved:
            self.plan.needed_imports.append((module, short, None if local == short else local))
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated_node.with_changes(names=restyle_aliases(updated_node.names, kept))


# The rule for a site is its row's `rule` in the mapping table (`_mapping.RULES`): how to decide it...
_DECIDE: dict[str, Callable[[MigrateLossScaleCommand, Expr, _mapping.Rename, cst.Call | None], SiteEdit]] = {
    "rename": MigrateLossScaleCommand._decide_rename,
    "loss_scale": MigrateLossScaleCommand._decide_loss_scale,
    "loss_scale_optimizer": MigrateLossScaleCommand._decide_optimizer,
    "policy": MigrateLossScaleCommand._decide_policy_site,
    "get_layer_policy": MigrateLossScaleCommand._decide_layer_policy,
    "graph_rewrite": MigrateLossScaleCommand._decide_graph_rewrite,
    "graph_rewrite_disable": MigrateLossScaleCommand._decide_disable,
    "tf1_optimizer": MigrateLossScaleCommand._decide_tf1_optimizer,
}
# ...and, by the type of the edit decided, how to plan it.
_APPLY: dict[type, Callable[[MigrateLossScaleCommand, Expr, Any], None]] = {
    Keep: MigrateLossScaleCommand._apply_keep,
    NewName: MigrateLossScaleCommand._apply_new_name,
    Wrap: MigrateLossScaleCommand._apply_wrap,
    ShimWrap: MigrateLossScaleCommand._apply_shim_wrap,
    FixedFactor: MigrateLossScaleCommand._apply_fixed_factor,
    NewPolicy: MigrateLossScaleCommand._apply_new_policy,
    LayerPolicy: MigrateLossScaleCommand._apply_layer_policy,
    DropCall: MigrateLossScaleCommand._apply_drop_call,
}


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
