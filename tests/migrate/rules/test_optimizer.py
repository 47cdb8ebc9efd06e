"""rules/optimizer: `LossScaleOptimizer(opt, loss_scale)` construction, the experimental class as a value or in a
class check, and the iterations note (before/after strings per target)."""

from __future__ import annotations

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


_FIXED = "tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), {})"

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])

_LSO = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


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


@pytest.mark.parametrize(
    "check_call",
    [
        "isinstance(o, {cls})",
        "issubclass(type(o), {cls})",
        "isinstance(o, ({cls}, int))",
    ],
)
@BOTH
def test_isinstance_against_experimental_class_checks_the_targets_class(check_call, target):
    """Every loss-scale optimizer of today's stack, lossscale_compat's included, is an instance of the target's class
    (tests/test_runtime_fallbacks.py), so the check needs no lossscale_compat name (issue 42)."""
    cls = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"
    check(
        f"import tensorflow as tf\nok = {check_call.format(cls=cls)}\n",
        f"import tensorflow as tf\nok = {check_call.format(cls='tf.keras.mixed_precision.LossScaleOptimizer')}\n",
        target,
        codes=[w.CLASS_CHECK_NOTE],
    )


@BOTH
def test_isinstance_through_a_from_import_checks_the_targets_class(target):
    check(
        "from tensorflow.keras.mixed_precision import experimental as mp\nok = isinstance(o, mp.LossScaleOptimizer)\n",
        (
            "import keras\n\nok = isinstance(o, keras.mixed_precision.LossScaleOptimizer)\n"
            if target == "keras3"
            else "import tensorflow\n\nok = isinstance(o, tensorflow.keras.mixed_precision.LossScaleOptimizer)\n"
        ),
        target,
        codes=[w.CLASS_CHECK_NOTE],
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
        # what TF 2.4's class had and the inner optimizer lacks: AttributeError once folded (issue 42)
        "print(opt.loss_scale)",
        "print(opt.inner_optimizer.learning_rate)",
        "assert not opt.dynamic",
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


def test_iterations_note_follows_the_wrap_rebinding():
    """Should note the Adam of TF 2.4's guide idiom, `opt = LossScaleOptimizer(opt)`, at module level and in a
    function: the name holds the Adam where the wrap reads it."""
    check(
        """\
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        opt = tf.keras.optimizers.Adam(1e-3)
        opt = mixed_precision.LossScaleOptimizer(opt, loss_scale="dynamic")
        """,
        """\
        import tensorflow as tf
        opt = tf.keras.optimizers.Adam(1e-3)
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        """,
        codes=[w.ITERATIONS_NOTE],
    )
    check(
        """\
        import tensorflow as tf
        def train(model, learning_rate):
            optimizer = tf.keras.optimizers.Adam(learning_rate)
            optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
            model.compile(optimizer=optimizer, loss="mse")
        """,
        """\
        import tensorflow as tf
        def train(model, learning_rate):
            optimizer = tf.keras.optimizers.Adam(learning_rate)
            optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
            model.compile(optimizer=optimizer, loss="mse")
        """,
        codes=[w.ITERATIONS_NOTE],
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


# ---------------------------------------------------------------- gap E: the class kept as a value; private imports
@BOTH
def test_experimental_lso_class_assigned_to_a_name_names_the_shim(target):
    check(
        """\
        import tensorflow as tf

        def add_loss_scaling(optimizer, new_api):
            if new_api:
                wrapper, kwargs = tf.keras.mixed_precision.LossScaleOptimizer, {}
            else:
                wrapper = tf.keras.mixed_precision.experimental.LossScaleOptimizer
                kwargs = dict(loss_scale="dynamic")
            return optimizer if isinstance(optimizer, wrapper) else wrapper(optimizer, **kwargs)
        """,
        """\
        import tensorflow as tf
        import lossscale_compat

        def add_loss_scaling(optimizer, new_api):
            if new_api:
                wrapper, kwargs = tf.keras.mixed_precision.LossScaleOptimizer, {}
            else:
                wrapper = lossscale_compat.LossScaleOptimizer
                kwargs = dict(loss_scale="dynamic")
            return optimizer if isinstance(optimizer, wrapper) else wrapper(optimizer, **kwargs)
        """,
        target,
        codes=[w.CLASS_SHIM_NOTE],
    )


@BOTH
@pytest.mark.parametrize(
    "use",
    [
        "wrappers = {{'lso': {cls}}}",
        "register('LossScaleOptimizer', {cls})",
        "def wrapper():\n    return {cls}",
        "classes = [tf.keras.optimizers.SGD, {cls}]",
    ],
)
def test_the_experimental_class_as_a_value_names_lossscale_compats(use, target):
    check(
        f"import tensorflow as tf\n{use.format(cls=_LSO)}\n",
        f"import tensorflow as tf\nimport lossscale_compat\n\n{use.format(cls='lossscale_compat.LossScaleOptimizer')}\n",
        target,
        codes=[w.CLASS_SHIM_NOTE],
    )


@pytest.mark.parametrize(
    "use", ["ok = o.__class__ == {cls}", "ok = o.__class__ in ({cls}, int)", "class C({cls}): pass"]
)
def test_the_experimental_class_compared_or_subclassed_stays_warned(use):
    """Only objects built by lossscale_compat's class would compare equal: which class to compare with is a choice."""
    source = f"import tensorflow as tf\n{use.format(cls=_LSO)}\n"
    check(source, source, codes=[w.UNSUPPORTED_USE])
