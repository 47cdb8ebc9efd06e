"""Issue 42: a finding a tracing limit causes names the line that blocked the trace and the one edit that unlocks the
modern rewrite (`_blockers.detail`), in its full message; its short text stays one line."""

from __future__ import annotations

import textwrap

import pytest
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import migrate_source


def _findings(source: str, target: str = "keras3") -> dict[str, list[w.Finding]]:
    result = migrate_source(textwrap.dedent(source).encode(), target, "t.py")
    out: dict[str, list[w.Finding]] = {}
    for finding in result.findings:
        out.setdefault(finding.code, []).append(finding)
    return out


# Modelled on TF 2.x trainer classes that wrap the optimizer behind a flag (`self.optimizer = <settings>`, then
# `if mixed: self.optimizer = LossScaleOptimizer(self.optimizer)`); our own code. The first value is an attribute of
# another object, which the codemod does not follow (an `Adam(...)` there is followed: test_branch_wrap_runs.py).
_SET_TWICE = """\
    import tensorflow as tf
    from tensorflow.keras.mixed_precision import experimental as mixed_precision


    class Trainer:
        def __init__(self, model, mixed):
            self.model = model
            self.optimizer = model.settings.optimizer
            if mixed:
                self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer, loss_scale="dynamic")

        def train_step(self, tape, loss):
            scaled_loss = self.optimizer.get_scaled_loss(loss)
            scaled_gradients = tape.gradient(scaled_loss, self.model.trainable_variables)
            gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
            self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
    """


def test_lsc120_names_the_second_binding_of_a_self_attribute_and_the_edit():
    (finding,) = _findings(_SET_TWICE)[w.LOOP_SHIM_NOTE]
    assert finding.detail == (
        (
            "The loop call at line 13 is not traced: `.optimizer` is set at lines 8, 10, and the codemod does not "
            "follow `model.settings.optimizer` (line 8). To unlock it, set `self.optimizer` once, to the "
            "LossScaleOptimizer itself, and keep the plain optimizer (or the other value) under another attribute."
        ),
    )
    assert finding.message.endswith(finding.detail[0])


def test_the_named_edit_unlocks_the_modern_rewrite():
    unlocked = _SET_TWICE.replace(
        "            self.optimizer = model.settings.optimizer\n"
        "            if mixed:\n"
        '                self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer, loss_scale="dynamic")\n',
        "            self.optimizer = mixed_precision.LossScaleOptimizer(\n"
        '                tf.keras.optimizers.Adam(1e-3), loss_scale="dynamic")\n',
    )
    result = migrate_source(textwrap.dedent(unlocked).encode(), "keras3", "t.py")
    assert b"lossscale_compat" not in result.new and b"scale_loss(loss)" in result.new
    assert not {f.code for f in result.findings} & w.BLOCKED_CODES


_PARAMETER = """\
    import tensorflow as tf


    def step(opt, tape, loss, variables):
        scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        opt.apply_gradients(zip(grads, variables))
        return opt.loss_scale
    """


def test_untraced_parameter_names_its_line_at_each_finding():
    found = _findings(_PARAMETER)
    assert set(found) == {w.UNTRACED_LOOP_NOTE, w.SCALE_READ_NOT_PROVEN}
    alone = _findings(_PARAMETER.replace("        grads = opt.get_unscaled_gradients(", "        grads = ("))
    assert set(alone) == {w.RECEIVER_NOT_PROVEN, w.SCALE_READ_NOT_PROVEN}
    for finding in (*found[w.UNTRACED_LOOP_NOTE], *alone[w.RECEIVER_NOT_PROVEN], *alone[w.SCALE_READ_NOT_PROVEN]):
        assert "`opt` is a parameter (line 4)" in finding.message
        assert "instead of passing it in" in finding.message


def test_a_rebinding_in_a_branch_names_every_line():
    source = """\
        import tensorflow as tf

        opt = settings.optimizer
        if amp:
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")


        def step(tape, loss, variables):
            scaled = opt.get_scaled_loss(loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
            opt.apply_gradients(zip(grads, variables))
        """
    (finding,) = _findings(source)[w.LOOP_SHIM_NOTE]
    assert "The loop call at line 9 is not traced: `opt` is bound again at line 5 (first at line 3)" in finding.message
    assert "the codemod does not follow `settings.optimizer` (line 3)" in finding.message
    assert "bind the LossScaleOptimizer once to a name of its own" in finding.message


def test_a_model_passed_on_names_the_line():
    source = """\
        import tensorflow as tf

        model = tf.keras.Sequential()
        model.compile(
            optimizer=tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic"))
        tune(model)


        def step(tape, loss):
            scaled = model.optimizer.get_scaled_loss(loss)
            grads = model.optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        """
    (finding,) = _findings(source)[w.LOOP_SHIM_NOTE]
    assert "`model` is passed on or stored at line 6" in finding.message
    assert "compile `model` once in this module" in finding.message


def test_an_ambiguous_name_names_its_bindings():
    source = """\
        from tensorflow.keras.mixed_precision import experimental as mp
        if old:
            from tensorflow.keras import mixed_precision as mp
        opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD())
        """
    (finding,) = _findings(source)[w.AMBIGUOUS_NAME]
    assert "`mp` is bound at lines 1, 3" in finding.message


def test_a_finding_with_no_known_blocker_still_says_what_unlocks_it():
    finding = w.Finding(1, 0, w.RECEIVER_NOT_PROVEN)
    assert finding.message.endswith(w.UNLOCK_BY_CODE[w.RECEIVER_NOT_PROVEN])


@pytest.mark.parametrize("code", sorted(w.BLOCKED_CODES))
def test_blocked_codes_keep_a_short_text_and_explain_the_detail(code):
    assert len(w.SHORT[code]) <= w.SHORT_LIMIT
    assert "the line that blocked the trace" in (w.explain(code) or "").replace("\n", " ")


def test_blocked_codes_are_the_figures_tracing_codes():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import corpus_figure

    assert corpus_figure.TRACING_CODES == w.BLOCKED_CODES


def test_a_traced_loop_whose_gradients_are_not_a_name_names_the_unscale_call():
    # Modelled on TF 2.4-era loops that unscale `tape.gradient(...)` in place; our own code.
    source = """\
        import tensorflow as tf

        optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")


        def step(tape, loss, variables):
            scaled = optimizer.get_scaled_loss(loss)
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
            optimizer.apply_gradients(zip(grads, variables))
        """
    (finding,) = _findings(source)[w.LOOP_SHIM_NOTE]
    assert "The loop is traced, but the unscaled gradients of the call at line 8" in finding.message
    assert "bind the scaled gradients to a name" in finding.message


def test_a_self_attribute_set_from_a_rebound_parameter_names_both_lines():
    # Modelled on OpenNMT-tf's trainer (`if mixed: optimizer = LossScaleOptimizer(optimizer)`, then
    # `self._optimizer = optimizer`), the optimizer read from an object the codemod does not follow; our own code.
    source = """\
        import tensorflow as tf


        class Trainer:
            def __init__(self, settings, mixed):
                optimizer = settings.optimizer
                if mixed:
                    optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
                self._optimizer = optimizer

            def step(self, tape, loss, variables):
                scaled = self._optimizer.get_scaled_loss(loss)
                self._optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        """
    (finding,) = _findings(source)[w.LOOP_SHIM_NOTE]
    assert "`self._optimizer` is set at line 9 to `optimizer`, and `optimizer` is bound again at line 8" in (
        finding.message
    )


def test_super_as_a_receiver_says_how_to_mark_the_line():
    source = """\
        import tensorflow as tf

        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")


        class Clipped(tf.keras.optimizers.Adam):
            def apply_gradients(self, grads_and_vars, clip_norm=0.5, **kwargs):
                return super().apply_gradients(grads_and_vars, "clipped", **kwargs)
        """
    found = _findings(source)
    finding = next(f for code in (w.TF24_CALL_NOT_PROVEN,) for f in found.get(code, []))
    assert "`super()` is the base class" in finding.message and "# lossscale-compat: ignore" in finding.message


def test_a_wrapper_classs_own_loop_method_on_self_is_not_a_loop_call():
    # Modelled on GAN trainers' optimizer wrapper classes, which define `get_unscaled_gradients` and call it on
    # `self`; our own code. The wrap's own unscaled gradients are returned, which blocks the rewrite, not `self`.
    source = """\
        import tensorflow as tf


        class Optimizer:
            def __init__(self, model, mixed):
                self.model = model
                self.optimizer = tf.keras.optimizers.Adam(1e-3)
                if mixed:
                    self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(self.optimizer, "dynamic")

            def get_unscaled_gradients(self, scaled_gradients):
                return self.optimizer.get_unscaled_gradients(scaled_gradients)

            def minimize(self, scaled_loss, tape):
                gradients = self.get_unscaled_gradients(tape.gradient(scaled_loss, self.model.trainable_variables))
                self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        """
    (finding,) = _findings(source)[w.LOOP_SHIM_NOTE]
    assert "The loop is traced, but the unscaled gradients of the call at line 12" in finding.message
