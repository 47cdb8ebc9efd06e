"""Optimizer construction: `LossScaleOptimizer(opt, loss_scale)` and the graph rewrite, as the modern class."""

from __future__ import annotations

import libcst as cst

from .. import _warnings as w
from .._scopes import BuiltinBinding
from .._state import RuleBase
from .._values import Expr, SourceScale, Unsafe

# Built-in optimizers whose constructor takes `loss_scale_factor` on Keras 3.
_KERAS3_OPTIMIZERS = frozenset(
    {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl", "Lion"}
)

_OPTIMIZER_MODULES = ("keras.optimizers", "tensorflow.keras.optimizers")

# Keras 3 optimizers whose update reads `iterations` (bias correction), and the base-optimizer arguments
# that make any optimizer read it; a learning-rate schedule does too.
_BIAS_CORRECTED_OPTIMIZERS = frozenset({"Adam", "AdamW", "Adamax", "Nadam"})

_ITERATION_KEYWORDS = frozenset({"use_ema", "ema_overwrite_frequency", "gradient_accumulation_steps"})

# Why an experimental LossScaleOptimizer call goes to lossscale_compat's class instead of being left alone.
SHIM_INSTEAD = frozenset(
    {
        w.LOSS_SCALE_NOT_VISIBLE,
        w.MULTIPLIER_NOT_TWO,
        w.FIXED_SCALE_NOT_INLINE,
        w.FIXED_SCALE_NOT_EQUIVALENT,
        w.STAR_ARGS,
    }
)

_CLASS_CHECKS = frozenset({"isinstance", "issubclass"})

# TF 2.4's non-experimental class, ours: the modern keyword arguments with TF 2.4's custom-loop contract.
LOOP_SHIM = "lossscale_compat.KerasLossScaleOptimizer"


class OptimizerRule(RuleBase):
    """Decides how an experimental `LossScaleOptimizer` call is built on the target."""

    def _compiles_receiving(self, call: cst.Call) -> list[cst.Call]:
        """Returns the visible `compile` calls an optimizer built by `call` reaches, or raises Unsafe.

        The optimizer may only be the `optimizer` argument of a `.compile(...)` call, or be assigned
        once to a plain name that is only used as such an argument or as an attribute receiver.
        """
        parent = self.facts.parent(call)
        compile_call = self._compile_taking(call)
        if compile_call is not None:
            return [compile_call]
        if not (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
        assignment = self.facts.single_assignment(parent.targets[0].target)
        if assignment is None:
            raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
        compiles = []
        for access in assignment.references:
            use = access.node
            user = self.facts.parent(use)
            if isinstance(user, cst.Attribute) and user.value is use:
                continue
            compile_call = self._compile_taking(use)
            if compile_call is None:
                raise Unsafe(w.FIXED_SCALE_NOT_EQUIVALENT)
            compiles.append(compile_call)
        return compiles

    def _compile_taking(self, node: cst.CSTNode) -> cst.Call | None:
        """Returns the `.compile(...)` call that takes `node` as its optimizer, or raises/None.

        Raises Unsafe when that call already decides `auto_scale_loss` other than by a literal
        False, or passes `**kwargs`; returns None when `node` is not such an argument.
        """
        arg = self.facts.parent(node)
        call = self.facts.parent(arg) if isinstance(arg, cst.Arg) else None
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

    def _reads_iterations(self, inner: Expr) -> bool:
        """Whether the inner optimizer visibly keys its update on `iterations` (built inline or by one assignment)."""
        value = self.facts.assigned_value(inner) if isinstance(inner, cst.Name) else inner
        short = self._keras3_optimizer_call(value) if value is not None else None
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

    def _keras3_optimizer_call(self, node: Expr) -> str | None:
        """Returns the class name if `node` calls one of Keras 3's built-in optimizers, else None."""
        name = self.facts.called_name(node)
        if name is None:
            return None
        module, _, short = name.rpartition(".")
        return short if module in _OPTIMIZER_MODULES and short in _KERAS3_OPTIMIZERS else None

    def _is_inline_keras3_optimizer(self, node: Expr) -> bool:
        if self._keras3_optimizer_call(node) is None or not isinstance(node, cst.Call):
            return False
        return all(
            not arg.star and (arg.keyword is None or arg.keyword.value != "loss_scale_factor") for arg in node.args
        )

    def _class_checked(self, site: Expr) -> bool:
        """Whether `site` is the class (alone, or in a tuple) that the built-in `isinstance`/`issubclass` checks."""
        parent = self.facts.parent(site)
        if isinstance(parent, cst.Element) and isinstance(tuple_ := self.facts.parent(parent), cst.Tuple):
            parent = self.facts.parent(tuple_)
        call = self.facts.parent(parent) if isinstance(parent, cst.Arg) else None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in _CLASS_CHECKS
            and len(call.args) == 2
            and call.args[1] is parent
            and parent.keyword is None
            and not parent.star
        ):
            return False
        scope = self.facts.scopes.get(call.func) or self.facts.global_scope
        return all(isinstance(binding, BuiltinBinding) for binding in scope[call.func.value])

    def _source_of(self, key: str, value: object, scale: SourceScale, site: Expr) -> Expr:
        """The source for one of `scale.kwargs()`: read expressions as written, `dynamic=False` spelled out."""
        if key == "dynamic":
            return cst.Name("False")
        assert isinstance(value, cst.BaseExpression)
        return self._as_float(value, site) if key == "initial_scale" and scale.dynamic else value

    def _as_float(self, value: Expr, site: Expr) -> Expr:
        """Returns `value`, or `float(value)` where Keras 3 could not take it as TF 2.4's float() did."""
        if isinstance(value, cst.Float) or (isinstance(value, cst.Integer) and abs(value.evaluated_value) < 2**63):
            return value
        scope = self.facts.scopes.get(site) or self.facts.global_scope
        if any(not isinstance(binding, BuiltinBinding) for binding in scope["float"]):
            raise Unsafe(w.NAME_CLASH)
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(value=value)])
