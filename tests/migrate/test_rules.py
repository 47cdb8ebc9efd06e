"""Before/after strings per rule and per target."""

from __future__ import annotations

import textwrap

import pytest

from lossscale_compat.codemods import _warnings as w

from .helpers import check, migrate


def test_noop_on_modern_code():
    """Should do nothing, since the code already uses the modern API."""
    source = """\
        import tensorflow as tf
        from tensorflow.keras import mixed_precision
        opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        mixed_precision.set_global_policy('mixed_float16')
        """
    check(source, source)
    check(source, source, "tf_keras")


@pytest.mark.parametrize(
    "target, after",
    [
        ("keras3", "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"),
        ("tf_keras", "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"),
    ],
)
def test_lso_dynamic_string(target, after):
    check(
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow as tf\n" + after,
        target,
    )


def test_lso_keyword_arguments_any_order():
    check(
        "import tensorflow as tf\n"
        "o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(loss_scale='dynamic', optimizer=opt)\n",
        "import tensorflow as tf\no = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n",
    )


@pytest.mark.parametrize(
    "scale",
    [
        "tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=1024, increment_period=100)",
        "tf.train.experimental.DynamicLossScale(1024, 100, 2)",
        "tf.compat.v1.mixed_precision.DynamicLossScale(1024, increment_period=100, multiplier=2.0)",
        "{'class_name': 'DynamicLossScale', 'config': {'initial_loss_scale': 1024, 'increment_period': 100}}",
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_lso_dynamic_loss_scale_folded(scale, target):
    check(
        f"import tensorflow as tf\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, {scale})\n",
        "import tensorflow as tf\n"
        "o = tf.keras.mixed_precision.LossScaleOptimizer(opt, initial_scale=1024, dynamic_growth_steps=100)\n",
        target,
    )


@pytest.mark.parametrize(
    "scale",
    [
        "128",
        "tf.mixed_precision.experimental.FixedLossScale(128)",
        "{'class_name': 'FixedLossScale', 'config': {'loss_scale_value': 128}}",
    ],
)
def test_lso_fixed_scale_tf_keras(scale):
    check(
        f"import tensorflow as tf\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, {scale})\n",
        "import tensorflow as tf\n"
        "o = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=128)\n",
        "tf_keras",
    )


def test_lso_fixed_scale_keras3_inline_optimizer_gets_loss_scale_factor():
    check(
        "import tensorflow as tf\n"
        "o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)\n",
        "import tensorflow as tf\no = tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)\n",
    )


def test_lso_fixed_scale_keras3_optimizer_variable_goes_to_the_shim():
    """The optimizer is built elsewhere, so Keras 3's `loss_scale_factor` cannot be set: TF 2.4's class keeps it."""
    check(
        "import tensorflow as tf\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 128)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\no = lossscale_compat.LossScaleOptimizer(opt, 128)\n",
        codes=[w.OPTIMIZER_SHIM_NOTE],
    )


def test_from_import_is_rewritten_in_place():
    check(
        """\
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer as LSO
        opt = LSO(opt, 'dynamic')
        """,
        """\
        from keras.mixed_precision import LossScaleOptimizer as LSO
        opt = LSO(opt)
        """,
    )
    check(
        """\
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
        opt = LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        from tensorflow.keras.mixed_precision import LossScaleOptimizer
        opt = LossScaleOptimizer(opt)
        """,
        "tf_keras",
    )


def test_module_alias_is_resolved_and_legacy_import_removed():
    check(
        """\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mpx
        opt = mpx.LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )


def test_module_alias_by_assignment_is_tracked_and_dropped_once_unused():
    check(
        """\
        import tensorflow as tf
        mixed_precision = tf.keras.mixed_precision.experimental
        mixed_precision.set_policy('mixed_float16')
        opt = mixed_precision.LossScaleOptimizer(opt, loss_scale='dynamic')
        """,
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy('mixed_float16')
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )


def test_module_alias_by_assignment_of_a_modern_module_is_used_for_the_new_name():
    check(
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision
        def build(model, opt):
            model.compile(mp.experimental.LossScaleOptimizer(opt, 'dynamic'))
        """,
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision
        def build(model, opt):
            model.compile(mp.LossScaleOptimizer(opt))
        """,
    )


def test_module_alias_by_assignment_with_a_use_left_alone_stays_and_is_warned():
    source = """\
        import tensorflow as tf
        exp = tf.keras.mixed_precision.experimental
        print(exp)
        opt = exp.LossScaleOptimizer(opt, 'dynamic')
        """
    check(
        source,
        source.replace("exp.LossScaleOptimizer(opt, 'dynamic')", "tf.keras.mixed_precision.LossScaleOptimizer(opt)"),
        codes=[w.IMPORT_KEPT, w.UNSUPPORTED_USE],
    )


def test_a_function_local_module_alias_is_tracked_and_dropped_once_unused():
    check(
        """\
        import tensorflow as tf
        def main():
            gpus = tf.config.list_physical_devices('GPU')
            mixed_precision = tf.keras.mixed_precision.experimental
            mixed_precision.set_policy(mixed_precision.Policy('mixed_float16'))
            return gpus
        """,
        """\
        import tensorflow as tf
        def main():
            gpus = tf.config.list_physical_devices('GPU')
            tf.keras.mixed_precision.set_global_policy(tf.keras.mixed_precision.DTypePolicy('mixed_float16'))
            return gpus
        """,
    )


def test_a_function_local_alias_does_not_leak_into_another_function():
    source = """\
        import tensorflow as tf
        def a():
            mp = tf.keras.mixed_precision.experimental
            model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))
        def b(mp):
            return mp.LossScaleOptimizer(opt, 'dynamic')
        """
    new, codes = migrate(source)
    assert new == textwrap.dedent(source).replace(
        "    mp = tf.keras.mixed_precision.experimental\n    model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))",
        "    model.compile(tf.keras.mixed_precision.LossScaleOptimizer(opt))",
    )
    assert codes == []


def test_a_name_assigned_twice_is_not_a_module_alias():
    source = """\
        import tensorflow as tf
        exp = tf.keras.mixed_precision.experimental
        exp = other
        opt = exp.LossScaleOptimizer(opt, 'dynamic')
        """
    new, codes = migrate(source)
    assert new == textwrap.dedent(source)
    assert w.UNSUPPORTED_USE in codes


def test_plain_import_of_a_legacy_module_is_removed_once_unused_with_its_pragma():
    check(
        """\
        import tensorflow as tf
        import tensorflow.keras.mixed_precision.experimental as mp, os  # noqa: E402
        # the optimizer
        opt = mp.LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        import tensorflow as tf
        import os  # noqa: E402
        # the optimizer
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )
    check(
        """\
        import tensorflow as tf
        import tensorflow.keras.mixed_precision.experimental as mp  # noqa: E402
        # the optimizer
        opt = mp.LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        import tensorflow as tf
        # the optimizer
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )


def test_import_added_when_no_usable_binding():
    check(
        """\
        from tensorflow.keras.mixed_precision import experimental as mpx
        opt = mpx.LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        import keras

        opt = keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )


def test_compat_v1_alias():
    check(
        """\
        import tensorflow.compat.v1 as tf1
        opt = tf1.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        """,
        """\
        import tensorflow.compat.v1 as tf1
        import keras

        opt = keras.mixed_precision.LossScaleOptimizer(opt)
        """,
    )


@pytest.mark.parametrize(
    "target, policy",
    [("keras3", "DTypePolicy"), ("tf_keras", "Policy")],
)
def test_policy_and_set_policy(target, policy):
    check(
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy(
            tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale='dynamic'))
        p = tf.keras.mixed_precision.experimental.global_policy()
        """,
        f"""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy(
            tf.keras.mixed_precision.{policy}('mixed_float16'))
        p = tf.keras.mixed_precision.global_policy()
        """,
        target,
    )


def test_policy_fixed_loss_scale_goes_to_the_run_time_fallback():
    check(
        "import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\np = lossscale_compat.Policy('mixed_float16', loss_scale=128)\n",
        codes=[w.POLICY_FALLBACK_NOTE],
    )


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_policy_whose_loss_scale_is_read_goes_to_the_run_time_fallback(target):
    """The modern policy has no `loss_scale`: a Policy the module reads it from keeps TF 2.4's class (LSC135)."""
    modern = "keras.mixed_precision.DTypePolicy" if target == "keras3" else "tensorflow.keras.mixed_precision.Policy"
    new, codes = migrate(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        policy = mixed_precision.Policy('mixed_float16')
        print(policy.loss_scale)
        other = mixed_precision.Policy('float32')
        print(other.compute_dtype)
        """,
        target,
    )
    assert "policy = lossscale_compat.Policy('mixed_float16')\n" in new
    assert f"other = {modern}('float32')\n" in new
    assert "experimental" not in new
    assert codes == [w.POLICY_FALLBACK_NOTE]


@pytest.mark.parametrize("set_by_name", [False, True])
def test_global_policy_loss_scale_read_is_warned_only_where_a_policy_set_may_lack_one(set_by_name):
    """Every Policy of a module that reads `global_policy().loss_scale` keeps TF 2.4's class; a policy set by name
    would be the target's, which has no loss scale, so the read is warned then (LSC106)."""
    source = f"""\
        import tensorflow as tf
        tf.keras.mixed_precision.experimental.set_policy({"'mixed_float16'" if set_by_name else "tf.keras.mixed_precision.experimental.Policy('mixed_float16')"})
        print(tf.keras.mixed_precision.experimental.global_policy().loss_scale)
        """
    new, codes = migrate(source)
    assert "experimental" not in new
    assert "global_policy().loss_scale" in new
    if set_by_name:
        assert codes == [w.POLICY_LOSS_SCALE]
    else:
        assert "lossscale_compat.Policy('mixed_float16')" in new
        assert codes == [w.POLICY_FALLBACK_NOTE]


def test_get_layer_policy():
    check(
        "import tensorflow as tf\np = tf.keras.mixed_precision.experimental.get_layer_policy(model.layers[0])\n",
        "import tensorflow as tf\np = model.layers[0].dtype_policy\n",
    )


def test_get_layer_policy_from_tf23s_private_module_of_its_own():
    """TF <= 2.3 kept get_layer_policy in its own private module, not in `policy` (checked on TF 2.3.0)."""
    check(
        """\
        from tensorflow.python.keras.mixed_precision.experimental import get_layer_policy
        from tensorflow.python.keras.mixed_precision.experimental import policy
        p = get_layer_policy.get_layer_policy(layer)
        policy.set_policy("mixed_float16")
        """,
        """\
        import keras

        p = layer.dtype_policy
        keras.mixed_precision.set_global_policy("mixed_float16")
        """,
    )


def test_graph_rewrite_becomes_explicit_wrap_with_note():
    check(
        "import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n",
        codes=[w.GRAPH_REWRITE_NOTE],
    )


def test_standalone_loss_scale_uses_shim_with_note():
    check(
        "import tensorflow as tf\nls = tf.mixed_precision.experimental.DynamicLossScale(multiplier=4)\n",
        "import tensorflow as tf\nimport lossscale_compat\n\nls = lossscale_compat.DynamicLossScale(multiplier=4)\n",
        codes=[w.SHIM_NOTE],
    )
    check(
        "from tensorflow.train.experimental import FixedLossScale\nls = FixedLossScale(8)\n",
        "from lossscale_compat import FixedLossScale\nls = FixedLossScale(8)\n",
        codes=[w.SHIM_NOTE],
    )


def test_folded_loss_scale_import_is_removed():
    check(
        """\
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
        from tensorflow.mixed_precision.experimental import DynamicLossScale
        opt = LossScaleOptimizer(opt, DynamicLossScale(256))
        """,
        """\
        from keras.mixed_precision import LossScaleOptimizer
        opt = LossScaleOptimizer(opt, initial_scale=256)
        """,
    )


_LSO_LINE = "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
_LSO_LINE_AFTER = "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"


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


_LSO_LINE_ON_SHIM = "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n"


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


@pytest.mark.parametrize(
    "scale, after, codes",
    [
        ("my_scale", "my_scale", [w.OPTIMIZER_SHIM_NOTE]),
        (
            "tf.mixed_precision.experimental.DynamicLossScale(multiplier=3)",
            "lossscale_compat.DynamicLossScale(multiplier=3)",
            [w.OPTIMIZER_SHIM_NOTE, w.SHIM_NOTE],
        ),
        ("*args", "*args", [w.OPTIMIZER_SHIM_NOTE]),
        ("{'class_name': 'Other', 'config': {}}", "{'class_name': 'Other', 'config': {}}", [w.OPTIMIZER_SHIM_NOTE]),
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_lso_unprovable_loss_scale_goes_to_the_shim_with_the_same_arguments(scale, after, codes, target):
    """lossscale_compat's class keeps TF 2.4's behaviour for whatever the value is at run time."""
    check(
        f"import tensorflow as tf\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, {scale})\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\no = lossscale_compat.LossScaleOptimizer(opt, {after})\n",
        target,
        codes=codes,
    )


def test_lso_from_import_goes_to_the_shim_import():
    check(
        "from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer\n"
        "o = LossScaleOptimizer(opt, my_scale)\n",
        "from lossscale_compat import LossScaleOptimizer\no = LossScaleOptimizer(opt, my_scale)\n",
        codes=[w.OPTIMIZER_SHIM_NOTE],
    )


def test_rebound_name_is_never_rewritten():
    source = """\
        import tensorflow as tf
        if cond:
            tf = other
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        """
    new, codes = migrate(source)
    assert "experimental.LossScaleOptimizer(opt, 'dynamic')" in new
    assert codes == [w.AMBIGUOUS_NAME]


def test_shadowed_name_is_never_rewritten():
    source = """\
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
        def f(LossScaleOptimizer):
            return LossScaleOptimizer(opt, 'dynamic')
        """
    new, codes = migrate(source)
    assert "    return LossScaleOptimizer(opt, 'dynamic')\n" in new
    assert codes == [w.AMBIGUOUS_NAME]


@pytest.mark.parametrize(
    "check_call",
    [
        "isinstance(o, {cls})",
        "issubclass(type(o), {cls})",
        "isinstance(o, ({cls}, int))",
    ],
)
def test_isinstance_against_experimental_class_goes_to_the_run_time_fallback(check_call):
    cls = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"
    check(
        f"import tensorflow as tf\nok = {check_call.format(cls=cls)}\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\nok = {check_call.format(cls='lossscale_compat.AnyLossScaleOptimizer')}\n",
        codes=[w.CLASS_CHECK_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "use",
    [
        "isinstance = print\nok = isinstance(o, {cls})",  # not the built-in
        "ok = isinstance(o, classinfo={cls})",
        "ok = type(o) is {cls}",
    ],
)
def test_other_class_uses_of_the_experimental_class_stay_warned(use):
    source = f"import tensorflow as tf\n{use.format(cls='tf.keras.mixed_precision.experimental.LossScaleOptimizer')}\n"
    check(source, source, codes=[w.UNSUPPORTED_USE])


def test_suppression_comment():
    source = """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # lossscale-compat: ignore
        """
    check(source, source)


def test_multiline_call_keeps_layout():
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt,
            loss_scale='dynamic',
        )
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            opt,
        )
        """,
    )


_FIXED = "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), {})"


@pytest.mark.parametrize("value", ["3", "100", "0.3", "1e-50"])
def test_fixed_scale_keras3_not_power_of_two_goes_to_the_shim(value):
    """Keras 3 divides by `loss_scale_factor`; TF 2.4 multiplied by the reciprocal, equal only for 2**k."""
    source = f"import tensorflow as tf\no = {_FIXED.format(value)}\n"
    after = (
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        f"o = lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), {value})\n"
    )
    check(source, after, codes=[w.OPTIMIZER_SHIM_NOTE])
    assert migrate(source, "tf_keras")[0] != source


@pytest.mark.parametrize("value", ["128", "0.5", "1024.0"])
def test_fixed_scale_keras3_power_of_two_is_rewritten(value):
    check(
        f"import tensorflow as tf\no = {_FIXED.format(value)}\n",
        f"import tensorflow as tf\no = tf.keras.optimizers.SGD(0.1, loss_scale_factor={value})\n",
    )


def test_fixed_scale_keras3_visible_compile_gets_auto_scale_loss_false():
    """Keras 3 compile() would otherwise wrap the optimizer in a dynamic LossScaleOptimizer under mixed_float16."""
    check(
        f"""\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy('mixed_float16')
        opt = {_FIXED.format(128)}
        model.compile(opt, loss='mse')
        other.compile(optimizer=opt)
        print(opt.learning_rate)
        """,
        """\
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy('mixed_float16')
        opt = tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)
        model.compile(opt, loss='mse', auto_scale_loss=False)
        other.compile(optimizer=opt, auto_scale_loss=False)
        print(opt.learning_rate)
        """,
    )


def test_fixed_scale_keras3_inline_in_compile():
    check(
        f"import tensorflow as tf\nmodel.compile(loss='mse', optimizer={_FIXED.format(128)})\n",
        "import tensorflow as tf\n"
        "model.compile(loss='mse', optimizer=tf.keras.optimizers.SGD(0.1, loss_scale_factor=128), auto_scale_loss=False)\n",
    )


@pytest.mark.parametrize(
    "use",
    [
        "train(model, opt)",  # escapes: the callee may compile it under mixed_float16
        "model.compile(opt, auto_scale_loss=True)",
        "model.compile(opt, **kw)",
        "opt = None",  # bound twice
    ],
)
def test_fixed_scale_keras3_unseen_compile_goes_to_the_shim(use):
    source = f"import tensorflow as tf\nopt = {_FIXED.format(128)}\n{use}\n"
    after = (
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        f"opt = lossscale_compat.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)\n{use}\n"
    )
    check(source, after, codes=[w.OPTIMIZER_SHIM_NOTE])


@pytest.mark.parametrize(
    "initial, after",
    [("2 ** 124", "float(2 ** 124)"), ("SCALE", "float(SCALE)"), ("1024", "1024"), ("2.0 ** 15", "float(2.0 ** 15)")],
)
def test_dynamic_initial_scale_is_made_float_like_tf24(initial, after):
    """TF 2.4 took float(initial_loss_scale); Keras 3 cannot build its variable from an int beyond int64."""
    check(
        "import tensorflow as tf\n"
        f"o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, tf.mixed_precision.experimental.DynamicLossScale({initial}, 2))\n",
        f"import tensorflow as tf\no = tf.keras.mixed_precision.LossScaleOptimizer(opt, initial_scale={after}, dynamic_growth_steps=2)\n",
    )


@pytest.mark.parametrize(
    "name",
    [
        "tf.train.experimental.disable_mixed_precision_graph_rewrite",
        "tf.compat.v1.train.experimental.disable_mixed_precision_graph_rewrite",
        "tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite",
    ],
)
def test_disable_graph_rewrite_statement_is_removed_with_note(name):
    """Should remove the call, since there is no graph rewrite left to disable; comments move down."""
    check(
        f"""\
        import tensorflow as tf

        # back to float32
        {name}()  # done
        x = 1
        """,
        """\
        import tensorflow as tf

        # back to float32
        # done
        x = 1
        """,
        codes=[w.DISABLE_REMOVED_NOTE],
    )


_DISABLE = "tf.train.experimental.disable_mixed_precision_graph_rewrite"


def test_disable_graph_rewrite_keeps_blocks_valid():
    """Should leave `pass` where a block would be empty, and keep the rest of a `;` line."""
    check(
        f"""\
        import tensorflow as tf
        def f():
            {_DISABLE}()
        if a: {_DISABLE}()
        x = 1; {_DISABLE}()
        def g():
            y = 2
            {_DISABLE}()
            # end of g
        """,
        """\
        import tensorflow as tf
        def f():
            pass
        if a: pass
        x = 1
        def g():
            y = 2
            # end of g
        """,
        codes=[w.DISABLE_REMOVED_NOTE] * 4,
    )


def test_disable_graph_rewrite_from_import_is_removed():
    check(
        """\
        import os
        # graph rewrite off
        from tensorflow.compat.v1.mixed_precision import disable_mixed_precision_graph_rewrite
        disable_mixed_precision_graph_rewrite()
        print(os.sep)
        """,
        """\
        import os
        # graph rewrite off
        print(os.sep)
        """,
        codes=[w.DISABLE_REMOVED_NOTE],
    )


@pytest.mark.parametrize(
    "use",
    [f"z = {_DISABLE}()", f"print({_DISABLE}())", f"f = {_DISABLE}", f"callbacks.append({_DISABLE})"],
)
def test_disable_graph_rewrite_used_as_a_value_calls_lossscale_compats(use):
    """TF2's name is gone; lossscale_compat's function does what TF 2.4's did and returns None as it did."""
    check(
        f"import tensorflow as tf\n{use}\n",
        "import tensorflow as tf\nimport lossscale_compat\n\n"
        + use.replace(_DISABLE, "lossscale_compat.disable_mixed_precision_graph_rewrite")
        + "\n",
        codes=[w.VALUE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "use, code",
    [
        (f"{_DISABLE}(opt)", w.BAD_ARGUMENTS),  # not the TF 2.4 signature; `opt` might have effects
        # TF1's name still exists today, so its value use is left, warned
        ("z = tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()", w.DISABLE_VALUE_USED),
    ],
)
def test_disable_graph_rewrite_other_uses_warn(use, code):
    source = f"import tensorflow as tf\n{use}\n"
    check(source, source, codes=[code])


def test_disable_graph_rewrite_value_used_moves_its_from_import():
    check(
        """\
        from tensorflow.train.experimental import disable_mixed_precision_graph_rewrite
        done = disable_mixed_precision_graph_rewrite()
        """,
        """\
        from lossscale_compat import disable_mixed_precision_graph_rewrite
        done = disable_mixed_precision_graph_rewrite()
        """,
        codes=[w.VALUE_FALLBACK_NOTE],
    )


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        "import tensorflow.compat.v1 as tf\n"
        "o = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, 'dynamic')\n",
        "from tensorflow.compat.v1.mixed_precision import MixedPrecisionLossScaleOptimizer as MP\n"
        "o = MP(opt, 'dynamic')\n",
        "import tensorflow as tf\nok = isinstance(o, tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer)\n",
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_tf1_mixed_precision_loss_scale_optimizer_is_never_rewritten(source, target):
    """Should warn and leave it, since it wraps a TF1 optimizer that has no modern equivalent."""
    check(source, source, target, codes=[w.TF1_LOSS_SCALE_OPTIMIZER])


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\n"
        "float = lambda x: x\n"
        "o = tf.keras.mixed_precision.experimental.LossScaleOptimizer("
        "opt, tf.mixed_precision.experimental.DynamicLossScale(2 ** 124, 2))\n",
        "import tensorflow as tf\n"
        "def f(opt, float):\n"
        "    return tf.keras.mixed_precision.experimental.LossScaleOptimizer("
        "opt, tf.mixed_precision.experimental.DynamicLossScale(SCALE))\n",
    ],
)
def test_dynamic_initial_scale_with_float_shadowed_warns(source):
    """Should warn and leave it, since `float(...)` would call the module's own `float`."""
    check(source, source, codes=[w.NAME_CLASH])


def test_dynamic_literal_initial_scale_ignores_shadowed_float():
    """Should rewrite, since a small int literal needs no `float(...)`."""
    check(
        "import tensorflow as tf\nfloat = 3\n"
        "o = tf.keras.mixed_precision.experimental.LossScaleOptimizer("
        "opt, tf.mixed_precision.experimental.DynamicLossScale(1024))\n",
        "import tensorflow as tf\nfloat = 3\no = tf.keras.mixed_precision.LossScaleOptimizer(opt, initial_scale=1024)\n",
    )


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_multiline_call_keeps_closing_paren_on_its_own_line(target):
    check(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05),
            loss_scale='dynamic'
        )
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            opt,
            tf.mixed_precision.experimental.DynamicLossScale(1024, 100)
        )
        p = tf.keras.mixed_precision.experimental.Policy(
            'mixed_float16', loss_scale='dynamic'
        )
        """,
        f"""\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05)
        )
        o = tf.keras.mixed_precision.LossScaleOptimizer(
            opt,
            initial_scale=1024,
            dynamic_growth_steps=100
        )
        p = tf.keras.mixed_precision.{"DTypePolicy" if target == "keras3" else "Policy"}(
            'mixed_float16'
        )
        """,
        target,
    )


def test_multiline_compile_keeps_closing_paren_on_its_own_line():
    check(
        f"""\
        import tensorflow as tf
        opt = {_FIXED.format(128)}
        model.compile(
            opt,
            loss='mse'
        )
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)
        model.compile(
            opt,
            loss='mse',
            auto_scale_loss=False
        )
        """,
    )


def test_argument_moved_from_last_place_drops_its_closing_newline():
    check(
        """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(loss_scale='dynamic', optimizer=opt
        )
        """,
        """\
        import tensorflow as tf
        o = tf.keras.mixed_precision.LossScaleOptimizer(opt
        )
        """,
    )


@pytest.mark.parametrize(
    "policy",
    [
        "Policy('mixed_float16', loss_scale=128)",
        "Policy('mixed_float16', loss_scale=tf.mixed_precision.experimental.FixedLossScale(128))",
        "Policy('mixed_float16', loss_scale={'class_name': 'FixedLossScale', 'config': {'loss_scale_value': 128}})",
        "Policy('mixed_float16', loss_scale=None)",
        "Policy('float32', loss_scale=128)",
    ],
)
@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_policy_with_explicit_non_dynamic_loss_scale_goes_to_the_run_time_fallback(policy, target):
    """Which models' compile() the loss scale reaches is not provable (docs/codemod.md), so TF 2.4's Policy decides
    it at run time: lossscale_compat.Policy with the same arguments."""
    source = f"""\
        import tensorflow as tf
        policy = tf.keras.mixed_precision.experimental.{policy}
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype=policy)])
        model.compile(tf.keras.optimizers.SGD(0.1), loss='mse')
        """
    new, codes = migrate(source, target)
    assert (
        f"policy = lossscale_compat.{policy.replace('tf.mixed_precision.experimental.', 'lossscale_compat.')}\n" in new
    )
    assert "experimental" not in new
    assert codes[0] == w.POLICY_FALLBACK_NOTE
    assert set(codes[1:]) <= {w.SHIM_NOTE}


@pytest.mark.parametrize(
    "inner",
    [
        "tf.keras.optimizers.Adam(1e-3)",
        "tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9))",
        "tf.keras.optimizers.SGD(learning_rate=tf.keras.optimizers.schedules.InverseTimeDecay(0.1, 1, 0.5))",
        "tf.keras.optimizers.RMSprop(0.1, use_ema=True)",
    ],
)
def test_dynamic_wrap_of_an_iteration_keyed_optimizer_gets_the_iterations_note(inner):
    """Should note on Keras 3 only, since Keras 2 still counts skipped steps in `iterations`."""
    before = (
        f"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer({inner}, 'dynamic')\n"
    )
    after = f"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer({inner})\n"
    check(before, after, "keras3", codes=[w.ITERATIONS_NOTE])
    check(before, after, "tf_keras")


def test_iterations_note_follows_a_single_assignment():
    """Should note an Adam built on its own line, and stay quiet when the name is bound twice."""
    check(
        """\
        import tensorflow as tf
        inner = tf.keras.optimizers.Adam()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, 'dynamic')
        """,
        """\
        import tensorflow as tf
        inner = tf.keras.optimizers.Adam()
        opt = tf.keras.mixed_precision.LossScaleOptimizer(inner)
        """,
        codes=[w.ITERATIONS_NOTE],
    )
    check(
        """\
        import tensorflow as tf
        inner = tf.keras.optimizers.Adam()
        inner = tf.keras.optimizers.SGD()
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(inner, 'dynamic')
        """,
        """\
        import tensorflow as tf
        inner = tf.keras.optimizers.Adam()
        inner = tf.keras.optimizers.SGD()
        opt = tf.keras.mixed_precision.LossScaleOptimizer(inner)
        """,
    )


@pytest.mark.parametrize(
    "inner",
    ["tf.keras.optimizers.SGD(0.1, momentum=0.9)", "tf.keras.optimizers.RMSprop(learning_rate=0.1, use_ema=False)"],
)
def test_no_iterations_note_for_an_optimizer_that_does_not_read_iterations(inner):
    check(
        f"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer({inner}, 'dynamic')\n",
        f"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer({inner})\n",
    )


def test_no_iterations_note_for_a_fixed_scale():
    """Should stay quiet, since a fixed scale never skips a step."""
    check(
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.Adam(), 128)\n",
        "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(loss_scale_factor=128)\n",
    )


def test_a_models_optimizer_scale_read_is_renamed_on_keras3():
    """`model.optimizer.loss_scale` is Keras 3's `dynamic_scale`; assignments are not reads and are left alone."""
    before = """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        print(float(self.model.optimizer.loss_scale))
        model.optimizer.loss_scale = 3
        """
    new, codes = migrate(before)
    assert "print(float(self.model.optimizer.dynamic_scale))\n" in new
    assert "model.optimizer.loss_scale = 3\n" in new
    assert codes == [w.SCALE_READ_NOTE, w.UNSUPPORTED_USE]
    assert migrate(before, "tf_keras")[0].count(".optimizer.loss_scale") == 2


def test_suppression_comment_after_a_form_feed():
    # A form feed is no line break for Python or libcst's positions, so the suppressed line is the one named.
    source = """\
        import tensorflow as tf
        \x0c
        o = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')  # lossscale-compat: ignore
        p = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        """
    check(
        source,
        source.replace(
            "p = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')",
            "p = tf.keras.mixed_precision.LossScaleOptimizer(opt)",
        ),
    )


def test_local_aliases_of_two_functions_of_one_name_stay_apart():
    # The second `f` redefines the first (as notebook exports do): each alias is its own function's.
    check(
        """\
        import tensorflow as tf
        def f():
            mp = tf.keras.mixed_precision.experimental
            model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))
        def f(mp):
            model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))
        def f():
            mp = tf.keras.mixed_precision.experimental
            model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))
        """,
        """\
        import tensorflow as tf
        def f():
            model.compile(tf.keras.mixed_precision.LossScaleOptimizer(opt))
        def f(mp):
            model.compile(mp.LossScaleOptimizer(opt, 'dynamic'))
        def f():
            model.compile(tf.keras.mixed_precision.LossScaleOptimizer(opt))
        """,
    )


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_module_alias_with_uses_left_goes_to_lossscale_compats_module(target):
    """A use with no rule keeps the alias; the alias then names lossscale_compat.keras_experimental (LSC137)."""
    new, codes = migrate(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision


        class Scaled(mixed_precision.LossScaleOptimizer):
            pass


        mixed_precision.set_policy('mixed_float16')
        """,
        target,
    )
    assert new.startswith("from lossscale_compat import keras_experimental as mixed_precision\n")
    assert "class Scaled(mixed_precision.LossScaleOptimizer):" in new
    assert "mixed_precision.set_global_policy('mixed_float16')" in new
    assert codes == [w.MODULE_FALLBACK_NOTE, w.UNSUPPORTED_USE]


def test_module_alias_with_a_use_outside_lossscale_compats_module_stays_warned():
    source = """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        print(mixed_precision.__name__)
        """
    new, codes = migrate(source)
    assert new == textwrap.dedent(source)
    assert w.IMPORT_KEPT in codes


_TWO_LSOS = """\
    import tensorflow as tf

    def test_configs():
        a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        b = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        {check}
    """
_TWO_LSOS_AFTER = """\
    import tensorflow as tf
    {imports}
    def test_configs():
        a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        {check}
    """


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_config_comparison_assert_becomes_assert_config_equivalent(target):
    check(
        _TWO_LSOS.format(check="assert a.get_config() == b.get_config()"),
        _TWO_LSOS_AFTER.format(
            imports="import lossscale_compat.testing\n", check="lossscale_compat.testing.assert_config_equivalent(a, b)"
        ),
        target,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


def test_config_comparison_in_unittest_assert_equal_becomes_assert_config_equivalent():
    check(
        """\
        import unittest
        import tensorflow as tf

        class T(unittest.TestCase):
            def test_configs(self):
                a = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
                b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                self.assertEqual(a.get_config(), b.get_config())
        """,
        """\
        import unittest
        import tensorflow as tf
        import lossscale_compat.testing

        class T(unittest.TestCase):
            def test_configs(self):
                a = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                b = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
                lossscale_compat.testing.assert_config_equivalent(a, b)
        """,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


@pytest.mark.parametrize(
    "compared",
    [
        "assert a.get_config() != b.get_config()",  # on Keras 3 always true: a person says what was meant
        "assert not a.get_config() == b.get_config()",
        "assert a.get_config() == b.get_config(), 'same settings'",  # the message would be lost
        "same = a.get_config() == b.get_config()",  # not an assertion
        "assert a.get_config() == other.get_config()",  # one side not known to be a loss-scale optimizer
        "self.assertNotEqual(a.get_config(), b.get_config())",
        "self.assertTrue(a.get_config() == b.get_config())",
    ],
)
def test_config_comparison_that_cannot_be_rewritten_is_warned_and_left(compared):
    check(
        _TWO_LSOS.format(check=compared),
        _TWO_LSOS_AFTER.format(imports="", check=compared),
        codes=[w.CONFIG_COMPARED],
    )


@pytest.mark.parametrize(
    "source",
    [
        # neither receiver is known to be a loss-scale optimizer (layers, models, a parameter)
        "import tensorflow as tf\ndef test(x, y):\n    assert x.get_config() == y.get_config()\n",
        "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())\n"
        "assert layer.get_config() == tf.keras.layers.Dense(1).get_config()\n",
        # bound twice: which object it is depends on the path taken
        "import keras\na = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())\nb = a\n"
        "if flag:\n    a = keras.optimizers.SGD()\nassert a.get_config() == b.get_config()\n",
    ],
)
def test_config_comparison_of_unknown_receivers_is_left_alone_silently(source):
    check(source, source)
    check(source, source, "tf_keras")


def test_config_comparison_in_a_file_already_on_the_modern_api_is_rewritten():
    """A test file migrated before holds no TF 2.4 name: the prefilter still lets it through."""
    check(
        """\
        import keras

        def test_configs():
            a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            assert a.get_config() == b.get_config()
        """,
        """\
        import keras
        import lossscale_compat.testing

        def test_configs():
            a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), initial_scale=8.0)
            lossscale_compat.testing.assert_config_equivalent(a, b)
        """,
        codes=[w.CONFIG_EQUIVALENCE_NOTE],
    )


def test_config_comparison_where_lossscale_compat_names_something_else_is_warned():
    source = """\
        import keras
        lossscale_compat = None
        a = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())
        b = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())
        assert a.get_config() == b.get_config()
        """
    check(source, source, codes=[w.NAME_CLASH])


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

