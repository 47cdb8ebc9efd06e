"""The issue 9 rewrites run on the installed TensorFlow: TF1 code kept on `tf.compat.v1`, an escaping LSO, and an
untraced custom loop rewritten for Keras 3."""

from __future__ import annotations

import json
import runpy
import textwrap

import pytest

from lossscale_compat.codemods._engine import migrate_source

tf = pytest.importorskip("tensorflow")
import specs  # noqa: E402  (tests/goldens/, shared with the recorders)
from tf24_goldens import GOLDEN_DIR  # noqa: E402

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


def _train(source: str, optimizer, tmp_path) -> list:
    """Runs `train` from `source` over specs.UNTRACED_LOOP_BATCHES; returns the weights and scale after each."""
    path = tmp_path / f"loop_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(source)
    w = tf.keras.Variable(specs.UNTRACED_LOOP_WEIGHTS, name="w")
    return specs.run_untraced_loop(tf, runpy.run_path(str(path))["train"], optimizer, w)


@pytest.mark.skipif(TARGET != "keras3", reason="the untraced-receiver rewrite is for Keras 3 only")
def test_untraced_loop_rewrite_trains_like_tf24s_loop_on_both_loss_scale_optimizers(tmp_path):
    """The original loop on our shim trains as TF 2.4.0 did (recorded), and the rewritten loop (no
    `get_unscaled_gradients`) gives the same weights and scale at every step on our shim and on Keras 3's own
    LossScaleOptimizer, across a scale growth and a skipped non-finite step."""
    import keras

    import lossscale_compat

    result = migrate_source(specs.UNTRACED_LOOP.encode(), TARGET, "t.py")
    migrated = result.new.decode()
    assert "optimizer.scale_loss(loss)" in migrated and "get_unscaled_gradients" not in migrated
    assert [f.code for f in result.findings] == ["LSC133", "LSC133"]

    settings = specs.UNTRACED_LOOP_OPTIMIZER
    scale = {"initial_scale": settings["initial_scale"], "dynamic_growth_steps": settings["dynamic_growth_steps"]}

    def shim():
        return lossscale_compat.KerasLossScaleOptimizer(keras.optimizers.SGD(settings["learning_rate"]), **scale)

    native = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(settings["learning_rate"]), **scale)
    recorded = json.loads((GOLDEN_DIR / "untraced_loop.json").read_text())["steps"]
    scales = [step["loss_scale"] for step in recorded]
    assert max(scales) > scales[0] and min(scales[1:]) < max(scales)  # the stream grows the scale and halves it
    assert recorded[2]["weights"] == recorded[1]["weights"]  # TF 2.4.0 skipped the non-finite batch
    runs = {
        "the original loop on lossscale_compat's class": _train(specs.UNTRACED_LOOP, shim(), tmp_path),
        "the migrated loop on lossscale_compat's class": _train(migrated, shim(), tmp_path),
        "the migrated loop on Keras 3's class": _train(migrated, native, tmp_path),
    }
    for label, run in runs.items():
        assert [step["loss_scale"] for step in run] == scales, label
        for step, expected in zip(run, recorded):
            assert step["weights"] == pytest.approx(expected["weights"], rel=1e-6), label


def test_a_loss_scale_read_before_the_first_step_gives_the_initial_scale_then_the_current_one():
    """Stop 50's LSC121 bug: on Keras 3 the read became `dynamic_scale`, which exists only once a step has built the
    optimizer (AttributeError before). Both reads must equal what the migrated optimizer itself holds."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 'dynamic')
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer=opt, loss="mse")

        def read():
            return float(opt.loss_scale)

        def step():
            model.train_on_batch(tf.fill((2, 3), float("inf")), tf.zeros((2, 1)))
        """
    )
    result = migrate_source(source.encode(), TARGET, "t.py")
    namespace = {}
    exec(compile(result.new.decode(), "t.py", "exec"), namespace)
    opt = namespace["opt"]
    before = namespace["read"]()
    namespace["step"]()  # builds the optimizer; a non-finite gradient halves the scale
    after = namespace["read"]()
    if TARGET == "keras3":
        assert before == opt.initial_scale
        assert after == float(opt.dynamic_scale.numpy()) and after < before
    else:
        assert after < before
