"""A module held as a value (issue 30, pattern 4): `self.x = tf.keras.mixed_precision.experimental`, assigned once in
its class, is followed into every `self.x.<name>` of the class and removed once they are all rewritten; held any other
way it is warned."""

from __future__ import annotations

import ast
import textwrap

import pytest
from lossscale_compat.codemods import _verify_names, migrate_source
from lossscale_compat.codemods import _warnings as w

from .helpers import check

TARGETS = ("keras3", "tf_keras")


@pytest.mark.parametrize(
    ("target", "policy"),
    [("keras3", "DTypePolicy"), ("tf_keras", "Policy")],
)
def test_a_module_held_on_self_is_followed_and_removed(target, policy):
    """Before: `self._mp.set_policy(...)` was left, and failed with AttributeError on the target."""
    check(
        """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental
                self._mp.set_policy(self._mp.Policy("mixed_float16"))

            def policy(self):
                return self._mp.global_policy()
        """,
        f"""\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                tf.keras.mixed_precision.set_global_policy(tf.keras.mixed_precision.{policy}("mixed_float16"))

            def policy(self):
                return tf.keras.mixed_precision.global_policy()
        """,
        target=target,
    )


def test_a_read_the_codemod_cannot_rewrite_keeps_the_assignment_warned():
    source = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental

            def module(self):
                return self._mp
        """
    check(source, source, codes=[w.IMPORT_KEPT, w.UNSUPPORTED_USE])


def test_a_module_assigned_twice_is_not_followed_and_is_warned():
    """Which module a read sees is not known: the bindings are warned (LSC110), never silently left."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental

            def reset(self):
                self._mp = tf.keras.mixed_precision.experimental
                return self._mp.global_policy()
        """
    )
    for target in TARGETS:
        result = migrate_source(source.encode(), target)
        assert result.new == source.encode()
        assert {f.code for f in result.findings} == {w.UNSUPPORTED_USE}


def test_a_store_from_a_nested_function_stops_the_follow():
    source = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental

                def swap():
                    self._mp = None

                self.swap = swap

            def policy(self):
                return self._mp.global_policy()
        """
    new = migrate_source(textwrap.dedent(source).encode(), "keras3").new
    assert b"self._mp.global_policy()" in new


@pytest.mark.parametrize("target", TARGETS)
def test_followed_module_values_leave_no_silent_name(target):
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental

            def build(self, opt):
                return self._mp.LossScaleOptimizer(opt, "dynamic")
        """
    )
    result = migrate_source(source.encode(), target)
    warned = {result.new_line(f.line) for f in result.findings}
    assert _verify_names.unwarned(ast.parse(result.new), target, warned) == []
    assert b"experimental" not in result.new
