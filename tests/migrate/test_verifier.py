"""The verifier (issue 30): no name the target lacks survives migration without a warning at its line."""

from __future__ import annotations

import ast
import pathlib
import textwrap

import pytest
from lossscale_compat.codemods import _engine, _target_names, _verify_names, migrate_source
from lossscale_compat.codemods import _warnings as w

UNSEEN = pathlib.Path(__file__).parent / "unseen"
PUBLIC = pathlib.Path(__file__).parent / "corpus_public"
TARGETS = ("keras3", "tf_keras")


def _silent(result, target: str) -> list:
    """Names the output references that `target` lacks, with no finding on their lines (the verifier's own check,
    run here on the result as the CLI would report it)."""
    warned = {result.new_line(f.line) for f in result.findings}
    return _verify_names.unwarned(ast.parse(result.new), target, warned)


def _migrate(source: str, target: str = "keras3"):
    return migrate_source(textwrap.dedent(source).encode(), target)


def _codes(result) -> list[str]:
    return [f.code for f in result.findings]


def test_every_target_has_recorded_stacks():
    """Each target reads at least one stack's recorded names (codemods/target_names/)."""
    for target in TARGETS:
        assert _target_names.stacks(target), target


@pytest.mark.parametrize("target", TARGETS)
def test_recorded_data_says_what_tf_2_21_lacks(target):
    """TF 2.4's experimental namespace is gone on every recorded stack; the stable one is there."""
    assert _target_names.lacking(target, "tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer")
    assert _target_names.lacking(target, "tensorflow.keras.mixed_precision.LossScaleOptimizer") is None
    assert _target_names.lacking(target, "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite")


@pytest.mark.parametrize(
    "path", sorted([*UNSEEN.glob("*.py"), *PUBLIC.glob("*.py")]), ids=lambda p: f"{p.parent.name}/{p.name}"
)
@pytest.mark.parametrize("target", TARGETS)
def test_unseen_files_leave_no_silent_name_and_reach_the_fixed_point(path, target):
    result = migrate_source(path.read_bytes(), target, str(path))
    assert result.status in ("changed", "unchanged"), result.error
    assert _silent(result, target) == []
    again = migrate_source(result.new, target, str(path))
    assert again.new == result.new  # one pass reaches the fixed point


NO_RULE_SEES = (
    b"import importlib\nmp = importlib.import_module('tensorflow.keras.mixed_precision.experimental')\n",
    b"import tensorflow as tf\nmp = getattr(tf.keras.mixed_precision, 'experimental')\n",
)
"""Spellings no rule reads (the codemod does not follow `getattr` or `importlib`): only the verifier sees them.
The unseen files' silent names of before (scoped imports, compat roots) are rewritten by the rules now."""


@pytest.mark.parametrize("target", TARGETS)
def test_without_the_verifier_names_are_left_silently(monkeypatch, target):
    """Fails if the verifier is off (or does nothing): the rules alone leave names no warning points at."""
    sources = [path.read_bytes() for path in sorted(UNSEEN.glob("*.py"))] + list(NO_RULE_SEES)
    monkeypatch.setattr(_engine, "VERIFY", False)
    silent = []
    for source in sources:
        silent += _silent(migrate_source(source, target), target)
    assert silent
    monkeypatch.setattr(_engine, "VERIFY", True)
    for source in sources:
        assert _silent(migrate_source(source, target), target) == []


def test_an_import_kept_inside_a_function_is_warned():
    result = _migrate(
        """\
        def build():
            from tensorflow.keras.mixed_precision import experimental as mixed_precision
            policy = mixed_precision.Policy("mixed_float16")
            mixed_precision.set_policy(policy)
        """
    )
    assert b"from tensorflow.keras.mixed_precision import experimental" not in result.new or (
        w.NAME_LEFT in _codes(result)
    )
    assert _silent(result, "keras3") == []


def test_the_finding_names_the_name_and_the_stacks():
    result = _migrate(
        """\
        from keras.mixed_precision import autocast_variable
        """
    )
    (finding,) = [f for f in result.findings if f.code == w.NAME_LEFT]
    assert finding.line == 1
    assert "`keras.mixed_precision.autocast_variable`" in finding.message
    assert "tf221-keras3" in finding.message
    assert "lossscale-compat run" in finding.message


@pytest.mark.parametrize(
    "spelling",
    [
        "import tensorflow.compat.v2 as tf\nx = tf.train.experimental.enable_mixed_precision_graph_rewrite\n",
        "import tensorflow.compat.v1 as tf\nx = tf.compat.v2.train.experimental.enable_mixed_precision_graph_rewrite\n",
        "import importlib\nm = importlib.import_module('tensorflow.python.keras.mixed_precision.experimental')\n",
        "import tensorflow as tf\nx = getattr(tf.keras.mixed_precision, 'experimental')\n",
        "from tensorflow.python.training.experimental import mixed_precision\n"
        "x = mixed_precision.enable_mixed_precision_graph_rewrite\n",
    ],
    ids=["compat-v2", "compat-v1-compat-v2", "import_module", "getattr", "private-attribute"],
)
@pytest.mark.parametrize("target", TARGETS)
def test_every_spelling_of_a_lacking_name_is_warned(spelling, target):
    result = migrate_source(spelling.encode(), target)
    assert _silent(result, target) == []
    assert result.findings, "a name the target lacks must carry a warning"


@pytest.mark.parametrize(
    "before",
    [
        'from importlib import import_module as im\nmp = im("tensorflow.keras.mixed_precision.experimental")\n',
        'import importlib\nim = importlib.import_module\nmp = im("tensorflow.keras.mixed_precision.experimental")\n',
        'import importlib as il\nmp = il.import_module("tensorflow.keras.mixed_precision.experimental")\n',
    ],
    ids=["from-import-as", "assigned", "module-alias"],
)
def test_import_module_under_another_name_is_followed(before):
    """The call is left as it is (after == before) and warned (LSC150) on its line, whatever name it is called by."""
    result = migrate_source(before.encode(), "keras3")
    assert result.new.decode() == before
    assert [(f.code, f.line) for f in result.findings] == [(w.NAME_LEFT, before.count("\n"))]
    assert result.findings[0].detail[0] == "tensorflow.keras.mixed_precision.experimental"


def test_a_version_guard_is_not_warned():
    """An import inside `try` with an ImportError handler keeps working on both sides: nothing to say."""
    source = """\
        try:
            from tensorflow.keras.mixed_precision import experimental as mp
        except ImportError:
            mp = None
        """
    result = _migrate(source)
    assert w.NAME_LEFT not in _codes(result)


def test_a_suppression_comment_silences_the_verifier():
    result = _migrate("from keras.mixed_precision import autocast_variable  # lossscale-compat: ignore\n")
    assert w.NAME_LEFT not in _codes(result)


def test_a_name_the_target_has_is_not_warned():
    result = _migrate("import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n")
    assert _codes(result) == []


def test_a_module_held_as_a_value_twice_is_warned_where_it_is_bound():
    """Held once in its class, the module is followed (tests/migrate/test_module_values.py); rebound, it is not."""
    result = _migrate(
        """\
        import tensorflow as tf
        class T:
            def __init__(self):
                self._mp = tf.keras.mixed_precision.experimental
                self._mp = tf.keras.mixed_precision.experimental
            def build(self, opt):
                return self._mp.LossScaleOptimizer(opt, "dynamic")
        """
    )
    assert [f.line for f in result.findings] == [4, 5]
    assert _silent(result, "keras3") == []


@pytest.mark.parametrize("target", TARGETS)
def test_every_name_the_codemod_writes_is_on_every_recorded_stack_of_its_target(target):
    """The oldest Keras 3 (3.0) and tf_keras (2.16) and the pre-release are recorded too: none lacks a new name."""
    from lossscale_compat import _mapping

    written = {getattr(row, target) for row in _mapping.RENAMES} - {None}
    if target == "keras3":  # spelled through `tf.keras` too, where the file already uses it
        written |= {"tensorflow." + name for name in written if name.startswith("keras.")}
    assert len(_target_names.stacks(target)) >= 3
    assert {name: _target_names.lacking(target, name) for name in written if _target_names.lacking(target, name)} == {}
