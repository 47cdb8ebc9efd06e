"""On `--target tf_keras`, a file whose TF 2.4 behaviour depends on `OptimizerV2` keeps it: its Keras optimizers
become `tf.keras.optimizers.legacy.*` (LSC153), or are warned where they cannot (LSC154); codemods/rules/
legacy_optimizers.py is the rule's one owner.

The shapes are those of public TF 2.4-era trainers: TensorFlowTTS's `AdamWeightDecay(tf.keras.optimizers.Adam)`
overriding `apply_gradients(grads_and_vars, clip_norm, ...)`, OpenNMT-tf's `get_gradients`, a custom optimizer's
`_resource_apply_dense`/`_create_slots` (Model Garden's and BERT's `AdamWeightDecay`), and ELECTRA's checkpoint of
the wrapped optimizer.
"""

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate

WITH_SHIM_IMPORT = ("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n")

CUSTOM_OPTIMIZER = """\
    import tensorflow as tf


    class DecayedAdam(tf.keras.optimizers.Adam):
        def _resource_apply_dense(self, grad, var, apply_state=None):
            var.assign_sub(self.weight_decay_rate * var)
            return super()._resource_apply_dense(grad, var, apply_state)


    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(DecayedAdam(1e-3), "dynamic")
    model.compile(optimizer=optimizer, loss="mse")
    """


def test_a_custom_optimizer_on_optimizer_v2_hooks_gets_tf24s_base_class():
    """Today's Keras 2 Adam never calls `_resource_apply_dense`: the subclass derives from the legacy Adam."""
    check(
        CUSTOM_OPTIMIZER,
        CUSTOM_OPTIMIZER.replace("(tf.keras.optimizers.Adam)", "(tf.keras.optimizers.legacy.Adam)").replace(
            'experimental.LossScaleOptimizer(DecayedAdam(1e-3), "dynamic")', "LossScaleOptimizer(DecayedAdam(1e-3))"
        ),
        "tf_keras",
        codes=[w.LEGACY_OPTIMIZER_NOTE],
    )


def test_the_keras3_target_has_no_legacy_optimizers_to_write():
    new, codes = migrate(CUSTOM_OPTIMIZER, "keras3")
    assert "optimizers.legacy" not in new
    assert w.LEGACY_OPTIMIZER_NOTE not in codes


TTS_TRAINER = """\
    import tensorflow as tf


    class AdamWeightDecay(tf.keras.optimizers.Adam):
        def apply_gradients(self, grads_and_vars, clip_norm=0.5, **kwargs):
            grads, tvars = list(zip(*grads_and_vars))
            grads, _ = tf.clip_by_global_norm(grads, clip_norm=clip_norm)
            return super().apply_gradients(zip(grads, tvars), **kwargs)


    rate = tf.keras.optimizers.schedules.PolynomialDecay(0.05, 10, 0.005)
    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(AdamWeightDecay(rate), "dynamic")


    def step(loss, variables):
        grads = tf.gradients(optimizer.get_scaled_loss(loss), variables)
        grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables), 1.0)
    """


def test_an_apply_gradients_override_gets_tf24s_base_class_and_the_wrap_ours():
    """TF 2.4's wrap handed `1.0` on as `clip_norm` (ours does, LSC148); the override is `OptimizerV2`'s (LSC153).
    The schedule is not an optimizer and keeps its name; `super().apply_gradients(..., **kwargs)` stays warned."""
    after = (
        TTS_TRAINER.replace(*WITH_SHIM_IMPORT)
        .replace("(tf.keras.optimizers.Adam)", "(tf.keras.optimizers.legacy.Adam)")
        .replace(
            'tf.keras.mixed_precision.experimental.LossScaleOptimizer(AdamWeightDecay(rate), "dynamic")',
            "lossscale_compat.KerasLossScaleOptimizer(AdamWeightDecay(rate))",
        )
    )
    check(
        TTS_TRAINER,
        after,
        "tf_keras",
        codes=[w.LEGACY_OPTIMIZER_NOTE, w.TF24_CALL_NOT_PROVEN, w.TF24_CALL_SHIM_NOTE],
    )


OPENNMT_TRAINER = """\
    import tensorflow as tf


    class Trainer:
        def __init__(self, optimizer):
            optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
            self._optimizer = optimizer

        def gradients(self, loss, variables):
            return self._optimizer.get_gradients(loss, variables)


    trainer = Trainer(tf.keras.optimizers.Adam(learning_rate=1e-3))
    """


def test_get_gradients_gets_tf24s_optimizer_and_our_wrap():
    """Keras 2's `get_gradients` is `OptimizerV2`'s: the optimizer the file builds is the legacy one. The wrap stays
    ours (LSC148): the inner optimizer reaches it through a parameter, and Keras 2's wrap of any other has none."""
    after = (
        OPENNMT_TRAINER.replace(*WITH_SHIM_IMPORT)
        .replace("tf.keras.optimizers.Adam(", "tf.keras.optimizers.legacy.Adam(")
        .replace(
            "tf.keras.mixed_precision.LossScaleOptimizer(optimizer)",
            "lossscale_compat.KerasLossScaleOptimizer(optimizer)",
        )
    )
    check(OPENNMT_TRAINER, after, "tf_keras", codes=[w.TF24_CALL_SHIM_NOTE, w.LEGACY_OPTIMIZER_NOTE])


PLAIN_LOOP = """\
    import tensorflow as tf

    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.Adam(), "dynamic")


    def step(tape, loss, variables):
        grads = optimizer.get_unscaled_gradients(tape.gradient(optimizer.get_scaled_loss(loss), variables))
        optimizer.apply_gradients(zip(grads, variables))
    """


def test_code_that_does_not_depend_on_optimizer_v2_keeps_todays_optimizers():
    new, codes = migrate(PLAIN_LOOP, "tf_keras")
    assert "tf.keras.optimizers.Adam()" in new
    assert w.LEGACY_OPTIMIZER_NOTE not in codes


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("tf.keras.optimizers.Adam(learning_rate=1e-3)", "Adam(learning_rate=1e-3)"),  # imported bare
        ("tf.keras.optimizers.Adam(learning_rate=1e-3)", "tf.keras.optimizers.AdamW(learning_rate=1e-3)"),
    ],
)
def test_an_optimizer_that_cannot_be_written_legacy_is_warned_and_left(before, after):
    """No legacy form (AdamW), or a bare imported name: left as it is, LSC154 names why."""
    source = OPENNMT_TRAINER.replace(before, after)
    if after.startswith("Adam("):
        source = source.replace(
            "import tensorflow as tf\n", "import tensorflow as tf\n    from tensorflow.keras.optimizers import Adam\n"
        )
    new, codes = migrate(source, "tf_keras")
    assert after in new and "optimizers.legacy" not in new
    assert codes.count(w.LEGACY_OPTIMIZER_NOT_WRITTEN) == 1 and w.LEGACY_OPTIMIZER_NOTE not in codes
