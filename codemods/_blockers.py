"""What blocked a trace: for a finding a tracing limit causes (`_warnings.BLOCKED_CODES`), the line that kept the
codemod from following the object to its construction, and the one edit that lets the next run rewrite it.

Asked only when findings are placed, of the warned node; the answer fills the finding's message (`Finding.detail`).
"""

from __future__ import annotations

import libcst as cst

from . import _warnings as w
from ._facts import Facts
from ._values import full_name
from .rules.custom_loop import traced_value

_OWN_NAME = "bind the LossScaleOptimizer once to a name of its own (`scaled_opt = LossScaleOptimizer(opt, ...)`) and "


def detail(facts: Facts, node: cst.CSTNode, code: str) -> tuple[str, ...]:
    """The finding's detail for a `BLOCKED_CODES` code at `node`: one sentence, or () where none is known."""
    if code not in w.BLOCKED_CODES:
        return ()
    if code == w.AMBIGUOUS_NAME:
        found = _ambiguous(facts, _root(node))
    elif code == w.LOOP_SHIM_NOTE:
        found = _first_untraced_loop(facts, node)
    else:
        receiver = node.value if isinstance(node, cst.Attribute) else _receiver(node)
        found = _untraced(facts, receiver) if receiver is not None else None
    return (found,) if found else ()


def _line(facts: Facts, node: cst.CSTNode) -> int:
    return facts.position(node).start.line


def _text(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _root(node: cst.CSTNode) -> cst.CSTNode:
    while isinstance(node, (cst.Attribute, cst.Call)):
        node = node.value if isinstance(node, cst.Attribute) else node.func
    return node


def _receiver(node: cst.CSTNode) -> cst.BaseExpression | None:
    return node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None


def _first_untraced_loop(facts: Facts, construction: cst.CSTNode) -> str | None:
    """For LSC120 at a LossScaleOptimizer site: why the first loop call not traced to a construction is not."""
    unscaled = None
    for call in facts.loops:
        receiver = _receiver(call)
        if receiver is not None and traced_value(facts, receiver) is None:
            found = _untraced(facts, receiver)
            if found:
                return f"The loop call at line {_line(facts, call)} is not traced: {found}"
        elif unscaled is None and cst.ensure_type(call.func, cst.Attribute).attr.value == "get_unscaled_gradients":
            unscaled = call
    if unscaled is None:
        return None
    return (
        f"The loop is traced, but the unscaled gradients of the call at line {_line(facts, unscaled)} are not a name "
        "of scaled gradients that only `apply_gradients` reads (a finding there says where they go, if anywhere). To "
        "unlock it, bind the scaled gradients to a name (`scaled = tape.gradient(...)`), unscale that name "
        "(`grads = opt.get_unscaled_gradients(scaled)`) and pass `grads` only to `apply_gradients`."
    )


def _untraced(facts: Facts, receiver: cst.BaseExpression) -> str | None:
    """Why `receiver` is not traced to its construction, and the edit that lets it be."""
    if isinstance(receiver, cst.Name):
        return _rebound(facts, receiver)
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name):
        if receiver.value.value == "self":
            return _self_attribute(facts, receiver)
        if receiver.attr.value == "optimizer":
            return _model_optimizer(facts, receiver.value)
    if isinstance(receiver, cst.Call) and full_name(receiver) == "super":
        return (
            "`super()` is the base class of this class, which the codemod does not follow. If it is not a "
            "loss-scale optimizer, nothing here needs changing: mark the line `# lossscale-compat: ignore`."
        )
    return (
        f"`{_text(receiver)}` is not a name, a `self` attribute or a model's `optimizer`. To unlock it, "
        + _OWN_NAME
        + "call the loop's methods on that name."
    )


def _ambiguous(facts: Facts, name: cst.CSTNode) -> str | None:
    """For LSC101: the lines that bind the name's root, where more than one does."""
    lines = sorted({_line(facts, binding.node) for binding in _bindings(facts, name) if binding.node is not None})
    if len(lines) < 2 or not isinstance(name, cst.Name):
        return None
    return (
        f"`{name.value}` is bound at lines {', '.join(map(str, lines))}. To unlock it, import the TF 2.4 module or "
        "name once under this name, and bind the other values under other names."
    )


def _bindings(facts: Facts, name: cst.CSTNode) -> list:
    """Every binding a read `name` may see."""
    scope = facts.scopes.get(name)
    accesses = [a for a in scope.accesses[name] if a.node is name] if scope is not None else []
    return list(accesses[0].referents) if len(accesses) == 1 else []


def _rebound(facts: Facts, name: cst.CSTNode) -> str | None:
    """For a name: the binding that is not one plain statement of one body (another, a parameter, a branch)."""
    if not isinstance(name, cst.Name):
        return None
    referents = _bindings(facts, name)
    if not referents:
        return None
    owner = referents[0].scope
    bindings = sorted(
        (b for b in owner.assignments[name.value] if b.node is not None), key=lambda b: _line(facts, b.node)
    )
    param = next((b.node for b in bindings if isinstance(b.node, cst.Param)), None)
    if len(bindings) == 1 and param is not None:
        return (
            f"`{name.value}` is a parameter (line {_line(facts, param)}), bound by callers. To unlock it, build the "
            "LossScaleOptimizer in this module and read it here (a module name, or `self` set once) instead of "
            "passing it in."
        )
    if len(bindings) > 1:
        lines = ", ".join(str(_line(facts, b.node)) for b in bindings[1:])
        return (
            f"`{name.value}` is bound again at line {lines} (first at line {_line(facts, bindings[0].node)}), "
            f"not only by plain statements of one body{_unfollowed(facts, [b.node for b in bindings])}. To unlock it, "
            + _OWN_NAME
            + "read only that name."
        )
    value = facts.assigned_value(bindings[0].node) if bindings and isinstance(bindings[0].node, cst.Name) else None
    if value is not None:
        return (
            f"`{name.value}` is bound at line {_line(facts, bindings[0].node)} to `{_text(value)[:60]}`, which the "
            "codemod does not follow (another module's function, or a value it cannot read). To unlock it, build "
            "the LossScaleOptimizer in this module (or in a function of it that returns it) and bind it there."
        )
    return None


def _unfollowed(facts: Facts, targets: list) -> str:
    """For the targets of a name's or attribute's bindings: the first value assigned there that the codemod does not
    follow (`Facts.possible_values`), as a clause, or ""."""
    for target in targets:
        parent = facts.parent(target)
        assign = facts.parent(parent) if isinstance(parent, cst.AssignTarget) else None
        value = assign.value if isinstance(assign, cst.Assign) else None
        if isinstance(value, (cst.Name, cst.Attribute)) and facts.possible_values(value) is None:
            return f", and the codemod does not follow `{_text(value)[:60]}` (line {_line(facts, target)})"
    return ""


def _self_attribute(facts: Facts, read: cst.Attribute) -> str:
    """For `self.x`: its other bindings, or why the one is not followed."""
    attribute = read.attr.value
    stores = sorted(facts.attribute_stores(attribute), key=lambda node: _line(facts, node))
    unlock = (
        f"To unlock it, set `self.{attribute}` once, to the LossScaleOptimizer itself, and keep the plain optimizer "
        "(or the other value) under another attribute."
    )
    if len(stores) > 1:
        lines = ", ".join(str(_line(facts, store)) for store in stores)
        return f"`.{attribute}` is set at lines {lines}{_unfollowed(facts, stores)}. {unlock}"
    if not stores:
        return (
            f"`self.{attribute}` is never set in this module (a base class, `compile` of a Keras `Model`, sets it). To "
            "unlock it, rewrite the loop by hand: `get_scaled_loss` becomes `scale_loss`, and `apply_gradients` takes "
            "the scaled gradients and unscales them itself."
            if attribute == "optimizer"
            else f"`self.{attribute}` is never set in this module. {unlock}"
        )
    if facts.method_class(stores[0]) is not facts.method_class(read) or full_name(stores[0]) != f"self.{attribute}":
        return f"`.{attribute}` is set at line {_line(facts, stores[0])}, not on `self` in this class. {unlock}"
    target = facts.parent(stores[0])
    assign = facts.parent(target) if target is not None else None
    value = assign.value if isinstance(assign, cst.Assign) else None
    if attribute != "optimizer" and isinstance(value, cst.Name):
        why = _rebound(facts, value)
        if why:
            return f"`self.{attribute}` is set at line {_line(facts, stores[0])} to `{value.value}`, and {why}"
    if attribute != "optimizer":
        return f"`self.{attribute}` is set at line {_line(facts, stores[0])} to a value not traced. {unlock}"
    return (
        f"`self.{attribute}` is set at line {_line(facts, stores[0])} in a class with a base, whose `compile` may set "
        f"`{attribute}` too. To unlock it, keep the LossScaleOptimizer under another attribute "
        "(`self.loss_scale_optimizer`)."
    )


def _model_optimizer(facts: Facts, model: cst.Name) -> str:
    """For `model.optimizer`: the use of `model` that is not one `compile`, a call or an attribute read."""
    unlock = (
        f"To unlock it, compile `{model.value}` once in this module with the LossScaleOptimizer, or read the "
        "LossScaleOptimizer's own name in the loop."
    )
    referents = _bindings(facts, model)
    if len(referents) != 1:
        return f"`{model.value}` is bound more than once. {unlock}"
    compiles = []
    for access in referents[0].references:
        parent = facts.parent(access.node)
        if isinstance(parent, cst.Call) and parent.func is access.node:
            continue
        if not (isinstance(parent, cst.Attribute) and parent.value is access.node):
            return f"`{model.value}` is passed on or stored at line {_line(facts, access.node)}. {unlock}"
        if parent.attr.value == "compile":
            compiles.append(parent)
        elif parent in facts.attribute_stores("optimizer"):
            return f"`{model.value}.optimizer` is set at line {_line(facts, parent)}. {unlock}"
    if len(compiles) > 1:
        lines = ", ".join(str(_line(facts, node)) for node in compiles)
        return f"`{model.value}` is compiled at lines {lines}. {unlock}"
    return f"`{model.value}` is not compiled with a LossScaleOptimizer of this module. {unlock}"
