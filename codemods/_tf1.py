"""What kind of optimizer or loss-scale consumer a TF 2.4 call sees: Keras, TF1 (`tf.compat.v1.train`) or unknown.

TF 2.4's `enable_mixed_precision_graph_rewrite` dispatched at run time on the optimizer's kind, and its
`LossScale` objects fed both Keras and TF1 code. Today the TF1 half lives on only under `tf.compat.v1`
(`tf.compat.v1.mixed_precision.*`, still in TF 2.21), which rejects Keras optimizers and lossscale_compat's
objects, so the codemod keeps TF1 code there and rewrites only what is provably Keras.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import libcst as cst

from lossscale_compat import _mapping

if TYPE_CHECKING:
    from ._facts import Facts

KERAS = "keras"
TF1 = "tf1"

TF1_MODULE = "tensorflow.compat.v1.mixed_precision"
"""Where TF 2.21 still exports TF 2.4's TF1 loss-scaling names (checked on TF 2.15 and 2.21)."""
_TF1_OPTIMIZER_MODULES = frozenset({"tensorflow.compat.v1.train", "tensorflow.train"})
_KERAS_OPTIMIZER_MODULES = frozenset(
    {
        "keras.optimizers",
        "keras.optimizers.legacy",
        "tf_keras.optimizers",
        "tf_keras.optimizers.legacy",
        "tensorflow.keras.optimizers",
        "tensorflow.keras.optimizers.legacy",
        "tensorflow.keras.optimizers.experimental",
        "tensorflow.compat.v1.keras.optimizers",
        "tensorflow.compat.v2.keras.optimizers",
        "tensorflow.optimizers",
    }
)
# Calls whose result is an optimizer of the same kind as their first argument: TF 2.4's graph rewrite, and
# Horovod's wrapper (a `tf.compat.v1.train.Optimizer` subclass for a TF1 optimizer, Horovod's Keras one for Keras).
_KIND_PRESERVING = frozenset({"enable_mixed_precision_graph_rewrite", "horovod.tensorflow.DistributedOptimizer"})
_TF1_CONSUMER = "MixedPrecisionLossScaleOptimizer"
_RUN_TIME_REWRITES = frozenset(row.fallback for row in _mapping.RENAMES if row.rule == "graph_rewrite")


def class_kind(facts: Facts, name: str, seen: set[str] | None = None) -> str | None:
    """KERAS or TF1 for a qualified class name (a module-level class by its bases), else None."""
    module, _, short = name.rpartition(".")
    if module in _TF1_OPTIMIZER_MODULES and short.endswith("Optimizer"):
        return TF1
    if module in _KERAS_OPTIMIZER_MODULES:
        return KERAS
    if module or name in (seen or set()):
        return None
    classes = [st for st in facts.module.body if isinstance(st, cst.ClassDef) and st.name.value == name]
    if len(classes) != 1 or len(facts.global_scope[name]) != 1:
        return None
    kinds = {
        kind_of_class_expr(facts, base.value, (seen or set()) | {name})
        for base in classes[0].bases
        if base.keyword is None
    }
    return kinds.pop() if len(kinds) == 1 else None


def kind_of_class_expr(facts: Facts, node: cst.BaseExpression, seen: set[str]) -> str | None:
    name = facts.qualified_one(node)
    return class_kind(facts, name, seen) if name is not None else None


def call_kind(facts: Facts, node: cst.BaseExpression, skip: frozenset[cst.CSTNode] = frozenset()) -> str | None:
    """KERAS or TF1 when `node` constructs an optimizer of a provable kind, else None."""
    if not isinstance(node, cst.Call):
        return None
    name = facts.qualified_one(node.func)
    if name is None:
        return None
    if name.rpartition(".")[2] == _TF1_CONSUMER and name.startswith("tensorflow."):
        return TF1  # it takes only a TF1 optimizer, and is one
    if (
        (name in _KIND_PRESERVING or (name.startswith("tensorflow.") and name.rpartition(".")[2] in _KIND_PRESERVING))
        and node.args
        and not node.args[0].star
    ):
        return optimizer_kind(facts, node.args[0].value, node, skip)
    return class_kind(facts, name)


def optimizer_kind(
    facts: Facts, node: cst.BaseExpression, call: cst.Call, skip: frozenset[cst.CSTNode] = frozenset()
) -> str | None:
    """KERAS or TF1 when the optimizer `node` (an argument of `call`) is provably of one kind, else None.

    A call is judged by its class (through kind-preserving wrappers); a plain name by every assignment of
    it in its scope (each a call of the same kind, or `call` or an enclosing wrapper rebinding the name);
    anything else (a parameter, an attribute) is unknown.
    """
    skip = skip | {call}
    if isinstance(node, cst.Call):
        return call_kind(facts, node, skip)
    if not isinstance(node, cst.Name):
        return None
    scope = facts.scopes.get(node)
    accesses = [a for a in scope.accesses[node] if a.node is node] if scope is not None else []
    if len(accesses) != 1 or not accesses[0].referents:
        return None
    kinds = set()
    for binding in accesses[0].referents:
        target = getattr(binding, "node", None)
        assign_target = facts.parent(target) if isinstance(target, cst.Name) else None
        assign = facts.parent(assign_target) if isinstance(assign_target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            return None
        if assign.value in skip:
            continue
        kinds.add(call_kind(facts, assign.value, skip))
    return kinds.pop() if len(kinds) == 1 else None


def is_tf1_consumer(facts: Facts, call: cst.Call, kept_for_tf1: Collection[cst.Call]) -> bool:
    """Whether `call` is TF 2.4's v1 `MixedPrecisionLossScaleOptimizer`, a graph rewrite kept for TF1, or
    lossscale_compat's run-time graph rewrite (which hands a TF1 optimizer to TF1's rewrite, as migrated before)."""
    if call in kept_for_tf1:
        return True
    name = facts.qualified_one(call.func)
    return name is not None and (name.rpartition(".")[2] == _TF1_CONSUMER or name in _RUN_TIME_REWRITES)


def _loss_scale_argument_of(facts: Facts, node: cst.CSTNode) -> cst.Call | None:
    """The call that takes `node` as its `loss_scale` argument (second positional, or by keyword)."""
    arg = facts.parent(node)
    call = facts.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or not isinstance(arg, cst.Arg) or arg.star:
        return None
    if arg.keyword is not None:
        return call if arg.keyword.value == "loss_scale" else None
    return call if call.args.index(arg) == 1 else None


def only_tf1_consumers(facts: Facts, call: cst.Call, kept_for_tf1: Collection[cst.Call]) -> bool:
    """Whether the LossScale object `call` builds reaches TF1 consumers only (and at least one).

    The object may be the `loss_scale` argument of such a consumer, or be assigned once to a plain name
    whose every use is such an argument, a call of the object, or a method or attribute of it.
    """
    consumer = _loss_scale_argument_of(facts, call)
    if consumer is not None:
        return is_tf1_consumer(facts, consumer, kept_for_tf1)
    assign = facts.parent(call)
    if not (
        isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
    ):
        return False
    binding = facts.single_assignment(assign.targets[0].target)
    if binding is None:
        return False
    consumers = 0
    for access in binding.references:
        use = access.node
        user = facts.parent(use)
        if isinstance(user, cst.Attribute) and user.value is use:
            continue
        if isinstance(user, cst.Call) and user.func is use:
            continue
        consumer = _loss_scale_argument_of(facts, use)
        if consumer is None or not is_tf1_consumer(facts, consumer, kept_for_tf1):
            return False
        consumers += 1
    return consumers > 0


def escapes(facts: Facts, node: cst.CSTNode, follow: bool = True) -> bool:
    """Whether the object `node` evaluates to leaves this module's sight (issue 9's gap H).

    It escapes when returned or yielded, stored on an attribute of anything but `self`, or passed to a
    call other than `.compile(...)`/`.fit(...)`; through one function-local name, any use that does so.
    """
    parent = facts.parent(node)
    if isinstance(parent, (cst.Return, cst.Yield)):
        return True
    if isinstance(parent, cst.Arg):
        outer = facts.parent(parent)
        return not (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Attribute)
            and outer.func.attr.value in ("compile", "fit")
        )
    if not (isinstance(parent, cst.Assign) and parent.value is node):
        return False
    for assign_target in parent.targets:
        target = assign_target.target
        if isinstance(target, cst.Attribute):
            if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
                return True
        elif isinstance(target, cst.Name) and follow:
            scope = facts.scopes.get(target)
            if scope is None or scope is facts.global_scope:
                continue
            if any(
                escapes(facts, access.node, follow=False)
                for access in scope.accesses[target.value]
                if not _inside(facts, access.node, node)
            ):  # `opt = LSO(opt)` passes the inner one
                return True
    return False


def _inside(facts: Facts, node: cst.CSTNode | None, ancestor: cst.CSTNode) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = facts.parent(node)
    return False


def builds_shim_optimizer(facts: Facts) -> bool:
    """Whether this module names lossscale_compat's LossScaleOptimizer or KerasLossScaleOptimizer: a call, or the class
    held as a value to be called elsewhere (`wrapper_class = lossscale_compat.KerasLossScaleOptimizer`)."""
    for node in facts.scanned:
        if isinstance(node, (cst.Name, cst.Attribute)):
            short = node.attr.value if isinstance(node, cst.Attribute) else node.value
            if short in ("LossScaleOptimizer", "KerasLossScaleOptimizer") and (
                facts.qualified(node) & _mapping.SHIM_OPTIMIZERS
            ):
                return True
    return False
