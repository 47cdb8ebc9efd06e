"""The TF 2.4 -> modern mapping, as data: one table shared by the shim, the codemod and the docs.

With it, the one translation of a TF 2.4 loss scale into modern `LossScaleOptimizer` arguments: the shim,
the codemod and every message that names a modern construction go through `translate` and `describe`. The
values are generic: the shim passes numbers, the codemod the source expressions it read, so the rules are
written once for both. Standard library only: the CLI imports this module (no TensorFlow, Keras or libcst).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Callable, Generic, TypeVar

V = TypeVar("V")

# What a TF 2.4 `loss_scale` argument is, before its settings are read.
DYNAMIC = "dynamic"  # the string "dynamic"
FIXED = "fixed"  # a plain number: settings {"loss_scale_value": number}
FIXED_LOSS_SCALE = "FixedLossScale"
DYNAMIC_LOSS_SCALE = "DynamicLossScale"

# Constructor parameters of TF 2.4's loss-scale classes, in order; also the keys of their configs.
PARAMETERS: dict[str, tuple] = {
    FIXED_LOSS_SCALE: ("loss_scale_value",),
    DYNAMIC_LOSS_SCALE: ("initial_loss_scale", "increment_period", "multiplier"),
}

# TF 2.4's DynamicLossScale defaults, which are also modern Keras' LossScaleOptimizer defaults.
DEFAULT_INITIAL_SCALE = 2.0**15
DEFAULT_GROWTH_STEPS = 2000
# Modern Keras grows and shrinks a dynamic scale by this factor only.
MULTIPLIER = 2.0


class UntranslatableLossScale(ValueError):
    """A TF 2.4 loss scale with no modern equivalent; `reason` is "multiplier" or "class"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class ModernScale(Generic[V]):
    """The modern `LossScaleOptimizer` arguments for one TF 2.4 loss scale; None means the default."""

    dynamic: bool
    initial_scale: V | None = None
    dynamic_growth_steps: V | None = None

    def kwargs(self) -> dict[str, object]:
        """TF 2.4's non-experimental keyword arguments (`dynamic`, `initial_scale`, ...), defaults left out."""
        out: dict[str, object] = {} if self.dynamic else {"dynamic": False}
        if self.initial_scale is not None:
            out["initial_scale"] = self.initial_scale
        if self.dynamic_growth_steps is not None:
            out["dynamic_growth_steps"] = self.dynamic_growth_steps
        return out


def _as_number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def translate(kind: str, settings: Mapping[str, V], number: Callable[[V], float | None] = _as_number) -> ModernScale[V]:
    """The modern arguments for a TF 2.4 loss scale of `kind` with constructor `settings`.

    `number` reads a setting as a float, or None where it is not known (source the codemod cannot
    evaluate). A dynamic setting equal to the modern default is left out; an unknown one is kept.
    """
    if kind == DYNAMIC:
        return ModernScale(True)
    if kind in (FIXED, FIXED_LOSS_SCALE):
        return ModernScale(False, initial_scale=settings["loss_scale_value"])
    if kind != DYNAMIC_LOSS_SCALE:
        raise UntranslatableLossScale(
            "class", f"Only FixedLossScale and DynamicLossScale have modern equivalents, not {kind}."
        )
    multiplier = settings.get("multiplier")
    if multiplier is not None and number(multiplier) != MULTIPLIER:
        raise UntranslatableLossScale(
            "multiplier",
            "Modern Keras always grows and shrinks the scale by 2; to keep another multiplier, "
            "drive a `lossscale_compat.DynamicLossScale` yourself in a custom training loop.",
        )
    initial = settings.get("initial_loss_scale")
    growth = settings.get("increment_period")
    return ModernScale(
        True,
        initial_scale=None if initial is None or number(initial) == DEFAULT_INITIAL_SCALE else initial,
        dynamic_growth_steps=None if growth is None or number(growth) == DEFAULT_GROWTH_STEPS else growth,
    )


def is_exact_loss_scale_factor(value: object) -> bool:
    """Whether a TF 2.4 fixed scale carries over exactly to Keras 3's `loss_scale_factor`.

    TF 2.4 unscaled by multiplying with `1 / scale`, Keras 3 divides by the factor; both are exact only for
    a power of two in float32's normal range, so only those are rewritten.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 2.0**-126 <= value <= 2.0**127:
        return False
    return math.frexp(float(value))[0] == 0.5


def describe(scale: ModernScale, prefix: str, target: str, show: Callable[[object], str] = repr) -> str:
    """The modern construction for `scale` on `target` ("keras3" or "tf_keras"), as a sentence fragment.

    `show` spells a value: `repr` for the shim's numbers, `str` for source text and placeholders.
    """
    if not scale.dynamic:
        if target == "keras3":
            return (
                f"set `loss_scale_factor={show(scale.initial_scale)}` on the inner optimizer and "
                "drop the LossScaleOptimizer"
            )
        return (
            f"`{prefix}.LossScaleOptimizer(inner_optimizer, dynamic=False, initial_scale={show(scale.initial_scale)})`"
        )
    args = "".join(f", {key}={show(value)}" for key, value in scale.kwargs().items())
    return f"`{prefix}.LossScaleOptimizer(inner_optimizer{args})`"


@dataclasses.dataclass(frozen=True)
class Rename:
    """One TF 2.4 public name and where it lives now."""

    old: str
    """Fully qualified TF 2.4 name, as libcst's QualifiedNameProvider spells it."""
    keras3: str | None
    """Modern replacement on Keras 3 (TF >= 2.16), or None if there is no direct one."""
    tf_keras: str | None
    """Modern replacement on tf_keras / Keras 2, or None if there is no direct one."""
    shim: str | None
    """The `lossscale_compat` name that keeps the TF 2.4 spelling running."""
    note: str = ""
    """What a person should know when the rewrite is not a plain rename."""
    rule: str = "rename"
    """How the codemod rewrites a use: one of `RULES`."""
    fallback: str | None = None
    """The `lossscale_compat` run-time fallback (`lossscale_compat._runtime`) a use becomes where no rewrite to the
    modern API can be proven: it keeps TF 2.4's behaviour and decides when called what the codemod cannot decide
    when editing (a graph rewrite's optimizer kind, a Policy's loss scale, an `isinstance` check, a TF 2.4 function
    used as a value)."""


# Every namespace in which TF 2.4 exported the three LossScale classes (reference §1.1).
LOSS_SCALE_NAMESPACES: tuple[str, ...] = (
    "tensorflow.mixed_precision.experimental",
    "tensorflow.train.experimental",
    "tensorflow.compat.v2.mixed_precision.experimental",
    "tensorflow.compat.v2.train.experimental",
    "tensorflow.compat.v1.mixed_precision",
    "tensorflow.compat.v1.mixed_precision.experimental",
    "tensorflow.compat.v1.train.experimental",
)

LOSS_SCALE_CLASSES: tuple[str, ...] = ("LossScale", "FixedLossScale", "DynamicLossScale")

# The modern APIs the codemod writes for: Keras 3, or tf_keras / TF 2.15's Keras 2.
TARGETS: tuple[str, ...] = ("keras3", "tf_keras")

# The codemod rules a row can name (see codemods/rules/, one module per API family, and docs/codemod.md).
RULES: tuple[str, ...] = (
    "rename",  # plain rename of every use
    "loss_scale",  # standalone LossScale object -> the shim; folded when passed to an optimizer
    "loss_scale_optimizer",  # LossScaleOptimizer(opt, loss_scale) -> modern keyword arguments
    "policy",  # Policy(name, loss_scale=...) -> modern policy; the loss scale moves
    "get_layer_policy",  # get_layer_policy(layer) -> layer.dtype_policy
    "graph_rewrite",  # enable_mixed_precision_graph_rewrite(opt, ...) -> explicit wrap
    "graph_rewrite_disable",  # disable_mixed_precision_graph_rewrite() statement -> removed
    "tf1_optimizer",  # TF1 MixedPrecisionLossScaleOptimizer: never rewritten; a warning unless its optimizer is TF1
)


# Keras 3 has no standalone loss-scale objects: a dynamic scale is folded into the LossScaleOptimizer's
# arguments and a fixed one into the inner optimizer's `loss_scale_factor`; `translate` says how.
def _placeholders(scale: ModernScale) -> str:
    keras3 = describe(scale, "keras.mixed_precision", "keras3", show=str)
    tf_keras = describe(scale, "tf.keras.mixed_precision", "tf_keras", show=str)
    return f"Keras 3: {keras3}; tf_keras: {tf_keras}."


_LOSS_SCALE_NOTE = {
    "LossScale": "No modern base class; subclass-based custom loss scales need a person.",
    "FixedLossScale": _placeholders(ModernScale(False, "<loss_scale_value>")),
    "DynamicLossScale": _placeholders(ModernScale(True, "<initial_loss_scale>", "<increment_period>"))
    + " A multiplier other than 2 has no modern equivalent.",
}

# lossscale_compat's optimizer classes, which keep TF 2.4's custom-loop contract: the codemod leaves loops on
# them alone.
SHIM_OPTIMIZERS = frozenset({"lossscale_compat.LossScaleOptimizer", "lossscale_compat.KerasLossScaleOptimizer"})

# The private module TF <= 2.3 code imported directly (Horovod, OpenNMT and NVIDIA's examples among them).
PRIVATE_KERAS_PACKAGE = "tensorflow.python.keras.mixed_precision.experimental"
"""Gone from today's TensorFlow; an import of anything in it the codemod cannot map is warned (LSC110)."""

# TF 2.4's own private Keras mixed-precision package (the experimental one above is TF <= 2.3's).
PRIVATE_KERAS_ROOT = "tensorflow.python.keras.mixed_precision"

# Standalone Keras 2's (2.5-2.12) mixed-precision package: its `loss_scale_optimizer` module held TF 2.4's two Keras
# classes under their TF 2.4 names; Keras 2.13 moved it to `keras.src`, and Keras 3 has no such module.
KERAS2_PRIVATE_ROOT = "keras.mixed_precision"

# TF's private TF1 loss-scale module: today's TensorFlow still has it, but not TF 2.3's `get_loss_scale_weights`.
TRAINING_LOSS_SCALE_MODULE = "tensorflow.python.training.experimental.loss_scale"

PRIVATE_NAMES: dict[str, str] = {
    **{
        f"{package}.loss_scale.{name}": f"lossscale_compat.{name}"
        for package in (PRIVATE_KERAS_ROOT, PRIVATE_KERAS_PACKAGE)
        for name in ("get", "serialize", "deserialize")
    },
    **{
        f"{root}.loss_scale_optimizer.{name}": f"lossscale_compat.{shim}"
        for root in (PRIVATE_KERAS_ROOT, KERAS2_PRIVATE_ROOT)
        for name, shim in (
            ("LossScaleOptimizerV1", "LossScaleOptimizer"),
            ("LossScaleOptimizer", "KerasLossScaleOptimizer"),
        )
    },
    f"{PRIVATE_KERAS_ROOT}.policy.PolicyV1": "lossscale_compat.Policy",
    f"{TRAINING_LOSS_SCALE_MODULE}.get_loss_scale_weights": "lossscale_compat.get_loss_scale_weights",
}
"""Names imported from private mixed-precision modules (TF's, checked on TF 2.3.0 and 2.4.0, and standalone Keras 2's)
-> the `lossscale_compat` name with TF 2.4's behaviour (TF 2.3's for `get_loss_scale_weights`, which TF 2.4 removed):
a from-import of only these is moved to `lossscale_compat` (the local names kept). The experimental package's
`loss_scale_optimizer`, `policy` and `get_layer_policy` are rows of `RENAMES`; the rest of that package is warned
(LSC110)."""

CLASS_CHECK_NAMES = {
    "lossscale_compat.LossScaleOptimizer": "lossscale_compat.AnyLossScaleOptimizer",
    "lossscale_compat.KerasLossScaleOptimizer": "lossscale_compat.AnyLossScaleOptimizer",
}
"""A `PRIVATE_NAMES` class read in `isinstance`/`issubclass` -> the name that answers for every loss-scale optimizer:
TF 2.4's private class was also the public one, which the codemod moves to the target's Keras class."""

PRIVATE_MODULES_KEPT = frozenset({TRAINING_LOSS_SCALE_MODULE})
"""Private modules of `PRIVATE_NAMES` that the targets still have, with their other names working: imported as a
module, its `PRIVATE_NAMES` reads move to lossscale_compat and the rest stay, with the import."""

DEVICE_CHECK_MODULES = frozenset(
    f"{package}.device_compatibility_check" for package in (PRIVATE_KERAS_ROOT, PRIVATE_KERAS_PACKAGE)
)
"""TF's private device-check modules, imported only to silence the check (set a flag, replace its logger): the
codemod removes the import and those statements, and maps them to nothing (TF 2.21's Keras never reads them)."""

PRIVATE_MODULES: frozenset[str] = frozenset(name.rpartition(".")[0] for name in PRIVATE_NAMES)
"""The private modules that hold a `PRIVATE_NAMES` name: imported as a module (`from ... import loss_scale_optimizer`,
`import ... as lso`), its uses move to lossscale_compat when every attribute the file reads of it is such a name."""

_KERAS_EXPERIMENTAL = (
    "tensorflow.keras.mixed_precision.experimental",
    "tensorflow.compat.v1.keras.mixed_precision.experimental",
    "tensorflow.compat.v2.keras.mixed_precision.experimental",
    f"{PRIVATE_KERAS_PACKAGE}.loss_scale_optimizer",
)

# Policy, set_policy, global_policy and get_layer_policy were not exported to tf.compat.v1.keras.
# Each namespace pairs with the one that held get_layer_policy: TF <= 2.3 kept it in a private module of its own.
_KERAS_POLICY_NAMESPACES = (
    ("tensorflow.keras.mixed_precision.experimental",) * 2,
    ("tensorflow.compat.v2.keras.mixed_precision.experimental",) * 2,
    (f"{PRIVATE_KERAS_PACKAGE}.policy", f"{PRIVATE_KERAS_PACKAGE}.get_layer_policy"),
)

# Where TF 2.4 exported enable_/disable_mixed_precision_graph_rewrite.
_GRAPH_REWRITE_NAMESPACES = (
    "tensorflow.train.experimental",
    "tensorflow.compat.v2.train.experimental",
    "tensorflow.compat.v1.train.experimental",
    "tensorflow.compat.v1.mixed_precision",
)

RENAMES: tuple[Rename, ...] = (
    *(
        Rename(
            old=f"{namespace}.{name}",
            keras3=None,
            tf_keras=None,
            shim=f"lossscale_compat.{name}",
            note=_LOSS_SCALE_NOTE[name],
            rule="loss_scale",
        )
        for namespace in LOSS_SCALE_NAMESPACES
        for name in LOSS_SCALE_CLASSES
    ),
    *(
        Rename(
            old=f"{namespace}.LossScaleOptimizer",
            keras3="keras.mixed_precision.LossScaleOptimizer",
            tf_keras="tensorflow.keras.mixed_precision.LossScaleOptimizer",
            shim="lossscale_compat.LossScaleOptimizer",
            note="The `loss_scale` argument is folded into the modern keyword arguments.",
            rule="loss_scale_optimizer",
        )
        for namespace in _KERAS_EXPERIMENTAL
    ),
    *(
        row
        for namespace, layer_policy_namespace in _KERAS_POLICY_NAMESPACES
        for row in (
            Rename(
                old=f"{namespace}.Policy",
                keras3="keras.mixed_precision.DTypePolicy",
                tf_keras="tensorflow.keras.mixed_precision.Policy",
                shim=None,
                note="A Policy no longer carries a loss scale; it moves to the LossScaleOptimizer.",
                rule="policy",
                fallback="lossscale_compat.Policy",
            ),
            Rename(
                old=f"{namespace}.set_policy",
                keras3="keras.mixed_precision.set_global_policy",
                tf_keras="tensorflow.keras.mixed_precision.set_global_policy",
                shim=None,
            ),
            Rename(
                old=f"{namespace}.global_policy",
                keras3="keras.mixed_precision.global_policy",
                tf_keras="tensorflow.keras.mixed_precision.global_policy",
                shim=None,
            ),
            Rename(
                old=f"{layer_policy_namespace}.get_layer_policy",
                keras3=None,
                tf_keras=None,
                shim=None,
                note="Read `layer.dtype_policy` instead.",
                rule="get_layer_policy",
                fallback="lossscale_compat.keras_experimental.get_layer_policy",
            ),
        )
    ),
    *(
        Rename(
            old=f"{namespace}.enable_mixed_precision_graph_rewrite",
            keras3="keras.mixed_precision.LossScaleOptimizer",
            tf_keras="tensorflow.keras.mixed_precision.LossScaleOptimizer",
            shim=None,
            note=("The graph rewrite is gone: wrap the optimizer explicitly and set a `mixed_float16` policy."),
            rule="graph_rewrite",
            fallback="lossscale_compat.enable_mixed_precision_graph_rewrite",
        )
        for namespace in _GRAPH_REWRITE_NAMESPACES
    ),
    *(
        Rename(
            old=f"{namespace}.disable_mixed_precision_graph_rewrite",
            keras3=None,
            tf_keras=None,
            shim=None,
            note=(
                "Nothing to disable any more: a bare call statement is removed; any other use of TF2's name calls "
                "lossscale_compat's (TF1's names still exist)."
            ),
            rule="graph_rewrite_disable",
            fallback=(
                "lossscale_compat.disable_mixed_precision_graph_rewrite"
                if not namespace.startswith("tensorflow.compat.v1.")
                else None
            ),
        )
        for namespace in _GRAPH_REWRITE_NAMESPACES
    ),
    *(
        Rename(
            old=f"{namespace}.MixedPrecisionLossScaleOptimizer",
            keras3=None,
            tf_keras=None,
            shim=None,
            note=(
                "Wraps a TF1 `tf.compat.v1.train.Optimizer`; no modern equivalent. Move to a Keras "
                "optimizer wrapped in `LossScaleOptimizer`, or keep the TF1 code on `tf.compat.v1`."
            ),
            rule="tf1_optimizer",
        )
        for namespace in ("tensorflow.compat.v1.mixed_precision", "tensorflow.compat.v1.train.experimental")
    ),
)

BY_OLD_NAME = {rename.old: rename for rename in RENAMES}

KERAS_EXPERIMENTAL_FALLBACK = "lossscale_compat.keras_experimental"
"""A module object with TF 2.4's `tf.keras.mixed_precision.experimental` names, for the leftover uses of a module
alias (`from tensorflow.keras.mixed_precision import experimental as mixed_precision`) the codemod cannot rewrite."""

KERAS_EXPERIMENTAL_MODULES: tuple[str, ...] = _KERAS_EXPERIMENTAL[:3]
"""The public TF 2.4 modules `KERAS_EXPERIMENTAL_FALLBACK` stands in for."""

KERAS_EXPERIMENTAL_NAMES = ("LossScaleOptimizer", "Policy", "set_policy", "global_policy", "get_layer_policy")
"""What `KERAS_EXPERIMENTAL_FALLBACK` holds (`lossscale_compat._runtime.keras_experimental`)."""

# The optimizer classes Keras 2 keeps in `tf.keras.optimizers.legacy`: TF 2.4's `OptimizerV2` family (`Optimizer` is
# the base). The tf_keras target spells these `....optimizers.legacy.X` where a file depends on `OptimizerV2`.
LEGACY_OPTIMIZER_CLASSES = frozenset(
    {"Adadelta", "Adagrad", "Adam", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop", "SGD"}
)

# Modules that only exist in the TF 2.4 spelling; an import of one is removed once unused.
LEGACY_MODULES: tuple[str, ...] = tuple(
    sorted({rename.old.rsplit(".", 1)[0] for rename in RENAMES if ".experimental" in rename.old})
)

# The public TF 2.4 modules that hold a mapped name (`tensorflow.train.experimental`, ...); legacy mode makes each
# importable again.
PUBLIC_MODULES: tuple[str, ...] = tuple(
    sorted({rename.old.rsplit(".", 1)[0] for rename in RENAMES if not rename.old.startswith("tensorflow.python.")})
)

# Modules on the way to a TF 2.4 name (`tensorflow.keras.mixed_precision`, ...): what a module alias made by
# assignment (`mp = tf.keras.mixed_precision`) can stand for.
MODULE_PREFIXES = frozenset(
    rename.old.rsplit(".", depth)[0] for rename in RENAMES for depth in range(1, rename.old.count("."))
)


def normal_name(name: str) -> str:
    """`name` with its compat namespaces read as TensorFlow reads them: the last one decides
    (`tensorflow.compat.v1.compat.v2.x` is `tensorflow.compat.v2.x`, TF 2's API; `tensorflow.compat.v2.compat.v1.x`
    is `tensorflow.compat.v1.x`, TF 1's)."""
    if not name.startswith("tensorflow.compat."):
        return name
    rest = name
    while rest.startswith(("tensorflow.compat.v1.compat.", "tensorflow.compat.v2.compat.")):
        rest = "tensorflow." + rest[len("tensorflow.compat.v1.") :]
    return rest


def replacement(rename: Rename, target: str) -> str | None:
    """Returns the dotted name `rename` becomes on `target` ("keras3" or "tf_keras"), if any."""
    if target not in TARGETS:
        raise ValueError(f"`target` must be one of {', '.join(map(repr, TARGETS))}, got {target!r}")
    return getattr(rename, target)


LOSS_SCALE_OPTIMIZER_CLASSES = (
    frozenset(
        name
        for rename in RENAMES
        if rename.rule == "loss_scale_optimizer"
        for name in (rename.old, rename.keras3, rename.tf_keras, rename.shim)
        if name is not None
    )
    | SHIM_OPTIMIZERS
)
"""Every class whose call builds a loss-scale optimizer: TF 2.4's, the modern ones and lossscale_compat's. A name bound
once to such a call is a loss-scale optimizer the codemod knows (for `CONFIG_METHOD` comparisons)."""

CONFIG_METHOD = "get_config"
"""`a.get_config() == b.get_config()` between two of `LOSS_SCALE_OPTIMIZER_CLASSES`, in a regression test, fails on
Keras 3 (unique optimizer names): the codemod moves it to `CONFIG_ASSERTION`, also in a file that names no TF 2.4 API
any more (one migrated before), so the prefilter lets a file through on this method and a class's word."""

CONFIG_ASSERTION = "lossscale_compat.testing.assert_config_equivalent"
"""What a regression test's config comparison of two loss-scale optimizers becomes (`CONFIG_METHOD`)."""

CONFIG_ASSERTION_METHODS = ("assertEqual", "assertDictEqual")
"""unittest's equality assertions that a config comparison may be written with (`self.assertEqual(a, b)`)."""

APPLY_METHODS: tuple[str, ...] = ("apply_gradients", "get_gradients")
"""TF 2.4 optimizer methods whose contract Keras 3's LossScaleOptimizer changes: its `apply_gradients` divides
gradients that a TF 2.4 loop never scaled, and it has no `get_gradients`."""

LOOP_METHODS: tuple[str, ...] = ("get_scaled_loss", "get_unscaled_gradients")
"""TF 2.4 LossScaleOptimizer's custom-loop methods, gone from Keras 3's class: the codemod rewrites the loop there."""

LOOP_PARAMETERS: dict[str, str] = {"get_scaled_loss": "loss", "get_unscaled_gradients": "grads"}
"""The one parameter of each of TF 2.4's loop methods, which a call may name; Keras 3's `scale_loss` names it `loss`."""

LAYER_ATTRIBUTES: dict[str, str] = {
    "_compute_dtype": "layer.compute_dtype",
    "_compute_dtype_object": "tf.as_dtype(layer.compute_dtype)",
    "_dtype_policy": "layer.dtype_policy",
    "_dtype": "layer.variable_dtype",
}
"""TF 2.4's private layer dtype attributes -> the Keras 3 spelling of the same value, where TF 2.4.0's recorded values
prove it the same (tests/goldens/tf24_layer_attributes.json). Legacy mode gives the first three back on Keras 3 and
names the spelling in its errors; TF 2.4's `_autocast` has none (Keras 3's models have `autocast=True`)."""
