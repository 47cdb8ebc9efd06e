"""Which TF 2.4 names go where: the attribute and `sys.modules` assignments legacy mode makes."""

from __future__ import annotations

import sys
import types
from typing import Any

from lossscale_compat import _flavour, _mapping
from lossscale_compat.legacy._module import LegacyModule

Assignment = tuple[Any, str, Any]  # (object, or sys.modules, name, value)


def _names(optimizers: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """TF 2.4's names per API family, as lossscale_compat implements them, with `optimizers`' loss-scale
    optimizer classes (`_optimizer.tf24_public_classes`)."""
    from lossscale_compat import _loss_scale
    from lossscale_compat.legacy import _graph_rewrite, _policy

    loss_scales = {name: getattr(_loss_scale, name) for name in ("LossScale", "FixedLossScale", "DynamicLossScale")}
    return {
        "optimizers": optimizers,
        "loss_scales": loss_scales,
        "graph_rewrite": {
            "enable_mixed_precision_graph_rewrite": _graph_rewrite.enable_mixed_precision_graph_rewrite,
            "disable_mixed_precision_graph_rewrite": _graph_rewrite.disable_mixed_precision_graph_rewrite,
        },
        "keras_experimental": {
            "LossScaleOptimizer": optimizers["experimental"],
            "Policy": _policy.Policy,
            "set_policy": _policy.set_policy,
            "global_policy": _policy.global_policy,
            "get_layer_policy": _policy.get_layer_policy,
        },
        "keras_loss_scale": {
            "get": _loss_scale.get,
            "serialize": _loss_scale.serialize,
            "deserialize": _loss_scale.deserialize,
            **loss_scales,
        },
    }


def assignments(tf: Any, tf24_optimizers: bool = True) -> list[Assignment]:
    """Every assignment legacy mode makes on the installed TensorFlow, in order.

    With `tf24_optimizers`, on Keras 2, `tf.keras.optimizers` gives TF 2.4's `OptimizerV2` family, and TF 2.4's
    loss-scale optimizer names give the forms over it, so that `type(opt)` is the class the program named.
    """
    from lossscale_compat import _optimizer

    tf24_optimizers = tf24_optimizers and _flavour.tf24_optimizers_module() is not None
    names = _names(_optimizer.tf24_public_classes(legacy_forms=tf24_optimizers))
    optimizers = names["optimizers"]
    out: list[Assignment] = []

    # tf.mixed_precision.experimental.{LossScale, FixedLossScale, DynamicLossScale}, also under compat.v2.
    mixed_precision_experimental = LegacyModule("tensorflow.mixed_precision.experimental", names["loss_scales"])
    for root in _unique(tf, tf.compat.v2):
        stack = root.__dict__.get("mixed_precision")
        out.append(
            (
                root,
                "mixed_precision",
                LegacyModule("tensorflow.mixed_precision", {"experimental": mixed_precision_experimental}, stack),
            )
        )
    out.append((sys.modules, "tensorflow.mixed_precision", out[0][2]))
    out.append((sys.modules, "tensorflow.mixed_precision.experimental", mixed_precision_experimental))

    # tf.train.experimental: the loss scales and the TF2 graph rewrite, over today's module.
    for root in _unique(tf.train, tf.compat.v2.train):
        out.append(
            (
                root,
                "experimental",
                LegacyModule(
                    root.experimental.__name__, {**names["loss_scales"], **names["graph_rewrite"]}, root.experimental
                ),
            )
        )

    # tf.keras.mixed_precision: the experimental module, and TF 2.4's non-experimental optimizer class.
    keras_experimental = LegacyModule("tensorflow.keras.mixed_precision.experimental", names["keras_experimental"])
    overlays = []
    for namespace in _flavour.tf_keras_namespaces():
        overlay = LegacyModule(
            "tensorflow.keras.mixed_precision",
            {
                "experimental": keras_experimental,
                "LossScaleOptimizer": optimizers["keras"],
            },
            namespace.mixed_precision,
        )
        overlays.append(overlay)
        out.append((namespace, "mixed_precision", overlay))
    # tf.compat.v1.keras.mixed_precision: TF 2.4 exported only the two optimizer classes there. Where it is the
    # same module as tf.keras (Keras 3, through another lazy loader), it gets the same overlay.
    compat_v1_keras, same_as_tf_keras = _flavour.tf_compat_v1_keras_namespace()
    if compat_v1_keras is not None and same_as_tf_keras:
        out.append((compat_v1_keras, "mixed_precision", overlays[0]))
    elif compat_v1_keras is not None:
        out.append(
            (
                compat_v1_keras,
                "mixed_precision",
                LegacyModule(
                    "tensorflow.compat.v1.keras.mixed_precision",
                    {
                        "experimental": LegacyModule(
                            "tensorflow.compat.v1.keras.mixed_precision.experimental",
                            {"LossScaleOptimizer": optimizers["experimental"]},
                        ),
                        "LossScaleOptimizer": optimizers["keras"],
                    },
                    compat_v1_keras.mixed_precision,
                ),
            )
        )
    out.append((sys.modules, "tensorflow.keras.mixed_precision", overlays[0]))
    out.append((sys.modules, "tensorflow.keras.mixed_precision.experimental", keras_experimental))

    if tf24_optimizers:
        out.extend(_tf24_optimizers())

    # The private modules TF <= 2.3 code imports (Horovod, OpenNMT and NVIDIA's examples among them).
    private = "tensorflow.python.keras.mixed_precision.experimental"
    modules = {
        "loss_scale_optimizer": LegacyModule(
            f"{private}.loss_scale_optimizer", {"LossScaleOptimizer": optimizers["experimental"]}
        ),
        "policy": LegacyModule(
            f"{private}.policy",
            {name: names["keras_experimental"][name] for name in ("Policy", "set_policy", "global_policy")},
        ),
        "get_layer_policy": LegacyModule(
            f"{private}.get_layer_policy", {"get_layer_policy": names["keras_experimental"]["get_layer_policy"]}
        ),
        "loss_scale": LegacyModule(f"{private}.loss_scale", names["keras_loss_scale"]),
        "device_compatibility_check": LegacyModule(
            f"{private}.device_compatibility_check", {"log_device_compatibility_check": _log_device_compatibility_check}
        ),
    }
    package = LegacyModule(private, modules)
    out.append((sys.modules, private, package))
    out.extend((sys.modules, f"{private}.{name}", module) for name, module in modules.items())
    out.extend(_importable(tf, out))
    return out


def _importable(tf: Any, out: list[Assignment]) -> list[Assignment]:
    """`sys.modules` entries so that `import`/`from ... import` of every TF 2.4 module in the mapping finds
    what attribute access finds, as on TF 2.4 (`from tensorflow.train.experimental import DynamicLossScale`).

    Without them, the import machinery loads the stack's own module and binds it over our overlay.
    """
    pending = {(id(target), name): value for target, name, value in out if target is not sys.modules}
    entries = {name for target, name, _ in out if target is sys.modules}
    extra: list[Assignment] = []
    for path in _mapping.PUBLIC_MODULES:
        value = tf
        parts = path.split(".")
        for depth in range(1, len(parts)):
            value = pending.get((id(value), parts[depth]), getattr(value, parts[depth], None))
            prefix = ".".join(parts[: depth + 1])
            if not isinstance(value, types.ModuleType):
                break
            if prefix not in entries and (isinstance(value, LegacyModule) or prefix not in sys.modules):
                extra.append((sys.modules, prefix, value))
                entries.add(prefix)
    return extra


def _tf24_optimizers() -> list[Assignment]:
    """On Keras 2, `tf.keras.optimizers` over the stack's, with its legacy (`OptimizerV2`) classes, `Optimizer`,
    `get` and `deserialize` in place of today's, as TF 2.4 had them. Nothing on Keras 3, which has no OptimizerV2."""
    legacy = _flavour.tf24_optimizers_module()
    if legacy is None:
        return []
    stack = _flavour.STACK_OPTIMIZERS
    names = {name: getattr(legacy, name) for name in dir(legacy) if not name.startswith("_")}

    def get(identifier: Any, **kwargs: Any) -> Any:
        """TF 2.4's `tf.keras.optimizers.get`: names and configs give `OptimizerV2` optimizers."""
        return stack.get(identifier, **{"use_legacy_optimizer": True, **kwargs})

    def deserialize(config: Any, custom_objects: Any = None, **kwargs: Any) -> Any:
        """TF 2.4's `tf.keras.optimizers.deserialize`: configs give `OptimizerV2` optimizers."""
        return stack.deserialize(config, custom_objects, **{"use_legacy_optimizer": True, **kwargs})

    overlay = LegacyModule("tensorflow.keras.optimizers", {**names, "get": get, "deserialize": deserialize}, stack)
    overlay.__path__ = list(getattr(stack, "__path__", []))  # `import tensorflow.keras.optimizers.schedules`
    out: list[Assignment] = [(namespace, "optimizers", overlay) for namespace in _flavour.tf_keras_namespaces()]
    return [*out, (sys.modules, "tensorflow.keras.optimizers", overlay)]


def _log_device_compatibility_check(policy_name: str) -> None:
    """TF 2.4 logged whether the GPUs suit `policy_name`; there is nothing to check on today's stacks."""


def _unique(*objects: Any) -> list[Any]:
    unique: list[Any] = []
    for obj in objects:
        if all(obj is not seen for seen in unique):
            unique.append(obj)
    return unique
