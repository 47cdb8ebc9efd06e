"""Calls whose meaning the target's LossScaleOptimizer changes are kept on our class (LSC148) or warned (LSC149).

TF 2.4's `apply_gradients(grads_and_vars, name, experimental_aggregate_gradients)` handed `name` on to the inner
optimizer positionally (TensorFlowTTS's `AdamWeightDecay` took it as `clip_norm`); Keras 2's class reads a second
positional argument as `skip_gradients_aggregation`, Keras 3's takes none; neither has `get_gradients`.
"""

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


TTS_TRAINER = """\
    import tensorflow as tf

    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(AdamWeightDecay(1e-3), "dynamic")


    def train_step(model, batch):
        with tf.GradientTape() as tape:
            loss = model(batch)
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables), 1.0)
    """

TTS_AFTER = TTS_TRAINER.replace(
    'tf.keras.mixed_precision.experimental.LossScaleOptimizer(AdamWeightDecay(1e-3), "dynamic")',
    "lossscale_compat.KerasLossScaleOptimizer(AdamWeightDecay(1e-3))",
).replace("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n", 1)

FINAL_CLASS = """\
    import tensorflow as tf

    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())
    other = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())


    def step(grads, variables):
        opt.apply_gradients(zip(grads, variables), experimental_aggregate_gradients=False)
        other.apply_gradients(zip(grads, variables))
    """

OPENNMT_TRAINER = """\
    import tensorflow as tf


    class Trainer:
        def __init__(self, optimizer):
            self._optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

        def compute_gradients(self, loss, variables, tape):
            if tf.executing_eagerly():
                scaled = self._optimizer.get_scaled_loss(loss)
                return self._optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
            return self._optimizer.get_gradients(loss, variables)

        def apply(self, grads, variables):
            self._optimizer.apply_gradients(list(zip(grads, variables)), experimental_aggregate_gradients=False)
    """

OPENNMT_AFTER = OPENNMT_TRAINER.replace(
    "tf.keras.mixed_precision.LossScaleOptimizer(optimizer)", "lossscale_compat.KerasLossScaleOptimizer(optimizer)"
).replace("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n", 1)

UNTRACED = """\
    import tensorflow as tf

    wrapped = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())


    def step(optimizer, grads, variables):
        optimizer.apply_gradients(zip(grads, variables), 1.0)
    """


@pytest.mark.parametrize(
    ("target", "codes"),
    [
        # Keras 3: the loop rule keeps it there already (the unscaled gradients reach a call it cannot rewrite).
        ("keras3", [w.LOOP_SHIM_NOTE, w.UNSCALED_GRADIENTS_USED]),
        ("tf_keras", [w.TF24_CALL_SHIM_NOTE]),
    ],
)
def test_a_positional_argument_after_the_gradients_keeps_the_optimizer_on_our_class(target, codes):
    """Keras 2's class would read `1.0` as `skip_gradients_aggregation`, and the inner optimizer would clip at 0.5."""
    check(TTS_TRAINER, TTS_AFTER, target, codes=codes)


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_tf24s_keyword_on_tf24s_final_class_names_ours_for_that_optimizer_only(target):
    """Both targets keep the spelling, for a class that refuses (Keras 3) or does not hand on (Keras 2) the keyword."""
    after = FINAL_CLASS.replace(
        "opt = tf.keras.mixed_precision.LossScaleOptimizer", "opt = lossscale_compat.KerasLossScaleOptimizer"
    ).replace("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n", 1)
    check(FINAL_CLASS, after, target, codes=[w.TF24_CALL_SHIM_NOTE])


def test_name_by_keyword_and_plain_calls_on_the_final_class():
    """`name=` is refused by Keras 3's class and dropped by Keras 2's; a call with only the gradients is left alone."""
    source = FINAL_CLASS.replace("experimental_aggregate_gradients=False", 'name="train"')
    for target in ("keras3", "tf_keras"):
        new, codes = migrate(source, target)
        assert "opt = lossscale_compat.KerasLossScaleOptimizer(" in new, target
        assert "other = tf.keras.mixed_precision.LossScaleOptimizer(" in new, target
        assert codes == [w.TF24_CALL_SHIM_NOTE], target
    plain = FINAL_CLASS.replace(", experimental_aggregate_gradients=False", "")
    for target in ("keras3", "tf_keras"):
        check(plain, plain, target)


@pytest.mark.parametrize(
    ("target", "codes"),
    [("keras3", [w.FINAL_CLASS_SHIM_NOTE, w.TF24_CALL_SHIM_NOTE]), ("tf_keras", [w.TF24_CALL_SHIM_NOTE])],
)
def test_calls_on_a_self_attribute_assigned_the_wrap_keep_it_on_our_class(target, codes):
    """OpenNMT-tf's trainer: LossScaleOptimizerV3 (tf_keras) has no `get_gradients`, Keras 3's takes no keyword."""
    check(OPENNMT_TRAINER, OPENNMT_AFTER, target, codes=codes)


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_a_call_on_an_untraced_receiver_in_a_file_building_a_wrap_is_warned(target):
    check(UNTRACED, UNTRACED, target, codes=[w.TF24_CALL_NOT_PROVEN])


def test_a_file_without_a_loss_scale_optimizer_is_not_warned():
    source = """\
        import tensorflow as tf


        def step(optimizer, grads, variables):
            optimizer.apply_gradients(zip(grads, variables), name="step")
        """
    for target in ("keras3", "tf_keras"):
        check(source, source, target)


OPENNMT_FLOW = """\
    import tensorflow as tf


    def add_wrapper(optimizer):
        return tf.keras.mixed_precision.LossScaleOptimizer(optimizer)


    class Trainer:
        def __init__(self, optimizer, mixed_precision):
            if mixed_precision:
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
            self._optimizer = optimizer

        def compute_gradients(self, loss, variables):
            return self._optimizer.get_gradients(loss, variables)
    """


def test_get_gradients_on_an_untraced_receiver_puts_the_files_wraps_on_our_class_for_tf_keras():
    """OpenNMT-tf wraps into a local name, then stores it on `self`: on tf_keras no class the target builds has
    `get_gradients`, so each wrap of the file is built with ours (LSC148)."""
    after = OPENNMT_FLOW.replace(
        "tf.keras.mixed_precision.LossScaleOptimizer(optimizer)", "lossscale_compat.KerasLossScaleOptimizer(optimizer)"
    ).replace("import tensorflow as tf\n", "import tensorflow as tf\n    import lossscale_compat\n", 1)
    check(OPENNMT_FLOW, after, "tf_keras", codes=[w.TF24_CALL_SHIM_NOTE, w.TF24_CALL_SHIM_NOTE])
