"""Custom-loop methods: `get_scaled_loss`/`get_unscaled_gradients` and `optimizer.loss_scale` reads on Keras 3.

Before the site edits are planned, the functions here say which LossScaleOptimizer calls move to our class instead
(as new edits for their sites); after, they plan the loops' rewrites on the calls that were rewritten (`migrated`),
each returning a plan of its own that the command adds to the module's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import libcst as cst

from lossscale_compat import _mapping

from .. import _tf1
from .. import _warnings as w
from .._edits import (
    CurrentScale,
    Draft,
    FirstArgument,
    FixedFactor,
    FoldFactor,
    NewAttr,
    NodeEdit,
    Plan,
    SiteEdit,
    Wrap,
    merged,
)
from .._facts import Facts
from .._values import Expr, Unsafe, called_name_of, calls_in, has_comment, root_of
from .optimizer_class import on_shim

# Where unscaled gradients go besides `apply_gradients`, by the name of the function or method they are
# passed to: each is a place where Keras 3's contract (scaled gradients in) would change the results.
_GRADIENT_FLOWS = (
    (frozenset({"clip_by_global_norm", "clip_by_norm", "clip_by_value", "clip_by_average_norm"}), w.GRADIENTS_CLIPPED),
    (frozenset({"global_norm", "norm", "reduce_norm", "l2_loss", "l2_normalize"}), w.GRADIENTS_NORM_TAKEN),
    (frozenset({"assign_add", "assign", "add_n", "accumulate_n"}), w.GRADIENTS_ACCUMULATED),
    (frozenset({"print", "scalar", "histogram", "info", "debug", "warning", "log", "write"}), w.GRADIENTS_LOGGED),
)
_FLOW_CODES = frozenset(code for _, code in _GRADIENT_FLOWS)

_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
# All-reduces the unscaled gradients may pass through on their way to `apply_gradients`: they sum or average,
# so they commute with the division by the loss scale (Horovod's `compression=` is excluded: fp16 could overflow).
_ALL_REDUCES = frozenset({"allreduce", "grouped_allreduce", "all_reduce"})
_LINEAR_REDUCE_KEYWORDS = frozenset({"average", "name", "prescale_factor", "postscale_factor", "device_dense"})
_LINEAR_REDUCE_OPS = frozenset({"Average", "Sum", "SUM", "MEAN"})
# Where Keras 2's and tf_keras's LossScaleOptimizer live: code that checks `isinstance(opt, <one of them>)` is
# written for a class without `scale_loss`, whose `apply_gradients` does not unscale.
_KERAS2_LSO_MODULES = ("keras.src.mixed_precision.", "keras.mixed_precision.loss_scale_optimizer.", "tf_keras.")


def _flow_of_calls(calls: Sequence[cst.Call]) -> str | None:
    names = {called_name_of(call) for call in calls}
    for flow_names, code in _GRADIENT_FLOWS:
        if names & flow_names:
            return code
    return None


Edits = dict[Expr, SiteEdit]
Warnings = list[tuple[cst.CSTNode, str]]


def escaping_on_shim(facts: Facts, decisions: Mapping[Expr, SiteEdit], loops: Sequence[cst.Call]) -> Edits:
    """New edits that build an experimental LossScaleOptimizer whose object leaves the module with our class.

    Callers the codemod cannot see may call TF 2.4's methods on it; a loop here rewritten for Keras 3's
    class on the same object keeps it on Keras 3's class.
    """
    moved: Edits = {}
    for site, edit in decisions.items():
        if not isinstance(edit, Wrap) or edit.row.rule != "loss_scale_optimizer" or not _tf1.escapes(facts, edit.call):
            continue
        traced = any(
            isinstance(call.func, cst.Attribute) and is_migrated_optimizer(facts, call.func.value, {edit.call})
            for call in loops
        )
        if not traced:
            moved[site] = on_shim(edit, w.ESCAPING_SHIM_NOTE)
    return moved


def loops_on_shim(
    facts: Facts, decisions: Mapping[Expr, SiteEdit], loops: Sequence[cst.Call]
) -> tuple[Edits, Warnings]:
    """New edits that build this file's TF 2.4 optimizers with our class when its custom loop cannot be rewritten,
    and the warnings on the loop calls that say why; none when the loop can be.

    Keras 3's class has no `get_scaled_loss`/`get_unscaled_gradients`, so rewriting the construction
    while leaving such a call would leave a file that fails at run time.
    """
    built: set[cst.CSTNode] = {edit.call for edit in decisions.values() if isinstance(edit, (Wrap, FixedFactor))}
    if not loops or not built:
        return {}, []
    provable = all(
        isinstance(call.func, cst.Attribute) and is_migrated_optimizer(facts, call.func.value, built) for call in loops
    )
    problems = [(call, _loop_problem(facts, call)) for call in loops] if provable else []
    if provable and not any(code for _, code in problems):
        return {}, []
    warnings: Warnings = [(call, code) for call, code in problems if code is not None]
    return _on_shim(facts, decisions, w.LOOP_SHIM_NOTE), warnings


def applies_on_shim(facts: Facts, decisions: Mapping[Expr, SiteEdit], loops: Sequence[cst.Call]) -> Edits:
    """New edits that build this file's TF 2.4 optimizers with our class when it applies gradients it never scaled.

    With no `get_scaled_loss` in the file, an `apply_gradients` passes gradients TF 2.4 applied as they
    were and Keras 3's class would divide; `get_gradients` is gone from Keras 3's class.
    """
    if not facts.applies or not any(isinstance(edit, (Wrap, FixedFactor)) for edit in decisions.values()):
        return {}
    methods = {cst.ensure_type(call.func, cst.Attribute).attr.value for call in facts.applies}
    if loops and "get_gradients" not in methods:
        return {}
    return _on_shim(facts, decisions, w.UNSCALED_APPLY_SHIM_NOTE)


def _on_shim(facts: Facts, decisions: Mapping[Expr, SiteEdit], note: str) -> Edits:
    """Each LossScaleOptimizer call (or graph rewrite's wrap) decided, moved to our class with `note`, but those only
    `compile` takes where nothing reads a model's `optimizer` (no loop of this file can receive them)."""
    return {
        site: on_shim(edit, note)
        for site, edit in decisions.items()
        if isinstance(edit, (Wrap, FixedFactor)) and not out_of_loops_reach(facts, edit.call)
    }


def out_of_loops_reach(facts: Facts, call: cst.Call) -> bool:
    """Whether no loop can receive the optimizer `call` builds: only `compile` of a model nothing passes on takes it,
    and nothing in the file reads a model's `optimizer`."""
    reads_optimizer = any(isinstance(node, cst.Attribute) and node.attr.value == "optimizer" for node in facts.scanned)
    return not reads_optimizer and _only_compiled(facts, call)


def _only_compiled(facts: Facts, call: cst.Call) -> bool:
    """Whether the object `call` builds goes only to `.compile(optimizer=...)` calls: as the argument itself, or
    through a name whose every read holding it (`Facts.seen_value`) is one."""
    if _compile_argument(facts, call):
        return True
    assign = facts.parent(call)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.value is call):
        return False
    target = assign.targets[0].target
    scope = facts.scopes.get(target)
    if not isinstance(target, cst.Name) or scope is None:
        return False
    binding = next((b for b in scope.assignments[target.value] if b.node is target), None)
    reads = [access.node for access in binding.references] if binding is not None else []
    holding = []
    for read in reads:
        if not isinstance(read, cst.Name):
            return False
        value = facts.seen_value(read)
        if value is None:
            return False
        if value is call:
            holding.append(read)
    return bool(holding) and all(_compile_argument(facts, read) for read in holding)


def _compile_argument(facts: Facts, node: cst.CSTNode) -> bool:
    """Whether `node` is the `optimizer=` (or first positional) argument of a `.compile(...)` call."""
    arg = facts.parent(node)
    compile_call = facts.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (
        isinstance(arg, cst.Arg)
        and isinstance(compile_call, cst.Call)
        and isinstance(compile_call.func, cst.Attribute)
        and compile_call.func.attr.value == "compile"
        and not arg.star
    ):
        return False
    if not (arg.keyword.value == "optimizer" if arg.keyword is not None else compile_call.args[0] is arg):
        return False
    return _attributes_only(facts, compile_call.func.value)


def _attributes_only(facts: Facts, model: cst.BaseExpression) -> bool:
    """Whether `model` is a name bound once whose every read is `model.<attribute>` (it is never returned, passed
    or stored, so no caller can reach its optimizer)."""
    if not isinstance(model, cst.Name):
        return False
    scope = facts.scopes.get(model)
    bindings = list(scope[model.value]) if scope is not None else []
    if len(bindings) != 1:
        return False
    for access in bindings[0].references:
        parent = facts.parent(access.node)
        if not (isinstance(parent, cst.Attribute) and parent.value is access.node):
            return False
    return True


def is_migrated_optimizer(facts: Facts, receiver: Expr, migrated: Collection[cst.CSTNode]) -> bool:
    """Returns whether `receiver` holds, when read, one of the `migrated` LossScaleOptimizer calls (`Facts.held_value`:
    a name bound once or last rebound to it, `self.x` set once, a compiled model's `optimizer`, a function's return),
    or may hold only one wrap and optimizers no TF 2.4 API wrapped (`only_wrap`)."""
    value = traced_value(facts, receiver)
    return value is not None and value in migrated


def traced_value(facts: Facts, receiver: Expr) -> cst.CSTNode | None:
    """What a TF 2.4 loop method or `loss_scale` on `receiver` runs on: `Facts.held_value`, else `only_wrap`."""
    value = facts.held_value(receiver)
    return value if value is not None else only_wrap(facts, receiver)


def only_wrap(facts: Facts, receiver: Expr) -> cst.Call | None:
    """The one call of a TF 2.4 name among the values `receiver` may hold (`Facts.possible_values`), where it may hold
    that call's object or optimizers no call of a TF 2.4 name built (`opt = SGD()`, then `if amp: opt =
    LossScaleOptimizer(opt)`); else None.

    Only a loss-scale optimizer has TF 2.4's loop methods and `loss_scale` (a plain optimizer raises AttributeError), so
    such a call on `receiver` that runs, runs on that wrap; a guarded one runs on it or not at all.
    """
    values = facts.possible_values(receiver)
    if not values:
        return None
    sites = {node for node, _ in facts.sites}
    wraps = [value for value in values if isinstance(value, cst.Call) and (value.func in sites or value in sites)]
    return wraps[0] if len(wraps) == 1 else None


def plan_loops(facts: Facts, loops: Sequence[cst.Call], migrated: Collection[cst.CSTNode]) -> Plan:
    """The Keras 3 custom-loop rewrites: per call on a traced optimizer, per receiver on an untraced one."""
    out = Draft()
    groups: dict[tuple[str, cst.CSTNode], list[cst.Call]] = {}
    for call in loops:
        receiver = cst.ensure_type(call.func, cst.Attribute).value
        if is_migrated_optimizer(facts, receiver, migrated):
            _plan_loop(facts, call, out)
        else:
            groups.setdefault(receiver_key(facts, call, receiver), []).append(call)
    for calls in groups.values():
        _plan_untraced(facts, calls, out)
    return out.frozen()


def _plan_loop(facts: Facts, call: cst.Call, out: Draft) -> None:
    """Plans the Keras 3 custom-loop rewrites for one `x.get_*scaled*` call on a migrated optimizer."""
    assert isinstance(call.func, cst.Attribute)
    method = call.func.attr.value
    if not _one_argument(call):
        out.warn(call, w.BAD_ARGUMENTS)
        return
    if method == "get_scaled_loss":
        out.replace[call.func] = NewAttr("scale_loss")
        return
    try:
        _apply_unscaled(out, *_unscaled_rewrite(facts, call))
    except Unsafe as unsafe:
        out.warn(call, unsafe.code)


def _plan_untraced(facts: Facts, calls: list[cst.Call], out: Draft) -> None:
    """Rewrites one untraced receiver's loop calls for Keras 3 all together, or warns at each of them.

    Only loss-scale optimizers have these methods, and Keras 3's class and ours both unscale in
    `apply_gradients` when `get_unscaled_gradients` was not called; half a group rewritten would call
    `scale_loss` and `get_unscaled_gradients` on one object, which Keras 3's class cannot run.
    """
    methods = [cst.ensure_type(call.func, cst.Attribute).attr.value for call in calls]
    plans = None
    if (
        "get_scaled_loss" in methods
        and "get_unscaled_gradients" in methods
        and all(_one_argument(call) for call in calls)
        and not any(_checked_for_keras2s_class(facts, call) for call in calls)
    ):
        try:
            plans = [
                _unscaled_rewrite(facts, call, untraced=True)
                for call, method in zip(calls, methods)
                if method == "get_unscaled_gradients"
            ]
        except Unsafe:
            plans = None
    if plans is None:
        for call in calls:
            out.warn(call, _untraced_flow(facts, call) or w.RECEIVER_NOT_PROVEN)
        return
    for call, method in zip(calls, methods):
        if method == "get_scaled_loss":
            out.replace[call.func] = NewAttr("scale_loss")
        out.warn(call, w.UNTRACED_LOOP_NOTE)
    for plan in plans:
        _apply_unscaled(out, *plan)


def plan_other_scale_read(
    facts: Facts, read: cst.Attribute, migrated: Collection[cst.CSTNode], on_shim: Collection[cst.CSTNode]
) -> Plan:
    """`opt.loss_scale` on Keras 3: renamed where `opt` is provably Keras 3's class (a `migrated` call not moved to
    our class, `on_shim`; `traced_value`), else warned."""
    parent = facts.parent(read)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)):
        return Plan()
    value = traced_value(facts, read.value)
    if value is not None and value in on_shim:
        return Plan()
    if value is not None and value in migrated:
        return plan_scale_read(facts, read)
    return Plan(warnings=((read, w.SCALE_READ_NOT_PROVEN),))


def plan_wrap_scale_reads(
    facts: Facts,
    reads: Sequence[cst.Attribute],
    migrated: Collection[cst.CSTNode],
    on_shim: Collection[cst.CSTNode],
    replace: Mapping[cst.CSTNode, NodeEdit],
) -> Plan:
    """`x.loss_scale` on Keras 3 where `x`, whatever its name, is bound once to a wrap moved to Keras 3's class:
    as for a receiver named like an optimizer (`plan_other_scale_read`). Reads of other names (a policy's, say) are
    left to the policy rule, and a fixed scale folded into the inner optimizer (`replace`, the site edits' node
    edits) is not such a wrap."""
    parts = []
    for read in reads:
        value = traced_value(facts, read.value)
        if value is not None and value in migrated and not isinstance(replace.get(value), FoldFactor):
            parts.append(plan_other_scale_read(facts, read, migrated, on_shim))
    return merged(parts)


def plan_scale_read(facts: Facts, read: cst.Attribute) -> Plan:
    """`<model>.optimizer.loss_scale` -> `.scale_loss(1.0)`: Keras 3's current scale as a fresh tensor, as TF 2.4's
    property gave; `dynamic_scale` exists only once the first step has built the optimizer."""
    parent = facts.parent(read)
    if isinstance(parent, cst.Call) and parent.func is read:
        return Plan(warnings=((read, w.SCALE_CALLED),))  # TF 2.3's `loss_scale()`, a TypeError on TF 2.4
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign)):
        return Plan(warnings=((read, w.UNSUPPORTED_USE),))
    return Plan(replace={read: CurrentScale()}, warnings=((read, w.SCALE_READ_NOTE),))


def _apply_unscaled(out: Draft, uses: list[cst.CSTNode], source: cst.Name | None, drop: cst.CSTNode) -> None:
    """Renames `uses` to `source` and drops the statement `drop`; a call `drop` becomes its argument."""
    if isinstance(drop, cst.Call):
        out.replace[drop] = FirstArgument()
        return
    if source is not None:
        for node in uses:
            out.replace[node] = cst.Name(source.value)
    out.drop_statements.add(drop)


def _one_argument(call: cst.Call) -> bool:
    """Whether the loop call `call` passes one argument, by position or by TF 2.4's name for it (`loss=`)."""
    if len(call.args) != 1 or call.args[0].star:
        return False
    keyword = call.args[0].keyword
    method = cst.ensure_type(call.func, cst.Attribute).attr.value
    return keyword is None or keyword.value == _mapping.LOOP_PARAMETERS.get(method)


def _loop_problem(facts: Facts, call: cst.Call) -> str | None:
    """Why a loop call on a provably migrated optimizer cannot be rewritten for Keras 3, or None."""
    if not _one_argument(call):
        return w.BAD_ARGUMENTS
    if cst.ensure_type(call.func, cst.Attribute).attr.value == "get_scaled_loss":
        return None
    try:
        _unscaled_rewrite(facts, call)
    except Unsafe as unsafe:
        return unsafe.code
    return None


def receiver_key(facts: Facts, call: cst.Call, receiver: Expr) -> tuple[str, cst.CSTNode]:
    """The receiver's text and owner: its class for `self.x`, else the function (or module) it is read in.

    Calls with the same key are taken to be on the same object. A receiver that is not a dotted name
    (`make().get_scaled_loss`) gets a key of its own.
    """
    text = cst.Module(body=[]).code_for_node(receiver)
    root = receiver
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return text, call
    node = facts.parent(call)
    function: cst.CSTNode | None = None
    while node is not None:
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            function = function or node
            positional = [*node.params.posonly_params, *node.params.params]
            named = [*positional, *node.params.kwonly_params]
            if any(param.name.value == root.value for param in named):
                block = facts.parent(node)
                owner = facts.parent(block) if block is not None else None
                if (
                    isinstance(node, cst.FunctionDef)
                    and positional
                    and positional[0].name.value == root.value
                    and isinstance(owner, cst.ClassDef)
                ):
                    return text, owner
                return text, node
        node = facts.parent(node)
    return text, function or facts.module


def _checked_for_keras2s_class(facts: Facts, call: cst.Call) -> bool:
    """Whether `call` runs under `if isinstance(<its receiver>, <Keras 2's or tf_keras's LossScaleOptimizer>):`."""
    receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
    node = facts.parent(call)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        test = node.test if isinstance(node, cst.If) else None
        if (
            isinstance(test, cst.Call)
            and called_name_of(test) == "isinstance"
            and len(test.args) == 2
            and cst.Module(body=[]).code_for_node(test.args[0].value) == receiver
            and any(name.startswith(_KERAS2_LSO_MODULES) for name in facts.qualified(test.args[1].value))
        ):
            return True
        node = facts.parent(node)
    return False


def _untraced_flow(facts: Facts, call: cst.Call) -> str | None:
    """Where unscaled gradients from an untraced optimizer go, if anywhere but its `apply_gradients`:
    clipping, a norm, accumulation or logging (that code's advice, not LSC113's, fits the call), else
    LSC107 for any other use after the call."""
    assign = facts.parent(call)
    line = facts.parent(assign) if assign is not None else None
    if not (
        cst.ensure_type(call.func, cst.Attribute).attr.value == "get_unscaled_gradients"
        and isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and line is not None
    ):
        return None
    target = assign.targets[0].target
    receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
    end = facts.position(line).end.line
    codes = [
        code
        for access in facts.scopes[call].accesses[target.value]
        if facts.position(access.node).start.line > end
        and (code := _use_problem(facts, access.node, receiver)) is not None
    ]
    return next((code for code in codes if code in _FLOW_CODES), codes[0] if codes else None)


def _unscaled_rewrite(
    facts: Facts, call: cst.Call, untraced: bool = False
) -> tuple[list[cst.CSTNode], cst.Name | None, cst.CSTNode]:
    """(uses to rename, the scaled-gradients name they take or None, what to drop); raises Unsafe.

    What to drop is the statement `g = opt.get_unscaled_gradients(g)`. For an `untraced` receiver, whose
    object the rewrite leaves as it is, it may also be an `if flag:` holding only that statement, or,
    where the statement has to stay (`g` bound elsewhere too, the argument not a name, the call inside
    `apply_gradients`), the call itself, which becomes its argument; and the gradients may pass through
    an all-reduce. A traced optimizer becomes Keras 3's class, so its loop keeps the narrow rule: what
    it leaves out stays on our class (LSC120), which also keeps TF 2.4's `iterations` and strategies.
    """
    receiver = cst.Module(body=[]).code_for_node(cst.ensure_type(call.func, cst.Attribute).value)
    assign = facts.parent(call)
    line = facts.parent(assign) if assign is not None else None
    block = facts.parent(line) if line is not None else None
    source = call.args[0].value
    if not (isinstance(assign, cst.Assign) and assign.value is call):
        if untraced and _inside_apply_gradients(facts, call, receiver) and not has_comment(call):
            return [], None, call  # `opt.apply_gradients(zip(opt.get_unscaled_gradients(g), vs))`
        raise Unsafe(w.UNSCALED_GRADIENTS_USED)
    if not (
        len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(block, (cst.IndentedBlock, cst.Module))
        and not has_comment(line.body[0])
    ):
        raise Unsafe(w.UNSCALED_GRADIENTS_USED)
    target = assign.targets[0].target.value
    source_name = source.value if isinstance(source, cst.Name) else None
    scope = facts.scopes[call]
    end = facts.position(line).end.line
    start = facts.position(line).start.line
    uses: list[cst.CSTNode] = []
    for access in scope.accesses[target]:
        position = facts.position(access.node).start.line
        if start <= position <= end:
            continue
        if position < start:
            if target != source_name:
                raise Unsafe(w.UNSCALED_GRADIENTS_USED)
            continue
        problem = _use_problem(facts, access.node, receiver, untraced)
        if problem is not None:
            raise Unsafe(problem)
        uses.append(access.node)
    if not uses:
        raise Unsafe(w.UNSCALED_GRADIENTS_USED)
    guard = line if len(block.body) > 1 else _lone_guard(facts, block)
    if guard is None and untraced and target == source_name:
        guard = line  # its block keeps `pass`
    if guard is not None and target == source_name:
        return uses, None, guard
    later = [
        a
        for a in scope.assignments[source_name or ""]
        if a.node is not None and facts.position(a.node).start.line >= start
    ]
    if guard is not None and isinstance(source, cst.Name) and not later and len(scope.assignments[target]) == 1:
        return uses, source, guard
    if not untraced:
        raise Unsafe(w.UNSCALED_GRADIENTS_USED)
    return [], None, call  # `g = scaled_g` in this branch, whatever the other branches bind


def _lone_guard(facts: Facts, block: cst.IndentedBlock | cst.Module) -> cst.If | None:
    """The `if flag:` whose whole body is `block`, to drop with it, if there is one.

    Only a test of a dotted name (`amp`, `params.use_amp`) or `isinstance` of two, no `else`, no comments
    and a statement beside it: dropping it then only skips reading a flag.
    """
    guard = facts.parent(block)
    outer = facts.parent(guard) if guard is not None else None
    test = guard.test if isinstance(guard, cst.If) else None
    tested: list[cst.CSTNode] = [test] if test is not None else []
    if isinstance(test, cst.Call) and called_name_of(test) == "isinstance" and len(test.args) == 2:
        tested = [arg.value if arg.keyword is None and not arg.star else arg for arg in test.args]
    if (
        isinstance(guard, cst.If)
        and guard.orelse is None
        and tested
        and all(isinstance(root_of(name), cst.Name) and isinstance(name, (cst.Name, cst.Attribute)) for name in tested)
        and isinstance(outer, (cst.IndentedBlock, cst.Module))
        and len(outer.body) > 1
        and not has_comment(guard)
    ):
        return guard
    return None


def _use_problem(facts: Facts, node: cst.CSTNode, receiver: str, reduces: bool = True) -> str | None:
    """None if this use of unscaled gradients only reaches `receiver.apply_gradients` (if `reduces`, maybe
    through an all-reduce bound to a name); else the warning code for where it goes."""
    if _inside_apply_gradients(facts, node, receiver):
        return None
    reduced = _all_reduced_into(facts, node) if reduces else None
    if reduced is not None:
        end = facts.position(reduced).end.line
        later = [
            access.node
            for access in facts.scopes[reduced].accesses[reduced.value]
            if facts.position(access.node).start.line > end
        ]
        if later and all(_inside_apply_gradients(facts, use, receiver) for use in later):
            return None
    return _gradient_flow(facts, node)


def _all_reduced_into(facts: Facts, node: cst.CSTNode) -> cst.Name | None:
    """The name bound to `hvd.allreduce(g)`, `[hvd.allreduce(x) for x in g]` or `ctx.all_reduce(op, g)`
    when `node` is that `g`, else None."""
    parent = facts.parent(node)
    value: cst.CSTNode | None = None
    if isinstance(parent, cst.Arg) and parent.value is node:
        call = facts.parent(parent)
        if isinstance(call, cst.Call) and _linear_reduce(call, parent):
            value = call
    elif isinstance(parent, cst.CompFor) and parent.iter is node and isinstance(parent.target, cst.Name):
        comp = facts.parent(parent)
        element = getattr(comp, "elt", None)
        if (
            isinstance(comp, (cst.ListComp, cst.GeneratorExp))
            and parent.inner_for_in is None
            and not parent.ifs
            and isinstance(element, cst.Call)
            and any(
                isinstance(arg.value, cst.Name)
                and arg.value.value == parent.target.value
                and _linear_reduce(element, arg)
                for arg in element.args
            )
        ):
            value = comp
    assign = facts.parent(value) if value is not None else None
    if (
        isinstance(assign, cst.Assign)
        and assign.value is value
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return assign.targets[0].target
    return None


def _linear_reduce(call: cst.Call, arg: cst.Arg) -> bool:
    """Whether `call` sums or averages `arg` across workers (a Horovod or tf.distribute all-reduce)."""
    name = called_name_of(call)
    if name not in _ALL_REDUCES or arg.star or arg.keyword is not None:
        return False
    others = [other for other in call.args if other is not arg]
    if name == "all_reduce" and others and others[0] is call.args[0] and others[0].keyword is None:
        others = others[1:]  # tf.distribute's `all_reduce(reduce_op, value)`: a ReduceOp is SUM or MEAN
    for other in others:
        if other.star or other.keyword is None:
            return False
        if other.keyword.value == "op":
            if not (isinstance(other.value, cst.Attribute) and other.value.attr.value in _LINEAR_REDUCE_OPS):
                return False
        elif other.keyword.value not in _LINEAR_REDUCE_KEYWORDS:
            return False
    return True


def _gradient_flow(facts: Facts, node: cst.CSTNode) -> str:
    """The warning code for where a use of unscaled gradients goes: clipping, a norm, accumulation, logging."""
    child, parent = node, facts.parent(node)
    calls: list[cst.Call] = []
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.Call) and child is not parent.func:
            calls.append(parent)
        elif isinstance(parent, _COMPREHENSIONS) and child is not getattr(parent, "elt", None):
            inside = calls_in(parent.elt if hasattr(parent, "elt") else parent.value)  # `[f(g) for g in gs]`
            if inside.adds:
                return w.GRADIENTS_ACCUMULATED
            calls.extend(inside.found)
        elif (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)) or (
            isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign)
        ):
            return w.GRADIENTS_ACCUMULATED
        child, parent = parent, facts.parent(parent)
    if isinstance(parent, cst.For) and child is parent.iter:  # `for g in grads: ...`
        inside = calls_in(parent.body)
        if inside.adds:
            return w.GRADIENTS_ACCUMULATED
        calls.extend(inside.found)
    return _flow_of_calls(calls) or w.UNSCALED_GRADIENTS_USED


def _inside_apply_gradients(facts: Facts, node: cst.CSTNode, receiver: str) -> bool:
    """Whether `node` is an argument of `receiver.apply_gradients`, as it is or through `zip`/`list`/`tuple`."""
    child, parent = node, facts.parent(node)
    while isinstance(parent, (cst.Arg, cst.Call)):
        if isinstance(parent, cst.Call):
            if child is parent.func:
                return False
            if (
                isinstance(parent.func, cst.Attribute)
                and parent.func.attr.value == "apply_gradients"
                and cst.Module(body=[]).code_for_node(parent.func.value) == receiver
            ):
                return True
            if called_name_of(parent) not in ("zip", "list", "tuple"):
                return False
        elif parent.star == "**" or child is not parent.value:
            return False
        child, parent = parent, facts.parent(parent)
    return False
