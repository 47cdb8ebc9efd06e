"""TF 2.4's TF2 `tf.train.experimental.enable_mixed_precision_graph_rewrite` and its `disable_...`."""

from __future__ import annotations

import logging
from typing import Any

from lossscale_compat import _flavour
from lossscale_compat._deprecation import dynamic_difference, warn_deprecated
from lossscale_compat.legacy import _policy

_PREFIX = "tf.train.experimental"
_log = logging.getLogger("lossscale_compat")
_said_no_gpu = False


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """Wraps a Keras optimizer in TF 2.4's experimental LossScaleOptimizer and turns on the grappler rewrite."""
    import tensorflow as tf

    from lossscale_compat import _optimizer

    warn_deprecated(
        f"`{_PREFIX}.enable_mixed_precision_graph_rewrite` was removed from TensorFlow after 2.8; "
        f"the modern equivalent is `{_flavour.keras_public_prefix()}.set_global_policy("
        "'mixed_float16')` with a LossScaleOptimizer."
        + dynamic_difference(_flavour.has_keras3_loss_scaling() and _is_dynamic(loss_scale)),
        "enable_mixed_precision_graph_rewrite",
    )
    policy = _policy.tf_keras_mixed_precision().global_policy()
    if policy.compute_dtype != policy.variable_dtype:
        raise ValueError(
            "The mixed precision graph rewrite cannot be enabled, because the global Keras dtype Policy has "
            f"been set to a mixed precision policy. Use one of the two, not both: the policy ({policy.name!r}, "
            "recommended) or the graph rewrite."
        )
    if not isinstance(opt, _flavour.current_optimizer_class()) and not _flavour.is_legacy_keras_optimizer(opt):
        raise ValueError(f'"opt" must be an instance of a tf.keras.optimizers.Optimizer, but got: {opt}')
    wrapped = _optimizer.LossScaleOptimizer(opt, loss_scale)
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
    _policy.graph_rewrite_enabled = True
    _say_once_if_no_gpu()
    return wrapped


def _is_dynamic(loss_scale: Any) -> bool:
    """Whether TF 2.4's `loss_scale` asks for a dynamic scale (its default "dynamic", or a DynamicLossScale)."""
    named = isinstance(loss_scale, str) and loss_scale == "dynamic"
    return named or type(loss_scale).__name__ == "DynamicLossScale"


def disable_mixed_precision_graph_rewrite() -> None:
    """Turns the grappler rewrite off again; optimizers already wrapped stay wrapped, as in TF 2.4."""
    import tensorflow as tf

    warn_deprecated(
        f"`{_PREFIX}.disable_mixed_precision_graph_rewrite` was removed from TensorFlow after "
        "2.8; with a dtype policy there is nothing to disable.",
        "disable_mixed_precision_graph_rewrite",
    )
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})
    _policy.graph_rewrite_enabled = False


def _say_once_if_no_gpu() -> None:
    import tensorflow as tf

    global _said_no_gpu
    if not _said_no_gpu and not tf.config.list_logical_devices("GPU"):
        _said_no_gpu = True
        _log.warning(
            "enable_mixed_precision_graph_rewrite: no GPU is visible, so no graph is rewritten to "
            "float16 here; the optimizer's loss scaling still applies."
        )
