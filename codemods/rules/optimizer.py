"""Optimizer construction: `LossScaleOptimizer(opt, loss_scale)` and the graph rewrite, as the modern class."""

from __future__ import annotations

import libcst as cst

from lossscale_compat import _mapping

from .. import _warnings as w
from .._edits import FixedFactor, NewName, SiteEdit, Wrap
from .._facts import CLASS_CHECKS, Facts
from .._values import Expr, Unsafe, has_comment, is_power_of_two
from . import loss_scale
from .optimizer_class import LOOP_SHIM
from .site import PARAMETERS, Site

# Built-in optimizers whose constructor takes `loss_scale_factor` on Keras 3.
_KERAS3_OPTIMIZERS = frozenset(
    {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl", "Lion"}
)

_OPTIMIZER_MODULES = ("keras.optimizers", "tensorflow.keras.optimizers")

# Keras 3 optimizers whose update reads `iterations` (bias correction), and the base-optimizer arguments
# that make any optimizer read it; a learning-rate schedule does too.
_BIAS_CORRECTED_OPTIMIZERS = frozenset({"Adam", "AdamW", "Adamax", "Nadam"})

_ITERATION_KEYWORDS = frozenset({"use_ema", "ema_overwrite_frequency", "gradient_accumulation_steps"})

# What TF 2.4's loss-scale optimizer had that the inner optimizer a Keras 3 fixed scale folds into lacks.
_WRAPPER_ATTRIBUTES = frozenset(
    {"loss_scale", "dynamic", "initial_scale", "dynamic_growth_steps", "dynamic_counter", "inner_optimizer"}
)


def decide(site: Site) -> SiteEdit:
    """`LossScaleOptimizer(opt, loss_scale)` wrapped on the target; the class itself, uncalled, kept running."""
    row = site.row
    if site.call is None:
        parent = site.facts.parent(site.node)
        if isinstance(parent, cst.Attribute) and parent.value is site.node:
            return NewName(row.shim, w.OPTIMIZER_SHIM_NOTE)  # `LossScaleOptimizer.from_config(...)`
        if isinstance(parent, cst.Assign) and parent.value is site.node:
            # `wrapper_class = LossScaleOptimizer`, called with TF 2.4's arguments
            return NewName(row.shim, w.CLASS_SHIM_NOTE)
        if site.facts.class_checked(site.node):
            # `isinstance(x, <the class>)`: every loss-scale optimizer of today's stack, lossscale_compat's included
            # (they subclass it), is an instance of the target's class, as of `AnyLossScaleOptimizer`
            return NewName(_mapping.replacement(row, site.target), w.CLASS_CHECK_NOTE)
        if _compared_or_subclassed(site.facts, site.node):
            raise Unsafe(w.UNSUPPORTED_USE)  # `type(x) is <the class>`, `class C(<the class>)`: a person's choice
        return NewName(row.shim, w.CLASS_SHIM_NOTE)  # a value (in a dict, an argument, returned), called elsewhere
    return wrap(site, site.bound())


def wrap(site: Site, bound: dict[str, cst.Arg]) -> Wrap | FixedFactor:
    """`LossScaleOptimizer(opt, loss_scale)` or a graph rewrite of a Keras optimizer: the loss scale folded in."""
    call, row = site.call, site.row
    assert call is not None  # the callers checked
    new_name = _mapping.replacement(row, site.target)
    folded = None
    if "loss_scale" in bound:
        if has_comment(bound["loss_scale"]):
            raise Unsafe(w.UNSUPPORTED_USE)
        scale, folded = loss_scale.read(site.facts, bound["loss_scale"].value)
    else:
        scale = _mapping.translate(_mapping.DYNAMIC, {})
    opt = bound[PARAMETERS[row.rule][0][0]]  # the optimizer
    if site.target == "keras3" and not scale.dynamic:
        inner = opt.value
        if not _is_inline_keras3_optimizer(site.facts, inner):
            raise Unsafe(w.FIXED_SCALE_NOT_INLINE)
        if not is_power_of_two(scale.initial_scale):
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
        compiles = _compiles_receiving(site.facts, call)
        return FixedFactor(call, opt, scale, row, tuple(compiles), folded)
    iterations_note = (
        site.target == "keras3" and scale.dynamic and new_name != LOOP_SHIM and reads_iterations(site.facts, opt.value)
    )
    return Wrap(call, opt, scale, new_name, row, folded, iterations_note)


def _compiles_receiving(facts: Facts, call: cst.Call) -> list[cst.Call]:
    """Returns the visible `compile` calls an optimizer built by `call` reaches, or raises Unsafe.

    The optimizer may only be the `optimizer` argument of a `.compile(...)` call, or be assigned
    once to a plain name that is only used as such an argument or as the receiver of an attribute the inner
    optimizer has too (not `loss_scale`, `inner_optimizer`, ...: `_WRAPPER_ATTRIBUTES`).
    """
    parent = facts.parent(call)
    compile_call = _compile_taking(facts, call)
    if compile_call is not None:
        return [compile_call]
    if not (
        isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)
    ):
        raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
    assignment = facts.single_assignment(parent.targets[0].target)
    if assignment is None:
        raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
    compiles = []
    for access in assignment.references:
        use = access.node
        user = facts.parent(use)
        if isinstance(user, cst.Attribute) and user.value is use:
            if user.attr.value in _WRAPPER_ATTRIBUTES:
                raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
            continue
        compile_call = _compile_taking(facts, use)
        if compile_call is None:
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
        compiles.append(compile_call)
    return compiles


def _compile_taking(facts: Facts, node: cst.CSTNode) -> cst.Call | None:
    """Returns the `.compile(...)` call that takes `node` as its optimizer, or raises/None.

    Raises Unsafe when that call already decides `auto_scale_loss` other than by a literal
    False, or passes `**kwargs`; returns None when `node` is not such an argument.
    """
    arg = facts.parent(node)
    call = facts.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "compile"
        and isinstance(arg, cst.Arg)
        and not arg.star
    ):
        return None
    position = call.args.index(arg)
    is_optimizer = arg.keyword.value == "optimizer" if arg.keyword is not None else position == 0
    if not is_optimizer:
        return None
    for other in call.args:
        if other.star == "**":
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
        if other.keyword is not None and other.keyword.value == "auto_scale_loss":
            if isinstance(other.value, cst.Name) and other.value.value == "False":
                return call
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
    return call


def reads_iterations(facts: Facts, inner: Expr) -> bool:
    """Whether the inner optimizer visibly keys its update on `iterations` (built inline, or the value its name holds
    there, as in `opt = Adam(); opt = LossScaleOptimizer(opt)`)."""
    value = facts.seen_value(inner) if isinstance(inner, cst.Name) else inner
    short = _keras3_optimizer_call(facts, value) if value is not None else None
    if short is None or not isinstance(value, cst.Call):
        return False
    if short in _BIAS_CORRECTED_OPTIMIZERS:
        return True
    for position, arg in enumerate(value.args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword in _ITERATION_KEYWORDS and not (
            isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")
        ):
            return True
        if (keyword == "learning_rate" or (keyword is None and position == 0)) and isinstance(arg.value, cst.Call):
            return True  # a learning-rate schedule
    return False


def _keras3_optimizer_call(facts: Facts, node: Expr) -> str | None:
    """Returns the class name if `node` calls one of Keras 3's built-in optimizers, else None."""
    name = facts.called_name(node)
    if name is None:
        return None
    module, _, short = name.rpartition(".")
    return short if module in _OPTIMIZER_MODULES and short in _KERAS3_OPTIMIZERS else None


def _is_inline_keras3_optimizer(facts: Facts, node: Expr) -> bool:
    if _keras3_optimizer_call(facts, node) is None or not isinstance(node, cst.Call):
        return False
    return all(not arg.star and (arg.keyword is None or arg.keyword.value != "loss_scale_factor") for arg in node.args)


def _compared_or_subclassed(facts: Facts, site: Expr) -> bool:
    """Whether `site` is compared (`is`, `==`, `in`, ...), a base class, or passed to a call named like a class
    check that `Facts.class_checked` did not take (`isinstance(o, classinfo=...)`, a rebound `isinstance`)."""
    node: cst.CSTNode = site
    parent = facts.parent(node)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Set)):
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return True
    call = facts.parent(parent) if isinstance(parent, cst.Arg) else None
    if isinstance(call, cst.ClassDef):
        return True
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in CLASS_CHECKS
