"""The tf_keras target's optimizer generation: the one owner of when a Keras optimizer stays TF 2.4's `OptimizerV2`.

`tf.keras.optimizers.Adam` was TF 2.4's `OptimizerV2` Adam; on today's Keras 2 (TF 2.11 on, tf_keras) it is another
class, and TF 2.4's is `tf.keras.optimizers.legacy.Adam`. Legacy mode gives TF 2.4 code TF 2.4's class. Where TF 2.4's
behaviour depends on that class, a file migrated with `--target tf_keras` gets it too: each Keras optimizer the file
builds (a call, or a base of its own class) is spelled `....optimizers.legacy.X` (LSC153), and one that cannot be
(the name is imported bare, or Keras 2 has no legacy form of it) is warned with the reason (LSC154). The file depends
on `OptimizerV2` when it defines an optimizer that overrides one of `OptimizerV2`'s methods, calls `get_gradients`,
or puts a loss-scale optimizer it builds into a `tf.train.Checkpoint` (TF 2.4's checkpoints keep slots as
`OptimizerV2` does; today's Keras 2 optimizers refuse or skip them). Keras 3 has no `OptimizerV2` at all: the keras3
target's rules keep such code on lossscale_compat's class or warn instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import libcst as cst

from lossscale_compat import _mapping

from .. import _warnings as w
from .._edits import Plan, ShimWrap, SiteEdit, Wrap
from .._facts import Facts
from .._values import Expr
from . import keras3_notes

_MODULE = "tensorflow.keras.optimizers."
# `OptimizerV2` methods an optimizer written against TF 2.4 overrides, which today's Keras 2 optimizers call
# differently or never (`apply_gradients`: TF 2.4's loss-scale optimizer handed it `name` positionally and
# `experimental_aggregate_gradients`, Keras 2's hands it neither).
OPTIMIZER_V2_METHODS = frozenset(
    {
        "_create_slots",
        "_distributed_apply",
        "_prepare_local",
        "_resource_apply_dense",
        "_resource_apply_sparse",
        "_resource_apply_sparse_duplicate_indices",
        "apply_gradients",
        "get_gradients",
        "get_updates",
    }
)


def _keras_optimizer(facts: Facts, node: cst.BaseExpression) -> str | None:
    """`X` when `node` names `tf.keras.optimizers.X` (a class, not `schedules` or another module)."""
    name = facts.qualified_one(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    rest = name[len(_MODULE) :] if name is not None and name.startswith(_MODULE) else ""
    return rest if rest[:1].isupper() and "." not in rest else None


def _built(facts: Facts) -> Iterator[tuple[cst.CSTNode, cst.BaseExpression]]:
    """(The call or class, the Keras optimizer class it builds or subclasses) for each in the file, in file order."""
    for node in facts.parents:
        if isinstance(node, cst.Call) and _keras_optimizer(facts, node.func):
            yield node, node.func
        elif isinstance(node, cst.ClassDef):
            yield from ((node, base.value) for base in node.bases if _keras_optimizer(facts, base.value))


def _overrides(node: cst.ClassDef) -> list[str]:
    """The `OptimizerV2` methods class `node` defines."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [s.name.value for s in body if isinstance(s, cst.FunctionDef) and s.name.value in OPTIMIZER_V2_METHODS]


def depends_on_optimizer_v2(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> bool:
    """Whether TF 2.4's behaviour of this file depends on `OptimizerV2` (the module docstring lists when)."""
    if any(isinstance(node, cst.ClassDef) and _overrides(node) for node, _ in _built(facts)):
        return True
    if any(cst.ensure_type(call.func, cst.Attribute).attr.value == "get_gradients" for call in facts.applies):
        return True
    wraps = {
        wrap.call
        for edit in decisions.values()
        if isinstance(wrap := edit.wrap if isinstance(edit, ShimWrap) else edit, Wrap) and wrap.scale.dynamic
    }
    return bool(wraps and keras3_notes.checkpointed_calls(facts, wraps))


def plan_legacy_optimizers(facts: Facts, target: str, decisions: Mapping[Expr, SiteEdit]) -> Plan:
    """On tf_keras, in a file that depends on `OptimizerV2`: each Keras optimizer it builds as the legacy class."""
    if target != "tf_keras" or not depends_on_optimizer_v2(facts, decisions):
        return Plan()
    replace: dict[cst.CSTNode, cst.BaseExpression] = {}
    warnings: list[tuple[cst.CSTNode, str]] = []
    for _, name in _built(facts):
        if name in replace:
            continue
        if isinstance(name, cst.Attribute) and _keras_optimizer(facts, name) in _mapping.LEGACY_OPTIMIZER_CLASSES:
            legacy = cst.Attribute(value=name.value, attr=cst.Name("legacy"))
            replace[name] = name.with_changes(value=legacy)
            warnings.append((name, w.LEGACY_OPTIMIZER_NOTE))
        else:  # `Adam` imported bare, or no legacy form (`AdamW`, `Lion`)
            warnings.append((name, w.LEGACY_OPTIMIZER_NOT_WRITTEN))
    return Plan(replace=replace, warnings=tuple(warnings))
