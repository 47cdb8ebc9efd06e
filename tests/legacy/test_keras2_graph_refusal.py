"""On Keras 2, a loss-scale optimizer over one of Keras 2's `tf.keras.optimizers` (what TF 2.4 code gets in legacy mode
with the opt-out, LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0) cannot run in TF1 graph mode: it says so at
`minimize`/`apply_gradients` and names TF 2.4's optimizers, `tf.keras.optimizers.legacy`, which run there, and legacy
mode's default, which gives them, instead of failing later in `Session.run` ("`fetch` = None")."""

import pytest
import tensorflow as tf

import lossscale_compat
from lossscale_compat import _flavour

pytestmark = pytest.mark.skipif(not _flavour.keras_has_tf1_graph_mode(), reason="Keras 3: test_keras3_refusals.py")

FORMS = {
    "experimental": lambda inner: tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic"),
    "stable": lambda inner: tf.keras.mixed_precision.LossScaleOptimizer(inner),
    "ours": lambda inner: lossscale_compat.KerasLossScaleOptimizer(inner),
}


@pytest.fixture
def opted_out():
    """Legacy mode with today's optimizers as `tf.keras.optimizers`."""
    lossscale_compat.install(tf24_optimizers=False)
    yield
    lossscale_compat.uninstall()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_todays_keras2_optimizer_in_a_tf1_graph_names_the_legacy_optimizers(opted_out, form):
    with tf.Graph().as_default():
        opt, var = FORMS[form](tf.keras.optimizers.SGD(0.1)), tf.compat.v1.Variable(1.0)
        with pytest.raises(RuntimeError, match="cannot run in TF1 graph mode") as raised:
            opt.minimize(lambda: var * 2.0, var_list=[var])
    message = str(raised.value)
    assert "tf.keras.optimizers.legacy" in message and "without its opt-out (`LOSSSCALE_COMPAT_TF24_OPTIMIZERS=0`" in message
    assert "over `SGD`" in message


@pytest.mark.parametrize("form", sorted(FORMS))
def test_tf24s_optimizers_still_train_in_a_tf1_graph(opted_out, form):
    """The way out the message names: the same step over `tf.keras.optimizers.legacy.SGD` runs in a Session."""
    with tf.Graph().as_default():
        opt, var = FORMS[form](tf.keras.optimizers.legacy.SGD(0.25)), tf.compat.v1.Variable(1.0)
        step = opt.minimize(lambda: var * 2.0, var_list=[var])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step)
            assert session.run(var) == 0.5


@pytest.mark.parametrize("form", sorted(FORMS))
def test_by_default_tf24_code_trains_in_a_tf1_graph(form):
    """Legacy mode's default: the same TF 2.4 step, spelled `tf.keras.optimizers.SGD`, runs in a Session."""
    lossscale_compat.install(tf24_optimizers=True)
    try:
        with tf.Graph().as_default():
            opt, var = FORMS[form](tf.keras.optimizers.SGD(0.25)), tf.compat.v1.Variable(1.0)
            step = opt.minimize(lambda: var * 2.0, var_list=[var])
            with tf.compat.v1.Session() as session:
                session.run(tf.compat.v1.global_variables_initializer())
                session.run(step)
                assert session.run(var) == 0.5
    finally:
        lossscale_compat.uninstall()
