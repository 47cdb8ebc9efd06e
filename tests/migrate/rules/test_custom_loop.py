"""rules/custom_loop: `get_scaled_loss`/`get_unscaled_gradients` loops on a traced optimizer (issue 9), `loss_scale`
reads, and the files kept on TF 2.4's contract (LSC120, LSC129, LSC141); untraced receivers are in
test_custom_loop_untraced.py."""

from __future__ import annotations

import textwrap

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


_LSO_LINE = "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"

_LSO_LINE_AFTER = "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"

_LSO_LINE_ON_SHIM = "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"

# ---------------------------------------------------------------- gap A: a second run over migrated code is silent
_TRAINER = """\
    import tensorflow as tf

    class Trainer:
        def build(self, inner):
            self.opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic")

        def step(self, loss_fn, variables):
            with tf.GradientTape() as tape:
                scaled = self.opt.get_scaled_loss(loss_fn())
            grads = self.opt.get_unscaled_gradients(tape.gradient(scaled, variables))
            self.opt.apply_gradients(zip(grads, variables))
    """


def test_custom_loop_keras3():
    check(
        "import tensorflow as tf\n"
        + _LSO_LINE
        + textwrap.dedent("""\
        def step(x, vs):
            with tape:
                scaled = opt.get_scaled_loss(loss(x))
            grads = tape.gradient(scaled, vs)
            grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, vs))
        """),
        "import tensorflow as tf\n"
        + _LSO_LINE_AFTER
        + textwrap.dedent("""\
        def step(x, vs):
            with tape:
                scaled = opt.scale_loss(loss(x))
            grads = tape.gradient(scaled, vs)
            opt.apply_gradients(zip(grads, vs))
        """),
    )


def test_custom_loop_renamed_gradients_are_substituted():
    check(
        """\
        import tensorflow as tf
        def step(scaled_grads, vs):
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
            grads = opt.get_unscaled_gradients(scaled_grads)
            opt.apply_gradients(zip(grads, vs))
        """,
        """\
        import tensorflow as tf
        def step(scaled_grads, vs):
            opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
            opt.apply_gradients(zip(scaled_grads, vs))
        """,
    )


@pytest.mark.parametrize(
    "use, code",
    [
        ("print(g)", w.GRADIENTS_LOGGED),
        ("tf.summary.histogram('grads', g[0])", w.GRADIENTS_LOGGED),
        ("g, _ = tf.clip_by_global_norm(g, 1.0)", w.GRADIENTS_CLIPPED),
        ("g = [tf.clip_by_norm(x, 5.0) for x in g]", w.GRADIENTS_CLIPPED),
        ("norm = tf.linalg.global_norm(g)", w.GRADIENTS_NORM_TAKEN),
        ("for x in g:\n                tf.print(tf.norm(x))", w.GRADIENTS_NORM_TAKEN),
        ("accumulated[0].assign_add(g[0])", w.GRADIENTS_ACCUMULATED),
        ("total += g[0]", w.GRADIENTS_ACCUMULATED),
        ("g = [a + b for a, b in zip(g, carried)]", w.GRADIENTS_ACCUMULATED),
        ("keep(g)", w.UNSCALED_GRADIENTS_USED),
    ],
)
def test_unscaled_gradients_used_elsewhere_keep_the_file_on_tf24s_contract_and_say_where(use, code):
    """Keras 3's class would take scaled gradients: clipping, norms, sums and logs of them would all change.
    The file keeps our class with TF 2.4's contract, so the loop runs unchanged; the note says where they go."""
    loop = f"""\
        def step(g, vs):
            with tape:
                scaled = opt.get_scaled_loss(l)
            g = opt.get_unscaled_gradients(g)
            {use}
            opt.apply_gradients(zip(g, vs))
        """
    new, codes = migrate("import tensorflow as tf\n" + _LSO_LINE + textwrap.dedent(loop))
    assert new == "import tensorflow as tf\nimport lossscale_compat\n\n" + _LSO_LINE_ON_SHIM + textwrap.dedent(loop)
    assert codes == [w.LOOP_SHIM_NOTE, code]


@pytest.mark.parametrize(
    "source",
    [
        # a parameter: any object with these method names
        "def step(opt, l):\n    return opt.get_scaled_loss(l)\n",
        # an attribute: not provably the optimizer that was built
        "def step(self, l):\n    return self.optimizer.get_scaled_loss(l)\n",
        # a name bound to something that is not a TF 2.4 LossScaleOptimizer
        "opt = make_optimizer()\nscaled = opt.get_scaled_loss(l)\n",
        "def step(opt, g, vs):\n    g = opt.get_unscaled_gradients(g)\n    opt.apply_gradients(zip(g, vs))\n",
    ],
)
def test_custom_loop_unproven_receiver_is_left_alone_with_warning(source):
    new, codes = migrate(source)
    assert new == source.replace(_LSO_LINE, _LSO_LINE_AFTER)
    assert codes == [w.RECEIVER_NOT_PROVEN]


def test_custom_loop_that_cannot_be_traced_keeps_the_files_optimizers_on_tf24s_class():
    """A name bound twice: the loop's calls stay valid because the optimizers are built with our class."""
    before = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 1024)\n"
        "scaled = opt.get_scaled_loss(l)\n"
    )
    after = (
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "opt = lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(), 1024)\n"
        "scaled = opt.get_scaled_loss(l)\n"
    )
    # The fixed scale cannot become `loss_scale_factor` (the name is rebound), so it keeps TF 2.4's class as is.
    check(before, after, codes=[w.LOOP_SHIM_NOTE, w.OPTIMIZER_SHIM_NOTE])


def test_custom_loop_receiver_bound_in_enclosing_scope_is_proven():
    new, codes = migrate("import tensorflow as tf\n" + _LSO_LINE + "def f(l):\n    return opt.get_scaled_loss(l)\n")
    assert new.endswith("def f(l):\n    return opt.scale_loss(l)\n")
    assert codes == []


def test_custom_loop_untouched_on_tf_keras():
    source = "def f(opt, l):\n    return opt.get_scaled_loss(l)\n"
    check(source, source, "tf_keras")


def test_a_models_optimizer_scale_read_is_renamed_on_keras3():
    """`model.optimizer.loss_scale` is Keras 3's current scale, `scale_loss(1.0)` (its `dynamic_scale` exists only
    once built); assignments are not reads and are left alone."""
    before = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        print(float(self.model.optimizer.loss_scale))
        model.optimizer.loss_scale = 3
        """
    new, codes = migrate(before)
    assert "print(float(self.model.optimizer.scale_loss(1.0)))\n" in new
    assert "model.optimizer.loss_scale = 3\n" in new
    assert codes == [w.SCALE_READ_NOTE, w.UNSUPPORTED_USE]
    assert migrate(before, "tf_keras")[0].count(".optimizer.loss_scale") == 2


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_tf23s_loss_scale_call_is_left_with_its_own_note(target):
    """`opt.loss_scale()` raised TypeError on TF 2.4.0 (tests/goldens/optimizer.json, item 7.14), so no rewrite
    keeps it: on Keras 3 it is left with LSC165, which says to drop the call; Keras 2 raises as TF 2.4 did."""
    before = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        print(opt.loss_scale())
        """
    check(
        before,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        print(opt.loss_scale())
        """,
        target,
        codes=[w.SCALE_CALLED] if target == "keras3" else [],
    )


def test_apply_gradients_of_a_loss_never_scaled_keeps_tf24s_contract_on_keras3():
    """TF 2.4 applied gradients of an unscaled loss as they were; Keras 3's class would divide them."""
    before = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
        "grads = tape.gradient(loss, variables)\n"
        "opt.apply_gradients(zip(grads, variables), 'step')\n"
    )
    after = (
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "grads = tape.gradient(loss, variables)\n"
        "opt.apply_gradients(zip(grads, variables), 'step')\n"
    )
    check(before, after, codes=[w.UNSCALED_APPLY_SHIM_NOTE])


def test_get_gradients_keeps_tf24s_class_on_keras3_even_beside_a_loop():
    before = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
        "scaled = opt.get_scaled_loss(loss)\n"
        "grads = opt.get_gradients(scaled, params)\n"
    )
    after = (
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "scaled = opt.get_scaled_loss(loss)\n"
        "grads = opt.get_gradients(scaled, params)\n"
    )
    check(before, after, codes=[w.UNSCALED_APPLY_SHIM_NOTE])


# ---------------------------------------------------------------- gap H: an LSO that leaves the module (Keras 3)
def test_loss_scale_optimizer_stored_on_another_object_uses_the_keras_shim():
    check(
        """\
        import tensorflow as tf

        def attach(model, fp16):
            model.optimizer = tf.keras.optimizers.Adam(1e-3)
            if fp16:
                model.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(model.optimizer, "dynamic")
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        def attach(model, fp16):
            model.optimizer = tf.keras.optimizers.Adam(1e-3)
            if fp16:
                model.optimizer = lossscale_compat.KerasLossScaleOptimizer(model.optimizer)
        """,
        codes=[w.ESCAPING_SHIM_NOTE],
    )


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
            "    return lossscale_compat.KerasLossScaleOptimizer(opt)\n",
        ),
        (
            "    wrapped = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
            "    return hvd.DistributedOptimizer(wrapped)\n",
            "    wrapped = lossscale_compat.KerasLossScaleOptimizer(opt)\n"
            "    return hvd.DistributedOptimizer(wrapped)\n",
        ),
        (
            "    registry.add(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n",
            "    registry.add(lossscale_compat.KerasLossScaleOptimizer(opt))\n",
        ),
    ],
)
def test_loss_scale_optimizer_returned_or_passed_on_uses_the_keras_shim(body, expected):
    head = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n\ndef build(opt, registry):\n"
    new, codes = migrate(head + body)
    assert new == head.replace("hvd\n", "hvd\nimport lossscale_compat\n") + expected
    assert codes[-1:] == [w.ESCAPING_SHIM_NOTE]


@pytest.mark.parametrize(
    "body",
    [
        "    model.compile(optimizer=tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n",
        "    self.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "    o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n    model.fit(x, optimizer=o)\n",
        "    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
        "    model.compile(optimizer=opt)\n",
    ],
)
def test_loss_scale_optimizer_kept_in_sight_uses_keras_3s_class(body):
    new, codes = migrate("import tensorflow as tf\n\ndef build(self, model, opt, x):\n" + body)
    assert "tf.keras.mixed_precision.LossScaleOptimizer(opt)" in new and "lossscale_compat" not in new
    assert codes == []


def test_escaping_loss_scale_optimizer_is_keras_3s_on_tf_keras():
    check(
        "import tensorflow as tf\ndef f(o):\n    return tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, 'dynamic')\n",
        "import tensorflow as tf\ndef f(o):\n    return tf.keras.mixed_precision.LossScaleOptimizer(o)\n",
        "tf_keras",
    )


def test_second_run_over_an_lsc120_file_finds_nothing():
    first, codes = migrate(_TRAINER)
    # `self.opt` is traced (set once in the class); its unscaled gradients, not bound to a name of the scaled ones, stay.
    assert "lossscale_compat.KerasLossScaleOptimizer(inner)" in first
    assert codes == [w.LOOP_SHIM_NOTE, w.UNSCALED_GRADIENTS_USED]
    second, codes = migrate(first)
    assert second == first
    assert codes == []


def test_loop_calls_on_lossscale_compats_optimizer_are_not_warned():
    source = """\
        import lossscale_compat

        def step(tape, inner, loss, variables):
            opt = lossscale_compat.LossScaleOptimizer(inner, "dynamic")
            grads = opt.get_unscaled_gradients(tape.gradient(opt.get_scaled_loss(loss), variables))
            opt.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[])


def test_loop_calls_without_any_shim_in_the_file_are_rewritten_for_keras3():
    check(
        """\
        def step(opt, tape, loss, variables):
            scaled = opt.get_scaled_loss(loss)
            opt.apply_gradients(zip(opt.get_unscaled_gradients(tape.gradient(scaled, variables)), variables))
        """,
        """\
        def step(opt, tape, loss, variables):
            scaled = opt.scale_loss(loss)
            opt.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        """,
        codes=[w.UNTRACED_LOOP_NOTE, w.UNTRACED_LOOP_NOTE],
    )


def test_second_runs_of_the_tf1_and_escape_rewrites_find_nothing():
    source = """\
        import tensorflow as tf

        def train_op(loss, model):
            opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
            opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, tf.train.experimental.FixedLossScale(128))
            model.optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
            return opt.minimize(loss)
        """
    first, codes = migrate(source)
    assert codes == [w.TF1_KEPT_NOTE, w.TF1_KEPT_NOTE, w.ESCAPING_SHIM_NOTE]
    assert migrate(first) == (first, [])


# ---------------------------------------------------------------- gap G: `.loss_scale` read on Keras 3
def test_loss_scale_read_on_an_unproven_optimizer_is_warned_on_keras3():
    source = """\
        import logging
        import tensorflow as tf

        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

        def log_step(step, optimizer):
            logging.info("step %d loss scale %g", step, optimizer.loss_scale)
        """
    new, codes = migrate(source)
    assert "optimizer.loss_scale)" in new and codes == [w.SCALE_READ_NOT_PROVEN]
    _, codes = migrate(source, "tf_keras")
    assert codes == []  # tf_keras's LossScaleOptimizer still has `loss_scale`


def test_loss_scale_read_on_keras_3s_optimizer_built_here_is_renamed():
    check(
        """\
        import tensorflow as tf

        def build(model, inner):
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, "dynamic")
            model.compile(optimizer=opt)
            print(opt.loss_scale)
        """,
        """\
        import tensorflow as tf

        def build(model, inner):
            opt = tf.keras.mixed_precision.LossScaleOptimizer(inner)
            model.compile(optimizer=opt)
            print(opt.scale_loss(1.0))
        """,
        codes=[w.SCALE_READ_NOTE],
    )


@pytest.mark.parametrize("target, read", [("keras3", "scale_loss(1.0)"), ("tf_keras", "loss_scale")])
def test_loss_scale_read_of_any_name_bound_to_a_wrap_moved_to_keras_3s_class_is_renamed(target, read):
    """Not only receivers named like an optimizer: a name bound once to the wrap is known to be Keras 3's class; a
    policy's `loss_scale` beside it is the policy rule's (lossscale_compat's Policy keeps it)."""
    new, codes = migrate(
        """\
        import tensorflow as tf
        wrapped = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1))
        print(float(wrapped.loss_scale))
        policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)
        print(policy.loss_scale)
        """,
        target,
    )
    assert f"print(float(wrapped.{read}))" in new and "print(policy.loss_scale)" in new
    assert (w.SCALE_READ_NOTE in codes) == (target == "keras3")


def test_loss_scale_read_of_a_name_bound_to_a_fixed_factor_is_not_renamed():
    """Keras 3's fixed scale is the inner optimizer's `loss_scale_factor`: no `dynamic_scale` there."""
    new, _ = migrate(
        """\
        import tensorflow as tf
        wrapped = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)
        model.compile(optimizer=wrapped)
        print(wrapped.loss_scale)
        """
    )
    assert "dynamic_scale" not in new and "scale_loss(" not in new


def test_loss_scale_read_in_a_file_with_only_a_tf24_loop_is_warned_on_keras3():
    source = """\
        def step(optimizer, loss):
            print(optimizer.loss_scale)
            return optimizer.get_scaled_loss(loss)
        """
    check(source, source, codes=[w.SCALE_READ_NOT_PROVEN, w.RECEIVER_NOT_PROVEN])


def test_loss_scale_read_in_a_file_without_the_tf24_api_is_left_silently():
    source = "def log(opt):\n    return opt.loss_scale\n"
    check(source, source, codes=[])


# ---------------------------------------------------------------- gap B: untraced receivers whose gradients flow on
@pytest.mark.parametrize(
    "use, code",
    [
        ("grads, _ = tf.clip_by_global_norm(grads, 1.0)", w.GRADIENTS_CLIPPED),
        ("tf.summary.scalar('grad_norm', tf.linalg.global_norm(grads))", w.GRADIENTS_NORM_TAKEN),
        ("self.accumulated = [a + g for a, g in zip(self.accumulated, grads)]", w.GRADIENTS_ACCUMULATED),
        ("tf.print(grads)", w.GRADIENTS_LOGGED),
    ],
)
def test_unscaled_gradients_of_an_untraced_optimizer_get_the_flow_code(use, code):
    source = f"""\
        import tensorflow as tf

        class Step:
            def __call__(self, tape, loss, variables):
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(loss, variables))
                {use}
                self.optimizer.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[code])


def test_unscaled_gradients_of_an_untraced_optimizer_only_applied_keep_lsc113():
    source = """\
        def step(opt, tape, loss, variables):
            grads = opt.get_unscaled_gradients(tape.gradient(loss, variables))
            opt.apply_gradients(zip(grads, variables))
        """
    check(source, source, codes=[w.RECEIVER_NOT_PROVEN])
