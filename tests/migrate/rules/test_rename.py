"""rules/rename: TF 2.4 names spelled as the target's, through imports and module aliases; a rebound or shadowed
name is never rewritten (LSC101)."""

from __future__ import annotations

import textwrap

import pytest

from lossscale_compat.codemods import _warnings as w

from ..helpers import check, migrate


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
