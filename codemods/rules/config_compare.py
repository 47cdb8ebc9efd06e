"""Regression tests: `a.get_config() == b.get_config()` of two loss-scale optimizers -> `assert_config_equivalent`.

A receiver is known to be a loss-scale optimizer when it is a name bound once, in its scope, to a call of one of
`_mapping.LOSS_SCALE_OPTIMIZER_CLASSES` (TF 2.4's, the modern or lossscale_compat's). Two known receivers compared in
`assert x == y` (no message) or `self.assertEqual(x, y)` are rewritten; any other comparison of a known one is warned
and left alone; a comparison of two objects not traced to their construction (loop variables, parameters,
attributes) in a module that builds a loss-scale optimizer is warned (LSC152): they may be ones. A comparison with an
object known to be something else (a construction, or a name bound to one, of a layer, a model, a plain optimizer) is
not touched.
"""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping

from .. import _warnings as w
from .._edits import AssertionCall, Draft, Plan
from .._facts import Facts
from .._values import Expr, Unsafe, dotted_expression


def plan_comparisons(facts: Facts) -> Plan:
    """Rewrites or warns each `==`/`!=` comparison, or unittest equality assertion, of two `get_config()` reads."""
    out = Draft()
    seen: set[cst.CSTNode] = set()
    reads = set(facts.config_reads)
    builds: list[bool] = []  # whether the file builds a loss-scale optimizer, once asked
    for read in facts.config_reads:
        compared = _config_comparison(facts, read, reads)
        if compared is None or compared[0] in seen:
            continue
        node, left, right = compared
        seen.add(node)
        known = [_known_loss_scale_optimizer(facts, read) for read in (left, right)]
        if not any(known):
            if all(_untraced(facts, read) for read in (left, right)) and _builds_one(facts, builds):
                out.warn(node, w.CONFIG_COMPARED_UNTRACED)  # they may be loss-scale optimizers
            continue  # else nothing says these are loss-scale optimizers: not ours to touch
        statement = _rewritable(facts, node) if all(known) else None
        if statement is None:
            out.warn(node, w.CONFIG_COMPARED)
            continue
        receivers = [cst.ensure_type(read.func, cst.Attribute).value for read in (left, right)]
        try:
            func = _spell_assertion(facts, node)
        except Unsafe as unsafe:
            out.warn(node, unsafe.code)
            continue
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        call = cst.Call(func=func, args=[cst.Arg(receivers[0], comma=comma), cst.Arg(receivers[1])])
        out.replace[statement] = AssertionCall(call)
        out.warn(node, w.CONFIG_EQUIVALENCE_NOTE)
        out.needed_imports.append((_mapping.CONFIG_ASSERTION.rpartition(".")[0], None, None))
    return out.frozen()


def _config_comparison(
    facts: Facts, read: cst.Call, reads: set[cst.Call]
) -> tuple[cst.CSTNode, cst.Call, cst.Call] | None:
    """(The comparison or assertion call, its two `get_config()` reads) when `read` is one of two compared."""
    parent = facts.parent(read)
    if isinstance(parent, cst.ComparisonTarget):
        parent = facts.parent(parent)
    if isinstance(parent, cst.Comparison):
        if len(parent.comparisons) != 1 or not isinstance(parent.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            return None
        sides = (parent.left, parent.comparisons[0].comparator)
        if all(side in reads for side in sides):
            return parent, cst.ensure_type(sides[0], cst.Call), cst.ensure_type(sides[1], cst.Call)
        return None
    call = facts.parent(parent) if isinstance(parent, cst.Arg) else None
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value.startswith("assert")
        and len(call.args) >= 2
        and all(arg.value in reads for arg in call.args[:2])
    ):
        return call, cst.ensure_type(call.args[0].value, cst.Call), cst.ensure_type(call.args[1].value, cst.Call)
    return None


def _known_loss_scale_optimizer(facts: Facts, read: cst.Call) -> bool:
    """Whether `read`'s receiver is a name bound once, in its scope, to a loss-scale optimizer's construction."""
    receiver = cst.ensure_type(read.func, cst.Attribute).value
    if not isinstance(receiver, cst.Name):
        return False
    value = facts.assigned_value(receiver)
    return value is not None and facts.called_name(value) in _mapping.LOSS_SCALE_OPTIMIZER_CLASSES


def _untraced(facts: Facts, read: cst.Call) -> bool:
    """Whether `read`'s receiver is neither a construction nor a name bound once, in its scope, by a plain
    assignment (so a loop variable, a parameter, an attribute, an item, a name bound more than once): what it holds
    cannot be read here."""
    receiver = cst.ensure_type(read.func, cst.Attribute).value
    if isinstance(receiver, cst.Call):
        return False
    return not isinstance(receiver, cst.Name) or facts.assigned_value(receiver) is None


def _builds_one(facts: Facts, builds: list[bool]) -> bool:
    """Whether the module calls a loss-scale optimizer class (`_mapping.LOSS_SCALE_OPTIMIZER_CLASSES`); asked once,
    the answer kept in `builds`."""
    if not builds:
        builds.append(
            any(
                isinstance(node, cst.Call) and facts.called_name(node) in _mapping.LOSS_SCALE_OPTIMIZER_CLASSES
                for node in facts.scanned
            )
        )
    return builds[0]


def _rewritable(facts: Facts, node: cst.CSTNode) -> cst.CSTNode | None:
    """The statement or call to replace with the assertion: `assert x == y` with no message, or
    `self.assertEqual(x, y)` as a statement of its own; None for anything else (`!=`, `assert not`, an `if`)."""
    if isinstance(node, cst.Comparison):
        statement = facts.parent(node)
        if (
            isinstance(node.comparisons[0].operator, cst.Equal)
            and isinstance(statement, cst.Assert)
            and statement.test is node
            and statement.msg is None
        ):
            return statement
        return None
    call = cst.ensure_type(node, cst.Call)
    statement = facts.parent(call)
    method = cst.ensure_type(call.func, cst.Attribute)
    if (
        method.attr.value in _mapping.CONFIG_ASSERTION_METHODS
        and isinstance(method.value, cst.Name)
        and method.value.value == "self"
        and len(call.args) == 2
        and all(arg.keyword is None and not arg.star for arg in call.args)
        and isinstance(statement, cst.Expr)
    ):
        return call
    return None


def _spell_assertion(facts: Facts, site: cst.CSTNode) -> Expr:
    """`lossscale_compat.testing.assert_config_equivalent` (its import added by the caller); raises Unsafe where
    `lossscale_compat` names something else here."""
    module = _mapping.CONFIG_ASSERTION.rpartition(".")[0]
    top = module.partition(".")[0]
    scope = facts.scopes.get(site) or facts.global_scope
    if top in facts.global_scope and facts.bindings.get(top, ("",))[0] != top:
        raise Unsafe(w.NAME_CLASH)
    if top in scope and set(scope[top]) != set(facts.global_scope[top]):
        raise Unsafe(w.NAME_CLASH)
    return dotted_expression(_mapping.CONFIG_ASSERTION)
