"""The linear line alignment: valid opcodes, difflib's diff where it is unambiguous, right lines on big files."""

from __future__ import annotations

import difflib
import random
from pathlib import Path

from lossscale_compat.codemods import _engine, _linediff

ROOT = Path(__file__).resolve().parents[2]


def _assert_valid(a, b, codes):
    i = j = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert len(a[i1:i2]) == len(b[j1:j2]) and a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))


def test_opcodes_are_valid_and_the_diff_applies_on_random_edits():
    rng = random.Random(13)
    for _ in range(500):
        alphabet = [f"{c}\n" for c in "abcdefg"[: rng.randint(1, 7)]]
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
        b = list(a)
        for _ in range(rng.randint(0, 6)):
            k = rng.randint(0, len(b))
            roll = rng.random()
            if roll < 0.3:
                b.insert(k, rng.choice(alphabet + ["new\n"]))
            elif b and roll < 0.6:
                b.pop(min(k, len(b) - 1))
            elif b:
                b[min(k, len(b) - 1)] = "changed\n"
        codes = _linediff.opcodes(a, b)
        _assert_valid(a, b, codes)
        rebuilt = []
        for tag, i1, i2, j1, j2 in codes:
            rebuilt += a[i1:i2] if tag == "equal" else b[j1:j2]
        assert rebuilt == b


def test_unified_matches_difflib_on_distinct_lines():
    a = [f"line {i}\n" for i in range(60)]
    b = a[:5] + ["inserted\n"] + a[5:30] + a[31:50] + ["changed\n"] + a[51:]
    assert _linediff.unified(a, b, "a/x", "b/x") == list(difflib.unified_diff(a, b, "a/x", "b/x"))
    assert _linediff.unified(a, a, "a/x", "b/x") == []


def test_line_mapper_on_many_identical_lines():
    sites = 20_000
    old = b"import tensorflow as tf\n" + b"a = legacy()\nb = kept()\n" * (sites // 2)
    new = b"import tensorflow as tf\nimport keras\n" + b"a = modern()\nb = kept()\n" * (sites // 2)
    mapped = _linediff.line_mapper(old, new)
    new_lines = new.splitlines()
    for line in (3, 5, sites - 1, sites + 1):  # every `b = kept()` line moves down by the added import
        assert old.splitlines()[line - 1] == b"b = kept()"
        assert mapped(line) == line + 1 and new_lines[line] == b"b = kept()"
    assert mapped(2) in (2, 3) and new_lines[mapped(2) - 1] in (b"import keras", b"a = modern()")


def test_line_mapper_pairs_rewritten_lines_past_deleted_ones():
    # Two calls deleted among rewritten lines: one replace block of 6 old lines and 4 new ones.
    old = (
        b"import tensorflow as tf\n"
        b"a = tf.train.experimental.f(1)\n"
        b"tf.train.experimental.disable()\n"
        b"b = tf.train.experimental.f(2)\n"
        b"tf.train.experimental.disable()\n"
        b"c = tf.train.experimental.f(3)\n"
        b'mp.set_policy("mixed_float16")\n'
        b"kept()\n"
    )
    new = (
        b"import tensorflow as tf\n"
        b"a = lossscale_compat.f(1)\n"
        b"b = lossscale_compat.f(2)\n"
        b"c = lossscale_compat.f(3)\n"
        b'tf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
        b"kept()\n"
    )
    mapped = _linediff.line_mapper(old, new)
    assert [mapped(line) for line in range(1, 9)] == [1, 2, 3, 3, 4, 4, 5, 6]


def test_line_mapper_on_tf24_legacy_names():
    old = (ROOT / "examples" / "tf24" / "legacy_names.py").read_bytes()
    result = _engine.migrate_source(old, "keras3", "legacy_names.py")
    line = 1 + old.splitlines().index(
        b'attempt("graph rewrite of a non-optimizer", '
        b"lambda: tf.train.experimental.enable_mixed_precision_graph_rewrite(3))"
    )
    assert result.new.splitlines()[result.new_line(line) - 1] == (
        b'attempt("graph rewrite of a non-optimizer", lambda: lossscale_compat.enable_mixed_precision_graph_rewrite(3))'
    )


def test_exact_alignment_gives_up_on_large_ambiguous_gaps():
    a = [b"x\n", b"y\n"] * 500
    b = [b"z\n"] + [b"y\n", b"x\n"] * 500
    assert _linediff.opcodes(a, b, exact=True) is None
    _assert_valid(a, b, _linediff.opcodes(a, b))
