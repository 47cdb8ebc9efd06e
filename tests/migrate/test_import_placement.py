"""Where the codemod puts the imports it adds: at the module's top, unless the module imports TensorFlow only
inside a guard or a function; then beside that import, so the module still imports without TensorFlow."""

from __future__ import annotations

import textwrap

import pytest

from lossscale_compat.codemods import _warnings as w

from .helpers import check, migrate

BOTH = pytest.mark.parametrize("target", ["keras3", "tf_keras"])


def test_a_try_guarded_tensorflow_import_gets_the_new_import_inside_the_guard():
    check(
        """\
        try:
            import tensorflow as tf

            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        except ImportError:
            pass
        """,
        """\
        try:
            import tensorflow as tf
            import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
        except ImportError:
            pass
        """,
    )


def test_an_if_guarded_import_gets_it_in_the_same_block_on_tf_keras():
    check(
        """\
        import os

        if os.environ.get("USE_TF"):
            import tensorflow as tf
            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """,
        """\
        import os

        if os.environ.get("USE_TF"):
            import tensorflow as tf
            import tensorflow
            tensorflow.keras.mixed_precision.set_global_policy("mixed_float16")
        """,
        target="tf_keras",
    )


@BOTH
def test_a_function_importing_tensorflow_spells_the_new_name_through_that_import(target):
    """Stop 50's note: the function's own `import tensorflow as tf` is enough; no `import keras` is added."""
    check(
        """\
        def enable():
            import tensorflow as tf

            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """,
        """\
        def enable():
            import tensorflow as tf

            tf.keras.mixed_precision.set_global_policy("mixed_float16")
        """,
        target,
    )


def test_a_function_importing_tensorflow_only_under_an_if_gets_the_import_in_the_function():
    """An import under an `if` may not have run: the new name gets its own import, beside TensorFlow's."""
    check(
        """\
        def enable(flag):
            if flag:
                import tensorflow as tf
                tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """,
        """\
        def enable(flag):
            if flag:
                import tensorflow as tf
                import keras
                keras.mixed_precision.set_global_policy("mixed_float16")
        """,
    )


@BOTH
def test_each_function_importing_tensorflow_spells_the_new_names_through_its_own_import(target):
    """Each function imports TensorFlow itself, so each site is spelled through that function's `tf`."""
    check(
        """\
        def enable():
            import tensorflow as tf
            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

        def policy():
            import tensorflow as tf
            return tf.keras.mixed_precision.experimental.global_policy()
        """,
        """\
        def enable():
            import tensorflow as tf
            tf.keras.mixed_precision.set_global_policy("mixed_float16")

        def policy():
            import tensorflow as tf
            return tf.keras.mixed_precision.global_policy()
        """,
        target,
    )


def test_a_new_name_used_in_two_functions_without_tensorflow_imports_goes_to_the_top():
    """Neither function binds TensorFlow: an import in the first would leave the second's name unbound."""
    check(
        """\
        from tensorflow.keras.mixed_precision import experimental as mp

        def enable():
            mp.set_policy("mixed_float16")

        def policy():
            return mp.global_policy()
        """,
        """\
        import keras

        def enable():
            keras.mixed_precision.set_global_policy("mixed_float16")

        def policy():
            return keras.mixed_precision.global_policy()
        """,
    )


def test_a_class_body_import_is_not_taken():
    """A name a class body binds is not seen by its methods, so the import goes to the top."""
    new, _ = migrate(
        """\
        def outer():
            class Trainer:
                import tensorflow as tf
                tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """
    )
    assert new.startswith("import keras\n"), new


def test_a_module_level_tensorflow_import_keeps_the_imports_at_the_top():
    """Only TensorFlow's own imports count: a guarded horovod import leaves the new import at the top."""
    loop = """\
        def step(g, vs):
            with tape:
                scaled = opt.get_scaled_loss(l)
            g = opt.get_unscaled_gradients(g)
            keep(g)
            opt.apply_gradients(zip(g, vs))
        """
    guarded = "try:\n    import horovod.tensorflow as hvd\nexcept ImportError:\n    hvd = None\n"
    new, codes = migrate(
        "import tensorflow as tf\n" + guarded
        + "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')\n"
        + textwrap.dedent(loop)
    )
    assert new == (
        "import tensorflow as tf\nimport lossscale_compat\n\n" + guarded
        + "opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())\n" + textwrap.dedent(loop)
    )
    assert codes == [w.LOOP_SHIM_NOTE, w.UNSCALED_GRADIENTS_USED]


def test_the_shim_import_goes_inside_the_guard_too():
    """`import lossscale_compat` imports TensorFlow, so it belongs beside the guarded import as well."""
    new, _ = migrate(
        """\
        try:
            import tensorflow as tf

            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
            with tape:
                scaled = opt.get_scaled_loss(l)
            g = opt.get_unscaled_gradients(g)
            keep(g)
            opt.apply_gradients(zip(g, vs))
        except ImportError:
            pass
        """
    )
    assert new.startswith("try:\n    import tensorflow as tf\n    import lossscale_compat\n\n"), new
