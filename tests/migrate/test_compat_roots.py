"""Compat roots (issue 30, pattern 2): `tensorflow.compat.v2` and `tensorflow.compat.v1.compat.v2` are TF 2's API and
are rewritten as `tensorflow` is; `tensorflow.compat.v1` stays TF 1's."""

from __future__ import annotations

import ast
import textwrap

import pytest
from lossscale_compat import _mapping
from lossscale_compat.codemods import _prefilter, _verify_names, migrate_source
from lossscale_compat.codemods import _warnings as w

from .helpers import check

TARGETS = ("keras3", "tf_keras")


@pytest.mark.parametrize(
    ("name", "normal"),
    [
        ("tensorflow.compat.v1.compat.v2.train.experimental.X", "tensorflow.compat.v2.train.experimental.X"),
        ("tensorflow.compat.v2.compat.v1.mixed_precision.X", "tensorflow.compat.v1.mixed_precision.X"),
        ("tensorflow.compat.v1.compat.v1.compat.v2.keras", "tensorflow.compat.v2.keras"),
        ("tensorflow.compat.v1.train", "tensorflow.compat.v1.train"),
        ("tensorflow.keras", "tensorflow.keras"),
    ],
)
def test_the_last_compat_namespace_decides(name, normal):
    assert _mapping.normal_name(name) == normal


@pytest.mark.parametrize("target", TARGETS)
def test_the_model_gardens_compat_v2_import_gets_the_graph_rewrite_rewritten(target):
    """Before: the graph rewrite through `import tensorflow.compat.v2 as tf` was left alone, with no warning."""
    check(
        """\
        import tensorflow.compat.v2 as tf

        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(0.1), "dynamic")
        """,
        """\
        import tensorflow.compat.v2 as tf

        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
        """,
        target=target,
        codes=[w.GRAPH_REWRITE_NOTE],
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_compat_v2_root_spells_the_modern_name_through_itself(target):
    """`tf.keras` under `import tensorflow.compat.v2 as tf` is the target's Keras: no `import keras` is added."""
    check(
        """\
        import tensorflow.compat.v2 as tf

        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        """,
        """\
        import tensorflow.compat.v2 as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        """,
        target=target,
    )


@pytest.mark.parametrize(
    ("target", "header", "spelled"),
    [
        ("keras3", "import keras\n", "keras.mixed_precision"),
        ("tf_keras", "import tensorflow\n", "tensorflow.keras.mixed_precision"),
    ],
)
def test_compat_v2_under_a_compat_v1_import_is_tf_2s_api(target, header, spelled):
    """Before: `tf.compat.v2.keras...experimental` under `import tensorflow.compat.v1 as tf` was not seen."""
    check(
        """\
        import tensorflow.compat.v1 as tf

        tf.compat.v2.keras.mixed_precision.experimental.set_policy("mixed_float16")
        opt = tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer(tf.compat.v2.keras.optimizers.SGD(), "dynamic")
        """,
        f"""\
        import tensorflow.compat.v1 as tf
        {header}
        {spelled}.set_global_policy("mixed_float16")
        opt = {spelled}.LossScaleOptimizer(tf.compat.v2.keras.optimizers.SGD())
        """,
        target=target,
    )


def test_compat_v1_stays_tf_1s_api():
    """A TF1 optimizer's graph rewrite under `tensorflow.compat.v1` is TF1 code, which TensorFlow still ships."""
    source = """\
        import tensorflow.compat.v1 as tf

        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.train.GradientDescentOptimizer(0.1))
        """
    check(source, source)


def test_compat_v1_compat_v2_graph_rewrite_is_tf_2s():
    check(
        """\
        import tensorflow.compat.v1 as tf

        opt = tf.compat.v2.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())
        """,
        """\
        import tensorflow.compat.v1 as tf
        import keras

        opt = keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
        """,
        codes=["LSC108"],
    )


def test_the_prefilter_lets_a_compat_v1_compat_v2_name_through():
    source = b"import tensorflow.compat.v1 as tf\nf = tf.compat.v2.train.experimental.enable_mixed_precision_graph_rewrite\n"
    assert _prefilter.may_match_ast(source)


@pytest.mark.parametrize("target", TARGETS)
def test_compat_roots_leave_no_silent_name(target):
    source = textwrap.dedent(
        """\
        import tensorflow.compat.v2 as tf
        import tensorflow.compat.v1 as tf1

        def build(opt):
            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
            opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
            tf1.compat.v2.train.experimental.disable_mixed_precision_graph_rewrite()
            return opt
        """
    )
    result = migrate_source(source.encode(), target)
    warned = {result.new_line(f.line) for f in result.findings}
    assert _verify_names.unwarned(ast.parse(result.new), target, warned) == []
    assert b"experimental" not in result.new
