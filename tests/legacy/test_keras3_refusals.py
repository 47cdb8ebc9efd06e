"""On Keras 3, what TF 2.4 code needs and Keras 3 cannot give back fails at first use with an error naming the way
out, raised before Keras runs (no deep traceback): TF1 graph mode with Keras optimizers, and a custom optimizer
written against TF 2.4's `OptimizerV2` used unwrapped in legacy mode."""

import subprocess
import sys
import textwrap
import traceback

import pytest
import tensorflow as tf

import lossscale_compat
import optimizer_v2_programs as programs
from lossscale_compat import _flavour

pytestmark = pytest.mark.skipif(_flavour.keras_has_tf1_graph_mode(), reason="Keras 2 has TF 2.4's OptimizerV2")
WAY_OUT = "TF_USE_LEGACY_KERAS=1"


def frames_in_keras_or_tensorflow(error):
    """The traceback's frames in installed packages (Keras's, TensorFlow's): none when we refuse first."""
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__) if "site-packages" in frame.filename]


def tf24_graph_step(opt):
    """A TF 2.4 step in TF1 graph mode: `minimize` builds the op a Session would run."""
    var = tf.compat.v1.Variable(1.0)
    return opt.minimize(lambda: var * 2.0, var_list=[var])


FORMS = {
    "LossScaleOptimizerV1": lambda inner: tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic"),
    "LossScaleOptimizer": lambda inner: tf.keras.mixed_precision.LossScaleOptimizer(inner),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_graph_mode_minimize_through_either_form_names_the_way_out(legacy_mode, form):
    with tf.Graph().as_default():
        opt = FORMS[form](tf.keras.optimizers.SGD(0.1))
        with pytest.raises(RuntimeError, match="TF1 graph mode") as raised:
            tf24_graph_step(opt)
    assert WAY_OUT in str(raised.value) and f"`{form}.minimize`" in str(raised.value)
    assert frames_in_keras_or_tensorflow(raised.value) == []


def test_graph_mode_plain_keras3_optimizer_names_the_way_out(legacy_mode):
    with tf.Graph().as_default():
        opt, var = tf.keras.optimizers.SGD(0.1), tf.compat.v1.Variable(1.0)
        with pytest.raises(RuntimeError, match="`SGD.apply_gradients` cannot run in TF1 graph mode") as raised:
            opt.apply_gradients([(tf.constant(1.0), var)])
    assert WAY_OUT in str(raised.value)
    assert frames_in_keras_or_tensorflow(raised.value) == []


def test_graph_mode_compile_names_the_way_out(legacy_mode):
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        with pytest.raises(RuntimeError, match="`Model.compile` cannot run in TF1 graph mode") as raised:
            model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    assert WAY_OUT in str(raised.value)
    assert frames_in_keras_or_tensorflow(raised.value) == []


def test_our_class_in_graph_mode_outside_legacy_mode_names_the_way_out():
    with tf.Graph().as_default():
        opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
        with pytest.raises(RuntimeError, match="TF1 graph mode") as raised:
            tf24_graph_step(opt)
    assert WAY_OUT in str(raised.value)


def test_graph_mode_get_gradients_still_works(legacy_mode):
    """TF 2.4's graph-mode `get_gradients` needs no optimizer step, and runs on Keras 3 (TF 2.4 test item 24)."""
    with tf.Graph().as_default():
        var = tf.compat.v1.Variable(5.0)
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(2.0), dynamic=False, initial_scale=10)
        grads = opt.get_gradients(var * 3.0, [var])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            assert session.run(grads)[0] == pytest.approx(3.0)


def test_eager_and_tf_function_are_not_refused(legacy_mode):
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5))
    var = tf.Variable(1.0)
    tf.function(lambda: opt.apply_gradients([(tf.constant(1.0), var)]))()
    assert var.numpy() == pytest.approx(0.5)


def test_unwrapped_optimizer_v2_subclass_names_the_way_out(legacy_mode):
    """TF 2.4's custom optimizer (`_set_hyper`, `_create_slots`, `_resource_apply_dense`) fails where it is built,
    not in Keras 3's constructor (which took its name for a learning rate) or at its first step."""
    custom_class = programs.custom_momentum_sgd_class(tf.keras.optimizers.Optimizer)
    with pytest.raises(TypeError, match="written against TF 2.4's OptimizerV2") as raised:
        custom_class(learning_rate=0.1, momentum=0.5)
    assert WAY_OUT in str(raised.value) and "_resource_apply_dense" in str(raised.value)
    assert frames_in_keras_or_tensorflow(raised.value) == []


def test_keras3_optimizer_subclass_is_not_refused(legacy_mode):
    class Halving(tf.keras.optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            variable.assign_sub(0.5 * gradient)

    var = tf.Variable(1.0)
    Halving(0.1).apply_gradients([(tf.constant(1.0), var)])
    assert var.numpy() == pytest.approx(0.5)


def test_uninstall_puts_keras3s_own_methods_back():
    optimizer = tf.keras.optimizers.Optimizer
    before = (vars(optimizer).get("__init__"), tf.keras.Model.compile)
    lossscale_compat.install()
    assert vars(optimizer).get("__init__") is not before[0]
    lossscale_compat.uninstall()
    assert (vars(optimizer).get("__init__"), tf.keras.Model.compile) == before


def test_tf1_program_run_in_legacy_mode_fails_at_its_own_line(tmp_path):
    """An unmodified TF 2.4 program that disables eager execution gets one error at its `minimize` line."""
    program = tmp_path / "train.py"
    program.write_text(textwrap.dedent("""\
        import tensorflow as tf
        tf.compat.v1.disable_eager_execution()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), "dynamic")
        var = tf.compat.v1.Variable(1.0)
        step = opt.minimize(lambda: var * 2.0, var_list=[var])
        """))
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", str(program)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert f'{program}", line 5' in done.stderr
    assert "RuntimeError: `LossScaleOptimizerV1.minimize` cannot run in TF1 graph mode" in done.stderr
    assert WAY_OUT in done.stderr
