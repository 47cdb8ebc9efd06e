"""Policy: `Policy(name, loss_scale=...)`, whose loss scale is dropped only where that changes nothing; elsewhere
lossscale_compat's `Policy`, which carries it to `compile` as TF 2.4 did; and `get_layer_policy(layer)`."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from lossscale_compat import _mapping

from .. import _warnings as w
from .._edits import LayerPolicy, NewName, NewPolicy, SiteEdit
from .._facts import Facts
from .._values import Expr, Unsafe, bind_args, has_comment, string_value
from .site import PARAMETERS, Site

_FLOAT16_POLICY = "mixed_float16"


def decide(site: Site) -> SiteEdit:
    """The modern policy where dropping the loss scale changes nothing, else lossscale_compat's `Policy`.

    A policy whose `loss_scale` the module reads keeps it too: the modern class has none.
    """
    row, call = site.row, site.call
    new_name = _mapping.replacement(row, site.target)
    if call is None:
        if _alias_called_with_a_loss_scale(site.facts, site.node):
            return NewName(row.fallback, w.VALUE_FALLBACK_NOTE)  # `Policy = mp.Policy`, then `Policy(n, loss_scale=x)`
        return NewName(new_name)
    bound = site.bound()
    if _loss_scale_read(site.facts, call):
        return NewName(row.fallback, w.POLICY_FALLBACK_NOTE)
    if "loss_scale" not in bound:
        return NewName(new_name)
    name = string_value(bound["name"].value)
    scale = bound["loss_scale"].value
    scale_text = string_value(scale)
    droppable = scale_text == "auto" or (
        name is not None
        and (
            (scale_text == "dynamic" and name == _FLOAT16_POLICY)
            or (isinstance(scale, cst.Name) and scale.value == "None" and name != _FLOAT16_POLICY)
        )
    )
    if has_comment(bound["loss_scale"]) or not droppable:
        # TF 2.4's Policy carried its loss scale to `compile`; lossscale_compat's does the same, at run time.
        return NewName(row.fallback, w.POLICY_FALLBACK_NOTE)
    return NewPolicy(call, bound["name"], new_name)


def _alias_called_with_a_loss_scale(facts: Facts, node: Expr) -> bool:
    """Whether `node` is assigned to a name that is called somewhere with a loss scale (a second positional argument,
    `loss_scale=`, or `*args`/`**kwargs`), which the modern class would reject."""
    assign = facts.parent(node)
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is node
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return False
    binding = facts.single_assignment(assign.targets[0].target)
    if binding is None:
        return True  # rebound: its calls cannot all be seen
    params, required = PARAMETERS["policy"]
    for access in binding.references:
        call = facts.parent(access.node)
        if isinstance(call, cst.Call) and call.func is access.node:
            try:
                if "loss_scale" in bind_args(call.args, params, required):
                    return True
            except Unsafe:  # `*args`, `**kwargs` or arguments TF 2.4's Policy did not take: not provably without
                return True
    return False


def _loss_scale_read(facts: Facts, call: cst.Call) -> bool:
    """Whether the module reads the `loss_scale` of the policy `call` builds: through the one name it is
    assigned to, or of the global policy (which any Policy built here may be)."""
    reads = facts.policy_scale_reads
    if any(isinstance(read.value, cst.Call) for read in reads):
        return True
    assign = facts.parent(call)
    if not (
        reads
        and isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return False
    binding = facts.single_assignment(assign.targets[0].target)
    return binding is not None and any(
        isinstance(user := facts.parent(access.node), cst.Attribute) and user in reads for access in binding.references
    )


def global_scale_read_warnings(facts: Facts, decisions: Mapping[Expr, SiteEdit]) -> list[tuple[cst.CSTNode, str]]:
    """The warnings on each `global_policy().loss_scale` read unless the module sets only policies that keep one.

    Every Policy built in a module that reads the global policy's loss scale is lossscale_compat's (see
    `_loss_scale_read`), which has it; a policy set by name (`set_policy('mixed_float16')`) would be the
    target's, which has none, and so would a module that builds no Policy at all.
    """
    reads = [read for read in facts.policy_scale_reads if isinstance(read.value, cst.Call)]
    if not reads:
        return []
    builds = [edit for site, edit in decisions.items() if _row_rule(facts, site) == "policy"]
    sets_by_name = any(
        _row_rule(facts, site) == "set_policy"
        and isinstance(call := facts.parent(site), cst.Call)
        and call.func is site
        and (not call.args or string_value(call.args[0].value) is not None)
        for site in decisions
    )
    if (
        builds
        and not sets_by_name
        and all(isinstance(edit, NewName) and edit.note == w.POLICY_FALLBACK_NOTE for edit in builds)
    ):
        return []
    return [(read, w.POLICY_LOSS_SCALE) for read in reads]


def _row_rule(facts: Facts, site: Expr) -> str | None:
    """The rule of the site's row ("set_policy" for a `set_policy` site), or None."""
    row = _mapping.BY_OLD_NAME.get(facts.qualified_one(site) or "")
    if row is None:
        return None
    return "set_policy" if row.old.endswith(".set_policy") else row.rule


def decide_layer_policy(site: Site) -> SiteEdit:
    """`get_layer_policy(layer)` -> `layer.dtype_policy`; the function used as a value -> lossscale_compat's."""
    if site.call is None:
        return NewName(site.row.fallback, w.VALUE_FALLBACK_NOTE)
    return LayerPolicy(site.bound()["layer"])


def refused_layer_policy(site: Site, code: str) -> SiteEdit | None:
    """A `get_layer_policy` call whose argument cannot be read (`*args`, a keyword of another name): the fallback,
    the same arguments, which raises as TF 2.4's did for a non-layer; else None (kept)."""
    return NewName(site.row.fallback, w.VALUE_FALLBACK_NOTE) if code in (w.STAR_ARGS, w.BAD_ARGUMENTS) else None
