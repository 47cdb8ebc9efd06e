"""The codemod's promise: each rewritten optimizer construction is the shim's object, in config and in training.

Each case is TF 2.4 source and the shim construction it stands for. The source is migrated with
`lossscale_compat.codemods.migrate_source` for this stack's target and executed; its `opt` is held to the shim's with both
checks. Where Keras 3's algorithm differs (a skip does not advance `iterations`, no floor of 1), the
behaviour check must fail and say so.
"""

import json

import pytest
import tensorflow as tf
from tf24_goldens import GOLDEN_DIR
from tf24_optimizers import KERAS3

import lossscale_compat
from lossscale_compat.codemods._engine import migrate_source
from lossscale_compat import _behaviour, _flavour
from lossscale_compat.testing import assert_behaviour_equivalent, assert_config_equivalent, modern_equivalent

TARGET = "keras3" if KERAS3 else "tf_keras"
SGD = tf.keras.optimizers.SGD
EXPERIMENTAL = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"
FLOOR = json.loads((GOLDEN_DIR / "equivalence.json").read_text())["trajectories"]["floor_of_one"]
EVERY_SKIP = {"nonfinite": {1: "inf", 2: "nan", 3: "inf"}, "steps": 6}  # scales with 2000 growth steps

# (TF 2.4 source defining `opt`, the shim's construction of the same optimizer, stream, Keras 3 differs as)
CASES = {
    "dynamic string": (f"opt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(0.1, momentum=0.9), 'dynamic')",
                       lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1, momentum=0.9), "dynamic"),
                       EVERY_SKIP, "iterations"),
    "DynamicLossScale": (
        f"opt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(0.1),\n"
        "    tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=8, increment_period=3))",
        lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), lossscale_compat.DynamicLossScale(8, 3)),
        {}, "iterations"),
    "DynamicLossScale dict": (
        f"opt = {EXPERIMENTAL}(tf.keras.optimizers.Adam(0.01), {{'class_name': 'DynamicLossScale', "
        "'config': {'initial_loss_scale': 16, 'increment_period': 2, 'multiplier': 2}})",
        lambda: lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.Adam(0.01),
                                                    lossscale_compat.DynamicLossScale(16, 2)),
        {}, "iterations"),
    "floor of one": (
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision\n"
        "opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1),\n"
        "    tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=1, increment_period=2))",
        lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), lossscale_compat.DynamicLossScale(1, 2)),
        {"steps": FLOOR["steps"], "nonfinite": {int(k): v for k, v in FLOOR["nonfinite"].items()}}, "floor"),
    "fixed number": (f"opt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(0.1, momentum=0.9), 128)",
                     lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1, momentum=0.9), 128), {}, None),
    "FixedLossScale": (f"opt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(0.1), "
                       "tf.mixed_precision.experimental.FixedLossScale(4))",
                       lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), lossscale_compat.FixedLossScale(4)),
                       {}, None),
    "graph rewrite": ("opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))",
                      lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), "dynamic"), EVERY_SKIP, "iterations"),
    "graph rewrite with a scale": (
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1),\n"
        "    loss_scale=tf.mixed_precision.experimental.DynamicLossScale(4, 3))",
        lambda: lossscale_compat.LossScaleOptimizer(SGD(0.1), lossscale_compat.DynamicLossScale(4, 3)),
        {}, "iterations"),
}


def migrated(source):
    """The migrated source for this stack, and a function that executes it and returns its `opt`."""
    result = migrate_source(f"import tensorflow as tf\n{source}\n".encode(), TARGET)
    assert result.status == "changed", (result.status, result.error, result.findings)
    code = result.new.decode()
    assert "experimental" not in code, code

    def build():
        namespace = {}
        exec(compile(code, "<migrated>", "exec"), namespace)  # noqa: S102 - our own test source
        return namespace["opt"]

    return code, build


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewritten_construction_is_the_shims_optimizer(name):
    source, shim, stream, keras3_differs_in = CASES[name]
    code, build = migrated(source)
    assert_config_equivalent(shim(), build())
    if KERAS3 and keras3_differs_in:
        with pytest.raises(AssertionError) as raised:
            assert_behaviour_equivalent(shim, build, **stream)
        hint = {"iterations": _behaviour._ITERATIONS_HINT, "floor": _behaviour._FLOOR_HINT}[keras3_differs_in]
        if not _flavour.keras_loss_scale_optimizer_counts_steps():  # at step 0 its `iterations` is already behind
            hint = _behaviour._FROZEN_ITERATIONS_HINT
        assert hint in str(raised.value), code
    else:
        assert_behaviour_equivalent(shim, build, **stream)


@pytest.mark.parametrize("name", sorted(CASES))
def test_modern_equivalent_builds_what_the_codemod_writes(name):
    """`modern_equivalent(shim)` and the migrated code give the same optimizer, in config and in training."""
    source, shim, stream, _ = CASES[name]
    _, build = migrated(source)
    assert type(modern_equivalent(shim())) is type(build())
    assert_config_equivalent(modern_equivalent(shim()), build())
    assert_behaviour_equivalent(lambda: modern_equivalent(shim()), build, **stream)


@pytest.mark.skipif(not KERAS3, reason="on tf_keras every fixed scale is rewritten")
@pytest.mark.parametrize("value", ["3", "128", "0.5", "2 ** 127", "2.0 ** -126", "1e-40", "0.1"])
def test_a_fixed_scale_is_rewritten_exactly_when_it_has_a_modern_equivalent(value):
    """The codemod and modern_equivalent agree on which fixed scales carry over to `loss_scale_factor`."""
    literal = repr(float(eval(value)))  # noqa: S307 - our own literals; the codemod reads number literals only
    source = f"import tensorflow as tf\nopt = {EXPERIMENTAL}(tf.keras.optimizers.SGD(0.1), {literal})\n"
    rewritten = "loss_scale_factor" in migrate_source(source.encode(), TARGET).new.decode()
    try:
        modern_equivalent(lossscale_compat.LossScaleOptimizer(SGD(0.1), float(literal)))
    except ValueError as error:
        assert "not a power of two" in str(error)
        assert not rewritten
    else:
        assert rewritten
