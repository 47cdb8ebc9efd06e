"""Keras 3 differences a migrated file reads: `iterations` (read or set), `get_gradients`, checkpointed loss-scale state
and TF 2.4's own class name kept by a loop on TF 2.4's methods.

Each function is given the module's facts (and the edits decided, or the calls rewritten) and returns the warnings to
give, or the new edits of the wraps that move to our class.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

import libcst as cst

from .. import _warnings as w
from .._edits import FixedFactor, ShimWrap, SiteEdit, Wrap
from .._facts import Facts
from .._values import Expr
from . import custom_loop
from .custom_loop import Edits, Warnings
from .optimizer_class import named_shim, on_shim

# TF 2.4's non-experimental class: today the same spelling names Keras 3's class, which lacks TF 2.4's loop methods.
_FINAL_CLASS = "tensorflow.keras.mixed_precision.LossScaleOptimizer"

_CHECKPOINT_CLASSES = frozenset({"Checkpoint", "CheckpointManager"})
_CHECKPOINT_MODULES = frozenset({"tensorflow.train", "tensorflow.compat.v2.train", "tensorflow.compat.v1.train"})


def _keras3_wraps(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> set[cst.Call]:
    """The dynamic wraps decided onto the target's own class (not lossscale_compat's)."""
    return {
        edit.call
        for edit in decisions.values()
        if type(edit) is Wrap
        and edit.scale.dynamic
        and edit.new_name is not None
        and not edit.new_name.startswith("lossscale_compat.")
    }


def _shim_wraps(decisions: Mapping[Expr, SiteEdit]) -> set[cst.Call]:
    """The wraps decided onto lossscale_compat's class, which counts skipped steps as TF 2.4's did."""
    wraps = {edit.wrap if type(edit) is ShimWrap else edit for edit in decisions.values()}
    return {
        wrap.call
        for wrap in wraps
        if isinstance(wrap, Wrap) and wrap.new_name is not None and wrap.new_name.startswith("lossscale_compat.")
    }


def _enclosing_class(facts: Facts, node: cst.CSTNode) -> cst.ClassDef | None:
    """The class whose method (directly) holds `node`, if any."""
    parent = facts.parent(node)
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        parent = facts.parent(parent)
    block = facts.parent(parent) if parent is not None else None
    owner = facts.parent(block) if block is not None else None
    return owner if isinstance(owner, cst.ClassDef) else None


def holders(facts: Facts, calls: set[cst.Call]) -> tuple[set[cst.Name], set[tuple[cst.ClassDef, str]]]:
    """The name targets and the (class, attribute) of `self.<attribute>` targets the `calls` are assigned to."""
    names: set[cst.Name] = set()
    attributes: set[tuple[cst.ClassDef, str]] = set()
    for call in calls:
        assign = facts.parent(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call):
            continue
        for assign_target in assign.targets:
            target = assign_target.target
            if isinstance(target, cst.Name):
                names.add(target)
            elif (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == "self"
                and (owner := _enclosing_class(facts, target)) is not None
            ):
                attributes.add((owner, target.attr.value))
    return names, attributes


def holds(facts: Facts, node: cst.CSTNode, names: set[cst.Name], attributes: set[tuple[cst.ClassDef, str]]) -> bool:
    """Whether `node` reads a name bound (in some branch) to one of `names`, or `self.<attribute>` of the class."""
    if isinstance(node, cst.Name):
        scope = facts.scopes.get(node)
        accesses = [a for a in scope.accesses[node] if a.node is node] if scope is not None else []
        return any(getattr(binding, "node", None) in names for access in accesses for binding in access.referents)
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        owner = _enclosing_class(facts, node)
        return owner is not None and (owner, node.attr.value) in attributes
    return False


def _compiled_receivers(facts: Facts, calls: set[cst.Call], names: set[cst.Name]) -> set[str]:
    """The receivers' text of `.compile(...)` calls given one of `calls` (inline, or by a name) as optimizer."""
    receivers = set()
    for node in facts.scanned:
        if not (
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile"
        ):
            continue
        for position, arg in enumerate(node.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if arg.star or not (keyword == "optimizer" or (keyword is None and position == 0)):
                continue
            if arg.value in calls or holds(facts, arg.value, names, set()):
                receivers.add(cst.Module(body=[]).code_for_node(node.func.value))
    return receivers


def _mixed_policy_set(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> bool:
    """Whether a site moved to the target's own policy API names `'mixed_float16'` (set_policy, Policy)."""
    for site, edit in decisions.items():
        name = getattr(edit, "new_name", None) or getattr(edit, "name", None)
        call = facts.parent(site)
        if (
            isinstance(name, str)
            and not name.startswith("lossscale_compat")
            and isinstance(call, cst.Call)
            and call.func is site
            and any(isinstance(arg.value, cst.SimpleString) and "mixed_float16" in arg.value.value for arg in call.args)
        ):
            return True
    return False


def iterations_read_warnings(
    facts: Facts, decisions: Mapping[Expr, SiteEdit], migrated: Collection[cst.CSTNode]
) -> Warnings:
    """Notes each `.iterations` read of an optimizer moved to Keras 3's class (LSC142): skipped steps uncounted.

    `migrated` are the LossScaleOptimizer calls rewritten (a wrap refused when spelled is not one).
    """
    calls = _keras3_wraps(facts, decisions) & set(migrated)
    mixed_policy = _mixed_policy_set(facts, decisions)
    if not calls and not mixed_policy:
        return []
    warnings: Warnings = []
    names, attributes = holders(facts, calls)
    compiled = _compiled_receivers(facts, calls, names)
    shim_calls = _shim_wraps(decisions)
    compiled_on_shim = _compiled_receivers(facts, shim_calls, holders(facts, shim_calls)[0])
    for node in facts.scanned:
        if not (isinstance(node, cst.Attribute) and node.attr.value == "iterations"):
            continue
        if isinstance(facts.parent(node), (cst.AssignTarget, cst.AugAssign, cst.Del)):
            continue
        receiver = node.value
        model = cst.Module(body=[]).code_for_node(receiver.value) if isinstance(receiver, cst.Attribute) else None
        model_optimizer = (
            isinstance(receiver, cst.Attribute)
            and receiver.attr.value == "optimizer"
            and (model in compiled or (mixed_policy and model not in compiled_on_shim))
        )
        if model_optimizer or holds(facts, receiver, names, attributes):
            warnings.append((node, w.ITERATIONS_READ_NOTE))
    return warnings


def get_gradients_warnings(facts: Facts, loops: Sequence[cst.Call], migrated: Collection[cst.CSTNode]) -> Warnings:
    """Warns `get_gradients` on an untraced receiver whose loop shows it is a loss-scale optimizer (LSC143)."""
    keys = {
        custom_loop.receiver_key(facts, call, cst.ensure_type(call.func, cst.Attribute).value)
        for call in loops
        if not custom_loop.is_migrated_optimizer(facts, cst.ensure_type(call.func, cst.Attribute).value, migrated)
    }
    warnings: Warnings = []
    for call in facts.applies:
        func = cst.ensure_type(call.func, cst.Attribute)
        if func.attr.value == "get_gradients" and custom_loop.receiver_key(facts, call, func.value) in keys:
            warnings.append((call, w.GET_GRADIENTS_GONE))
    return warnings


def _checkpoint_args(facts: Facts) -> Iterator[cst.BaseExpression]:
    """The argument values of `tf.train.Checkpoint(...)`/`CheckpointManager(...)` calls."""
    for node in facts.scanned:
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)) not in (
            _CHECKPOINT_CLASSES
        ):
            continue  # a qualified name only for the calls that may be one
        name = facts.called_name(node)
        module, _, short = (name or "").rpartition(".")
        if short in _CHECKPOINT_CLASSES and module in _CHECKPOINT_MODULES:
            yield from (arg.value for arg in node.args if not arg.star)


def _getter_attribute(facts: Facts, value: cst.BaseExpression) -> str | None:
    """For `self.getter()`, where the class's `getter` only returns `self.<attribute>`: that attribute."""
    if not (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Name)
        and value.func.value.value == "self"
    ):
        return None
    owner = _enclosing_class(facts, value)
    for statement in owner.body.body if owner is not None else ():
        if not (isinstance(statement, cst.FunctionDef) and statement.name.value == value.func.attr.value):
            continue
        body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
        line = body[0] if len(body) == 1 else None
        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
        returned = small.value if isinstance(small, cst.Return) else None
        if (
            isinstance(returned, cst.Attribute)
            and isinstance(returned.value, cst.Name)
            and returned.value.value == "self"
        ):
            return returned.attr.value
    return None


def checkpointed_on_shim(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> Edits:
    """New edits that build a dynamic wrap a `tf.train.Checkpoint` tracks with our class (LSC144): TF 2.4's state
    names."""
    wraps = _keras3_wraps(facts, decisions)
    checkpointed = checkpointed_calls(facts, wraps) if wraps else set()
    return {
        site: on_shim(edit, w.CHECKPOINT_SHIM_NOTE)
        for site, edit in decisions.items()
        if isinstance(edit, Wrap) and edit.call in checkpointed
    }


def iterations_set_on_shim(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> Edits:
    """New edits that build a wrap whose `iterations` the file sets (`opt.iterations = step`) with our class (LSC156):
    Keras 3's optimizers have no `iterations` setter, TF 2.4's adopted the variable. Per optimizer: those the store's
    receiver may hold (`Facts.possible_values`)."""
    built = {
        edit.call: site
        for site, edit in decisions.items()
        if isinstance(edit, FixedFactor)
        or (type(edit) is Wrap and edit.new_name is not None and not edit.new_name.startswith("lossscale_compat."))
    }
    edits: Edits = {}
    for node in facts.scanned if built else ():
        store = facts.parent(node)
        if not (
            isinstance(node, cst.Attribute)
            and node.attr.value == "iterations"
            and isinstance(store, (cst.AssignTarget, cst.AugAssign))
            and store.target is node
        ):
            continue
        for value in facts.possible_values(node.value) or ():
            site = built.get(value) if isinstance(value, cst.Call) else None
            edit = decisions.get(site) if site is not None else None
            if site is not None and isinstance(edit, (Wrap, FixedFactor)):
                edits[site] = on_shim(edit, w.ITERATIONS_SET_SHIM_NOTE)
    return edits


def checkpointed_calls(facts: Facts, calls: set[cst.Call]) -> set[cst.Call]:
    """Those of `calls` (optimizer constructions) whose optimizer a `tf.train.Checkpoint`/`CheckpointManager` of this
    file tracks: the call itself, a name bound to it, a `self.x` assigned it, or a getter of that `self.x`."""
    args = list(_checkpoint_args(facts)) if calls else []
    found = set()
    for call in calls if args else ():
        names, attributes = holders(facts, {call})
        if any(
            value is call
            or holds(facts, value, names, attributes)
            or (
                (attribute := _getter_attribute(facts, value)) is not None
                and (_enclosing_class(facts, value), attribute) in attributes
            )
            for value in args
        ):
            found.add(call)
    return found


def final_class_on_shim(facts: Facts, kept: Collection[cst.Call]) -> Edits:
    """Each use of TF 2.4's `tf.keras.mixed_precision.LossScaleOptimizer` as our class (LSC145), in a file whose loop
    `kept` calls (TF 2.4's `get_scaled_loss`, `get_unscaled_gradients`, `get_gradients`) Keras 3's class would lack.
    An `isinstance`/`issubclass` of it stays: TF 2.4's final class answered for every loss-scale optimizer, as the
    target's class does (ours subclass it), and so does the check the codemod writes for the experimental class."""
    if not kept:
        return {}
    edits: Edits = {}
    for node in facts.scanned:
        if (
            isinstance(node, (cst.Name, cst.Attribute))
            and not isinstance(facts.parent(node), (cst.Attribute, cst.ImportAlias))
            and facts.qualified_one(node) == _FINAL_CLASS
            and not facts.class_checked(node)
            and not _built_out_of_loops_reach(facts, node)
        ):
            edits[node] = named_shim(w.FINAL_CLASS_SHIM_NOTE)
    return edits


def _built_out_of_loops_reach(facts: Facts, node: cst.CSTNode) -> bool:
    """Whether `node` is the class a call builds an optimizer with that no loop can receive (per optimizer)."""
    call = facts.parent(node)
    return isinstance(call, cst.Call) and call.func is node and custom_loop.out_of_loops_reach(facts, call)
