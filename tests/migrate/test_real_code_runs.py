"""The issue 9 rewrites run on the installed TensorFlow: TF1 code kept on `tf.compat.v1`, an escaping LSO, and an
untraced custom loop rewritten for Keras 3."""

from __future__ import annotations

import runpy
import textwrap

import pytest

from lossscale_compat.codemods._engine import migrate_source

tf = pytest.importorskip("tensorflow")
from lossscale_compat import _flavour  # noqa: E402

TARGET = "keras3" if _flavour.has_keras3_loss_scaling() else "tf_keras"


def run_migrated(source: str, call: str):
    """Migrates `source`, executes it in a fresh graph, and returns the value of the expression `call`."""
    result = migrate_source(textwrap.dedent(source).encode(), TARGET, "t.py")
    assert result.status == "changed", (result.status, result.error)
    namespace = {}
    with tf.Graph().as_default():
        exec(compile(result.new.decode(), "t.py", "exec"), namespace)
        try:
            return eval(call, namespace)
        finally:
            tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()


def test_graph_rewrite_of_a_tf1_optimizer_with_a_loss_scale_object_builds_a_train_op():
    train_op = run_migrated(
        """\
        import tensorflow as tf

        def train_op(amp):
            x = tf.compat.v1.get_variable("x", initializer=2.0)
            opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
            if amp:
                scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=256, increment_period=10)
                opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, scale)
            return opt, opt.minimize(x * x)
        """,
        "train_op(True)",
    )
    assert type(train_op[0]).__name__ == "MixedPrecisionLossScaleOptimizer"
    assert train_op[1] is not None


def test_loss_scale_object_fed_to_the_tf1_loss_scale_optimizer_is_accepted():
    opt = run_migrated(
        """\
        import tensorflow as tf

        def make():
            scale = tf.train.experimental.FixedLossScale(128)
            return tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer(
                tf.compat.v1.train.AdamOptimizer(0.1), scale)
        """,
        "make()",
    )
    assert type(opt).__name__ == "MixedPrecisionLossScaleOptimizer"
    assert float(opt._loss_scale()) == 128.0  # TF's FixedLossScale, evaluated eagerly outside the graph


@pytest.mark.skipif(TARGET != "keras3", reason="on tf_keras, tf_keras's LossScaleOptimizer keeps TF 2.4's methods")
def test_escaping_loss_scale_optimizer_keeps_tf24s_methods_on_keras3():
    result = migrate_source(
        b"import tensorflow as tf\n"
        b"def wrap(model):\n"
        b"    model.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(model.optimizer, 'dynamic')\n",
        TARGET,
        "t.py",
    )
    namespace = {}
    exec(compile(result.new.decode(), "t.py", "exec"), namespace)

    class Model:
        optimizer = tf.keras.optimizers.SGD(0.1)

    model = Model()
    namespace["wrap"](model)
    for method in ("get_scaled_loss", "get_unscaled_gradients", "loss_scale"):
        assert hasattr(model.optimizer, method), method


_UNTRACED_LOOP = """\
import tensorflow as tf

def train(optimizer, w, batches):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y))
            scaled = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, [w])
        grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, [w]))

    for x, y in batches:
        step(x, y)
"""


def _train(source: str, optimizer, tmp_path) -> list:
    """Runs `train` from `source` one batch at a time, the third batch non-finite; returns (weights, scale) after each."""
    path = tmp_path / f"loop_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(source)
    train = runpy.run_path(str(path))["train"]
    w = tf.keras.Variable([[1.0], [-2.0]], name="w")
    batches = [([[1.0, 2.0]], [[0.5]]), ([[0.5, -1.0]], [[1.0]]), ([[float("inf"), 1.0]], [[0.0]])]
    batches += [([[2.0, 1.0]], [[-1.0]]), ([[1.0, 1.0]], [[3.0]])]
    history = []
    for x, y in batches:
        train(optimizer, w, [(tf.constant(x), tf.constant(y))])
        scale = optimizer.dynamic_scale if hasattr(optimizer, "dynamic_scale") else optimizer.loss_scale
        history.append((w.numpy().ravel().tolist(), float(tf.convert_to_tensor(scale))))
    return history


@pytest.mark.skipif(TARGET != "keras3", reason="the untraced-receiver rewrite is for Keras 3 only")
def test_untraced_loop_rewrite_trains_like_tf24s_loop_on_both_loss_scale_optimizers(tmp_path):
    """The rewritten loop (no `get_unscaled_gradients`) gives the original loop's weights and scale at every step on
    our shim, and on Keras 3's own LossScaleOptimizer, across a scale growth and a skipped non-finite step."""
    import keras

    import lossscale_compat

    result = migrate_source(_UNTRACED_LOOP.encode(), TARGET, "t.py")
    migrated = result.new.decode()
    assert "optimizer.scale_loss(loss)" in migrated and "get_unscaled_gradients" not in migrated
    assert [f.code for f in result.findings] == ["LSC133", "LSC133"]

    def shim():
        return lossscale_compat.KerasLossScaleOptimizer(
            keras.optimizers.SGD(0.05), initial_scale=8, dynamic_growth_steps=2
        )

    original = _train(_UNTRACED_LOOP, shim(), tmp_path)
    on_shim = _train(migrated, shim(), tmp_path)
    native = keras.mixed_precision.LossScaleOptimizer(
        keras.optimizers.SGD(0.05), initial_scale=8, dynamic_growth_steps=2
    )
    on_keras = _train(migrated, native, tmp_path)
    assert [scale for _, scale in original] == [8.0, 16.0, 8.0, 8.0, 16.0]  # grows after 2 finite steps, halves on inf
    assert original[2][0] == original[1][0] and original[3][0] != original[2][0]  # the non-finite step was skipped
    for other in (on_shim, on_keras):
        assert [scale for _, scale in other] == [scale for _, scale in original]
        for (weights, _), (expected, _) in zip(other, original):
            assert weights == pytest.approx(expected, rel=1e-6)
