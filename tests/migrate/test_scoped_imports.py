"""Imports planned at every scope (issue 30, pattern 1): a legacy import inside a function, `if`, `try` or class is
removed when a rewrite leaves it unused, rewritten in place when its uses move to one new name, and warned when a use
is left; `try`/`except ImportError` version guards keep working on both sides."""

from __future__ import annotations

import ast
import textwrap

import pytest
from lossscale_compat.codemods import _verify_names, migrate_source
from lossscale_compat.codemods import _warnings as w

from .helpers import check

TARGETS = ("keras3", "tf_keras")


def _silent(source: str, target: str) -> list:
    """The names the migrated `source` leaves that `target` lacks, with no finding on their line."""
    result = migrate_source(textwrap.dedent(source).encode(), target)
    warned = {result.new_line(f.line) for f in result.findings}
    return _verify_names.unwarned(ast.parse(result.new), target, warned)


def test_a_module_imported_in_a_function_goes_when_its_uses_are_rewritten():
    """The issue's example: before, the import stayed and `build()` raised ImportError on TF 2.21."""
    check(
        """\
        import tensorflow as tf

        def build():
            from tensorflow.keras.mixed_precision import experimental as mixed_precision
            policy = mixed_precision.Policy("mixed_float16")
            mixed_precision.set_policy(policy)
            return policy
        """,
        """\
        import tensorflow as tf

        def build():
            policy = tf.keras.mixed_precision.DTypePolicy("mixed_float16")
            tf.keras.mixed_precision.set_global_policy(policy)
            return policy
        """,
    )


@pytest.mark.parametrize(
    ("target", "after"),
    [
        ("keras3", "from keras.mixed_precision import DTypePolicy, set_global_policy"),
        ("tf_keras", "from tensorflow.keras.mixed_precision import Policy, set_global_policy"),
    ],
)
def test_a_from_import_in_a_function_is_rewritten_in_place(target, after):
    uses = "DTypePolicy" if target == "keras3" else "Policy"
    check(
        """\
        def build():
            from tensorflow.keras.mixed_precision.experimental import Policy, set_policy
            set_policy(Policy("mixed_float16"))
        """,
        f"""\
        def build():
            {after}
            set_global_policy({uses}("mixed_float16"))
        """,
        target=target,
    )


def test_an_import_under_a_module_level_if_is_rewritten_in_place():
    check(
        """\
        import os

        if os.environ.get("AMP"):
            from tensorflow.keras.mixed_precision.experimental import set_policy
            set_policy("mixed_float16")
        """,
        """\
        import os

        if os.environ.get("AMP"):
            from keras.mixed_precision import set_global_policy
            set_global_policy("mixed_float16")
        """,
    )


def test_an_aliased_dotted_import_in_a_method_goes():
    check(
        """\
        import tensorflow as tf

        class Trainer:
            def policy(self):
                import tensorflow.keras.mixed_precision.experimental as mpx
                return mpx.global_policy()
        """,
        """\
        import tensorflow as tf

        class Trainer:
            def policy(self):
                return tf.keras.mixed_precision.global_policy()
        """,
    )


def test_an_unused_import_left_alone_in_a_block_becomes_pass_and_keeps_its_comment():
    check(
        """\
        def enable_amp():
            from tensorflow.keras.mixed_precision import experimental as mixed_precision  # AMP
        """,
        """\
        def enable_amp():
            pass  # AMP
        """,
    )


def test_an_import_inside_try_goes_and_the_guard_keeps_its_handler():
    check(
        """\
        import tensorflow as tf

        def setup():
            try:
                from tensorflow.keras.mixed_precision import experimental as mp
                mp.set_policy("mixed_float16")
            except ImportError:
                pass
        """,
        """\
        import tensorflow as tf

        def setup():
            try:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            except ImportError:
                pass
        """,
    )


def test_an_import_whose_use_is_left_is_warned_not_removed():
    check(
        """\
        def name():
            from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
            return LossScaleOptimizer.__name__
        """,
        """\
        def name():
            from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
            return LossScaleOptimizer.__name__
        """,
        codes=[w.IMPORT_KEPT, w.UNSUPPORTED_USE],
    )


def test_an_import_in_a_class_body_is_a_class_attribute_and_is_warned():
    """`self.global_policy()` reads it where no scope sees a use: removing it could break the class."""
    check(
        """\
        class Trainer:
            from tensorflow.keras.mixed_precision.experimental import global_policy
        """,
        """\
        class Trainer:
            from tensorflow.keras.mixed_precision.experimental import global_policy
        """,
        codes=[w.IMPORT_KEPT],
    )


NEW_FIRST_GUARD = """\
    try:
        from tensorflow.keras.mixed_precision import LossScaleOptimizer
    except ImportError:
        from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
    """
OLD_FIRST_GUARD = """\
    try:
        from tensorflow.keras.mixed_precision.experimental import Policy
    except ImportError:
        from tensorflow.keras.mixed_precision import Policy
    """


@pytest.mark.parametrize("guard", [NEW_FIRST_GUARD, OLD_FIRST_GUARD], ids=["new-first", "old-first"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_version_guard_stays_as_it_is_and_silent_on_both_sides(guard, target):
    """Either order runs on TF 2.4 and on the target: the import that fails there is caught."""
    check(guard, guard, target=target)
    assert _silent(guard, target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_version_guard_inside_a_function_stays_as_it_is(target):
    source = "def build():\n" + textwrap.indent(textwrap.dedent(NEW_FIRST_GUARD), "    ")
    check(source, source, target=target)


def test_an_import_with_a_name_bound_twice_is_left_to_its_uses_warnings():
    """Two bindings in one scope: which one a use sees is not known, so the import is not planned."""
    source = """\
        def build(flag):
            if flag:
                from tensorflow.keras.mixed_precision.experimental import set_policy
            else:
                from tensorflow.keras.mixed_precision import set_global_policy as set_policy
            set_policy("mixed_float16")
        """
    new = migrate_source(textwrap.dedent(source).encode(), "keras3").new
    assert b"from tensorflow.keras.mixed_precision.experimental import set_policy" in new


@pytest.mark.parametrize("target", TARGETS)
def test_migrated_scoped_imports_leave_no_silent_name(target):
    source = """\
        import tensorflow as tf

        def a():
            from tensorflow.keras.mixed_precision import experimental as mixed_precision
            mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))

        def b(opt):
            from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
            return LossScaleOptimizer(opt, "dynamic")
        """
    assert _silent(source, target) == []


def test_a_removed_import_that_opened_its_block_takes_the_blank_line_after_it():
    """Before: the block opened on an empty line (`if fp16:` then a blank line), and a blank line carried to the end
    of a block stood before the next definition's own."""
    check(
        """\
        import tensorflow as tf

        def set_precision(fp16):
            if fp16:
                from tensorflow.keras.mixed_precision import experimental as mixed_precision

                mixed_precision.set_policy("mixed_float16")

        def quiet():
            x = 1

            from tensorflow.python.keras.mixed_precision.experimental import device_compatibility_check


        y = 2
        """,
        """\
        import tensorflow as tf

        def set_precision(fp16):
            if fp16:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")

        def quiet():
            x = 1


        y = 2
        """,
        codes=[w.DEVICE_CHECK_DROPPED],
    )
