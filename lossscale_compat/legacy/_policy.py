"""TF 2.4's experimental Keras `Policy(name, loss_scale)` and its global-policy functions."""

from __future__ import annotations

from typing import Any

from lossscale_compat import _flavour, _loss_scale
from lossscale_compat._deprecation import quiet, warn_deprecated

_PREFIX = "tf.keras.mixed_precision.experimental"
graph_rewrite_enabled = False  # set by the graph rewrite: TF 2.4 refused a mixed policy beside it


class PolicyV1(_flavour.keras_policy_class()):  # type: ignore[misc]
    """TF 2.4's `tf.keras.mixed_precision.experimental.Policy`: a dtype policy that carries a loss scale.

    `loss_scale="auto"` means a dynamic loss scale for "mixed_float16" and none otherwise; `compile`
    uses it to wrap the model's optimizer. Named `PolicyV1` as TF 2.4's class was, so it serializes as
    TF 2.4's did (`class_name: 'PolicyV1'`).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> PolicyV1:
        return _flavour.new_policy(cls, args[0] if args else kwargs.get("name"))

    def __init__(self, name: str, loss_scale: Any = "auto"):
        if not isinstance(name, str):  # as TF 2.4 checked; today's Policy(None) is the global default, silently
            raise TypeError(f"'name' must be a string, such as 'mixed_float16', but got: {name!r}.")
        super().__init__(name)
        given = loss_scale
        self._using_default_loss_scale = isinstance(loss_scale, str) and loss_scale == "auto"
        if self._using_default_loss_scale:
            loss_scale = "dynamic" if name == "mixed_float16" else None
        with quiet():  # the Policy's own warning below covers the loss scale it builds
            self._loss_scale = _loss_scale.get(loss_scale)
        warn_deprecated(_policy_replacement(name, self._loss_scale, self._using_default_loss_scale), "Policy")
        if self._loss_scale is not None and self.compute_dtype != "float16":
            import tensorflow as tf

            tf.get_logger().warning(
                f"Creating a Policy with a loss scale is only useful for float16 policies. You passed "
                f"loss_scale={given} for policy {name}. Consider not passing any loss_scale instead."
            )

    @property
    def loss_scale(self) -> _loss_scale.LossScale | None:
        """The loss scale `compile` wraps the optimizer with, or None."""
        return self._loss_scale

    def __repr__(self) -> str:
        return f'<PolicyV1 "{self.name}", loss_scale={self._loss_scale}>'

    def get_config(self) -> dict:
        config = {"name": self.name}
        if not self._using_default_loss_scale:
            config["loss_scale"] = None if self._loss_scale is None else _loss_scale.serialize(self._loss_scale)
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> PolicyV1:
        config = dict(config)
        if isinstance(config.get("loss_scale"), dict):
            config["loss_scale"] = _loss_scale.deserialize(config["loss_scale"], custom_objects=custom_objects)
        return cls(**config)


Policy = PolicyV1  # TF 2.4's public name for it


def _policy_replacement(name: str, loss_scale: Any, default: bool) -> str:
    message = (
        f"`{_PREFIX}.Policy` was removed from TensorFlow after 2.8; the modern equivalent is "
        f"`{_flavour.keras_public_prefix()}.Policy({name!r})`"
    )
    if loss_scale is not None and not default:
        message += (
            f", with its loss scale {loss_scale} set on the optimizer (`LossScaleOptimizer(inner_optimizer, ...)`)"
        )
    return message + "."


def set_policy(policy: Any) -> None:
    """TF 2.4's `set_policy`: sets the global dtype policy; a string becomes a policy without a loss scale."""
    warn_deprecated(
        f"`{_PREFIX}.set_policy` was removed from TensorFlow after 2.8; the modern equivalent "
        f"is `{_flavour.keras_public_prefix()}.set_global_policy({_policy_argument(policy)})`.",
        "set_policy",
    )
    import tensorflow as tf

    if policy is not None:
        stack_policy = policy if hasattr(policy, "compute_dtype") else _flavour.keras_policy_class()(policy)
        if graph_rewrite_enabled and stack_policy.compute_dtype != stack_policy.variable_dtype:
            raise ValueError(
                f'The global dtype policy cannot be set to "{stack_policy.name}", because the mixed precision '
                "graph rewrite has already been enabled. Use one of the two, not both: the policy "
                "(recommended; call `disable_mixed_precision_graph_rewrite()` first) or the graph rewrite."
            )
        # "_infer" (TF 1's behaviour, no compute dtype) was allowed, as in TF 2.4.
        if stack_policy.compute_dtype is not None and not tf.as_dtype(stack_policy.compute_dtype).is_floating:
            raise ValueError(
                "set_policy can only be used to set the global policy to floating-point policies, such as "
                f'"float32" and "mixed_float16", but got policy: {stack_policy.name}. Pass the dtype to the '
                "layers that need it instead."
            )
    tf_keras_mixed_precision().set_global_policy(_flavour.default_global_policy() if policy is None else policy)


def _policy_argument(policy: Any) -> str:
    return repr(getattr(policy, "name", policy))


def global_policy() -> Any:
    """TF 2.4's `global_policy`: the global dtype policy, with its loss scale if it is a TF 2.4 Policy."""
    warn_deprecated(
        f"`{_PREFIX}.global_policy` was removed from TensorFlow after 2.8; the modern "
        f"equivalent is `{_flavour.keras_public_prefix()}.global_policy()`.",
        "global_policy",
    )
    return tf_keras_mixed_precision().global_policy()


def get_layer_policy(layer: Any) -> Any:
    """TF 2.4's `get_layer_policy`: a layer's dtype policy."""
    import tensorflow as tf

    warn_deprecated(
        f"`{_PREFIX}.get_layer_policy` was removed from TensorFlow after 2.8; the modern "
        "equivalent is `layer.dtype_policy`.",
        "get_layer_policy",
    )
    if not isinstance(layer, tf.keras.layers.Layer):
        raise ValueError(f"get_policy can only be called on a layer, but got: {layer}")
    return layer.dtype_policy


def tf_keras_mixed_precision() -> Any:
    """The stack's own `tf.keras.mixed_precision` module, whatever legacy mode lays over it."""
    import tensorflow as tf

    namespace = tf.keras.mixed_precision
    return getattr(namespace, "_stack_module", namespace)


def compile_loss_scale(policy: Any) -> Any:
    """TF 2.4's rule for `compile`: the Policy's loss scale, else "dynamic" for mixed_float16, else None."""
    if isinstance(policy, Policy):
        return policy.loss_scale
    return "dynamic" if getattr(policy, "name", None) == "mixed_float16" else None
