"""A big file migrated as two halves on two cores (`codemods/_halves.py`): joined only when one process agrees."""

from __future__ import annotations

import os
import textwrap

import pytest

from lossscale_compat.codemods import _engine, _halves

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITES = (
    "opts.append(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n"
    "ok = isinstance(o, tf.keras.mixed_precision.experimental.LossScaleOptimizer)\n"
)


def halves(source: str, cut_before: str, target: str = "keras3"):
    """(the one-process result, the halves' result or None), cut where the line `cut_before` starts."""
    data = textwrap.dedent(source).encode()
    at = data.index(b"\n" + cut_before.encode()) + 1
    return _engine.transform_code(data, target, "x.py"), _halves.transform_in_halves(data, target, "x.py", at=at)


def cuts(data: bytes, most: int = 12) -> list[int]:
    """Up to `most` places, spread over the file, where `cut` would cut it."""
    found, start = [], 0
    while (at := _halves.cut(data, start)) is not None and at < len(data):
        found.append(at)
        start = at
    return found if len(found) <= most else [found[i * len(found) // most] for i in range(most)]


# Joined: the same bytes and warnings as one process.


def test_flat_file_is_joined_with_the_imports_both_halves_need():
    source = (
        '"""Generated."""\n'
        "import tensorflow as tf\n"
        "\n"
        + SITES * 3
        + "CUT = 1\n"
        + "scale = tf.mixed_precision.experimental.FixedLossScale(128)\n"
        + SITES * 3
    )
    whole, joined = halves(source, "CUT = 1")
    assert joined is not None
    assert joined == whole
    assert b"import lossscale_compat\n" in joined[1]  # needed by the second half only, added at the top
    assert [f.line for f in joined[2]] == sorted(f.line for f in whole[2]) and len(joined[2]) == 13


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_every_joined_cut_of_the_corpus_and_examples_equals_one_process(target):
    roots = [os.path.join(REPO, "tests", "migrate", "corpus"), os.path.join(REPO, "examples")]
    joined = 0
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                with open(os.path.join(folder, name), "rb") as handle:
                    data = handle.read()
                if not _engine.may_match(data, target):
                    continue
                whole = _engine.transform_code(data, target, name)
                for at in cuts(data):
                    result = _halves.transform_in_halves(data, target, name, at=at)
                    if result is not None:
                        assert result == whole, f"{name} cut at byte {at}"
                        joined += 1
    assert joined >= 10  # the halves are joined where they can be, not always refused


def test_migrate_source_with_two_workers_gives_the_one_process_result(monkeypatch):
    data = b"import tensorflow as tf\n" + SITES.encode() * 40
    one = _engine.migrate_source(data, "keras3", "x.py")
    monkeypatch.setattr(_halves, "MIN_BYTES", 0)
    used = []
    real = _halves.transform_in_halves
    monkeypatch.setattr(_halves, "transform_in_halves", lambda *a: used.append(real(*a)) or used[-1])
    two = _engine.migrate_source(data, "keras3", "x.py", workers=2)
    assert used and used[0] is not None
    assert (two.status, two.new, two.findings) == (one.status, one.new, one.findings)


# Refused: each of these halves would differ from one process, so the whole file is migrated in one.


def test_module_alias_bound_in_the_first_half_and_used_in_the_second():
    whole, joined = halves(
        """\
        import tensorflow as tf
        mp = tf.keras.mixed_precision.experimental
        x = 1
        opt = mp.LossScaleOptimizer(opt, 'dynamic')
        """,
        "opt = mp",
    )
    assert joined is None
    assert b"tf.keras.mixed_precision.LossScaleOptimizer(opt)" in whole[1]


def test_name_bound_in_the_second_half_and_used_in_the_first():
    whole, joined = halves(
        """\
        import tensorflow as tf
        def build():
            return tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        x = 1
        tf = None
        """,
        "tf = None",
    )
    assert joined is None
    assert whole[1] == whole[0]  # `tf` is bound twice, so the site is left alone (with a warning)


def test_custom_loop_weighs_the_whole_module():
    whole, joined = halves(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(), 'dynamic')
        x = 1
        scaled = opt.get_scaled_loss(loss)
        """,
        "scaled = ",
    )
    assert joined is None
    assert whole[1] != whole[0]


def test_copied_import_that_one_process_would_rewrite():
    whole, joined = halves(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        x = 1
        policy = mixed_precision.Policy('mixed_float16')
        """,
        "policy = ",
    )
    assert joined is None
    assert b"experimental" not in whole[1]


def test_warning_on_a_copied_import():
    whole, joined = halves(
        """\
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        x = 1
        mixed_precision.set_policy(mixed_precision.Policy('mixed_float16', loss_scale=loss_scale))
        isinstance(o, mixed_precision.LossScaleOptimizer.nothing)
        """,
        "mixed_precision.set_policy",
    )
    assert joined is None
    assert any(f.line == 1 for f in whole[2])


def test_first_half_of_only_imports():
    whole, joined = halves(
        """\
        import tensorflow as tf
        scale = tf.mixed_precision.experimental.FixedLossScale(128)
        """,
        "scale = ",
    )
    assert joined is None
    assert whole[1].startswith(b"import tensorflow as tf\nimport lossscale_compat\n\nscale")


def test_cut_inside_a_string_leaves_a_first_half_that_does_not_parse():
    whole, joined = halves(
        '''\
        import tensorflow as tf
        DOC = """
        x = 1
        """
        y = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        ''',
        "x = 1",
    )
    assert joined is None
    assert whole[1] != whole[0]


def test_halves_with_different_newlines():
    # A new line (the comment of a removed call) takes the module's newline: the file's first line's.
    data = (
        b'"""Doc."""\nimport tensorflow as tf\r\nx = 1\r\n'
        b"tf.train.experimental.disable_mixed_precision_graph_rewrite()  # note\r\ny = 2\r\n"
    )
    at = data.index(b"tf.train")
    assert _halves.transform_in_halves(data, "keras3", "x.py", at=at) is None
    assert b"x = 1\r\n# note\ny = 2" in _engine.transform_code(data, "keras3", "x.py")[1]


def test_failed_second_half_falls_back_to_one_process(monkeypatch):
    parent = os.getpid()
    real = _halves._migrate_half

    def fails_in_the_child(*args):
        if os.getpid() != parent:
            raise MemoryError
        return real(*args)

    monkeypatch.setattr(_halves, "_migrate_half", fails_in_the_child)
    data = b"import tensorflow as tf\n" + SITES.encode() * 4
    assert _halves.transform_in_halves(data, "keras3", "x.py") is None


# Where to cut.


@pytest.mark.parametrize(
    ("source", "cut_line"),
    [
        ("a = 1\nb = 2\n", "b = 2"),
        ("a = 1\n\nc = 3\nd = 4\n", "d = 4"),  # not after a blank line: it would join the first half
        ("a = 1\n# note\nc = 3\nd = 4\n", "d = 4"),  # nor after a comment
        ("if b:\n    c()\nelse:\n    d()\ne = 1\n", "e = 1"),  # `else` continues the `if`
        ("b = 2 + \\\nx\nc = 3\n", "c = 3"),  # a line continued by a backslash
        ("a = 1\n@dec\ndef f():\n    pass\ng = 1\n", "g = 1"),  # not between a decorator and its def
    ],
)
def test_cut_starts_a_top_level_statement(source, cut_line):
    data = source.encode()
    assert _halves.cut(data, start=0) == data.index(b"\n" + cut_line.encode()) + 1


def test_no_place_to_cut():
    assert _halves.cut(b"def f():\n    a = 1\n    b = 2\n    c = 3\n") is None


def test_command_line_on_one_big_file_prints_what_one_process_prints(tmp_path):
    import subprocess
    import sys

    (tmp_path / "big.py").write_bytes(b"import tensorflow as tf\n" + SITES.encode() * 1700)
    assert (tmp_path / "big.py").stat().st_size >= _halves.MIN_BYTES
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = [
        subprocess.run(
            [sys.executable, "-m", "lossscale_compat", "migrate", "--diff", "-j", jobs, "big.py"],
            cwd=tmp_path, capture_output=True, env=env, timeout=120,
        )
        for jobs in ("1", "2")
    ]
    assert done[0].returncode == 1 and done[0].stdout.count(b"\n+opts.append(") == 1700
    assert (done[1].returncode, done[1].stdout, done[1].stderr) == (done[0].returncode, done[0].stdout, done[0].stderr)


def test_no_child_can_be_started(monkeypatch):
    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    data = b"import tensorflow as tf\n" + SITES.encode() * 4
    assert _halves.transform_in_halves(data, "keras3", "x.py") is None
    monkeypatch.setattr(_halves, "MIN_BYTES", 0)
    two = _engine.migrate_source(data, "keras3", "x.py", workers=2)
    one = _engine.migrate_source(data, "keras3", "x.py")
    assert two.status == "changed" and (two.new, two.findings) == (one.new, one.findings)


def test_child_cut_off_while_it_wrote(monkeypatch):
    import pickle

    monkeypatch.setattr(_halves.pickle, "dumps", lambda value: pickle.dumps(value)[:100])
    data = b"import tensorflow as tf\n" + SITES.encode() * 4
    assert _halves.transform_in_halves(data, "keras3", "x.py") is None


def test_import_in_the_second_half_that_could_spell_a_new_name():
    # One process weighs every module-level import when it spells a new name: refused, to be safe.
    whole, joined = halves(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        from tensorflow import keras
        """,
        "from tensorflow import keras",
    )
    assert joined is None
    assert b"tf.keras.mixed_precision.LossScaleOptimizer(opt)" in whole[1]


def test_import_in_the_second_half_that_spells_nothing_new():
    whole, joined = halves(
        """\
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')
        import numpy as np
        other = tf.keras.mixed_precision.experimental.LossScaleOptimizer(sgd, 'dynamic')
        """,
        "import numpy",
    )
    assert joined == whole


@pytest.mark.parametrize(
    ("head", "tail", "refused"),
    [
        ("import tensorflow as tf\nok = 1\n", "ok = 2\nopts.append(o)\n", False),  # assigned in both, read in neither
        ("FLAGS = flags.FLAGS\n", "run(FLAGS.batch_size)\n", True),
        ("def build():\n    pass\n", "model = build()\n", True),
        ("class Net:\n    pass\n", "net = Net()\n", True),
        ("x = 1\n", "scaled = opt.get_scaled_loss(loss)\n", True),
        ("x = 1\n", "from tensorflow import keras\n", True),
        ("x = 1\n", "import numpy as np\n", False),
    ],
)
def test_likely_refused_spares_the_work_of_halves_that_would_not_join(head, tail, refused):
    assert _halves.likely_refused(head.encode(), tail.encode()) is refused


def test_a_big_flat_file_is_cut_and_joined_on_its_own():
    data = b"import tensorflow as tf\n" + SITES.encode() * 200
    joined = _halves.transform_in_halves(data, "keras3", "x.py")
    assert joined is not None and joined == _engine.transform_code(data, "keras3", "x.py")


def test_likely_refused_when_the_second_half_rebinds_a_name_the_first_reads():
    assert _halves.likely_refused(b"import tensorflow as tf\nx = tf.constant(1)\n", b"tf = None\n")


def _reads_names_one_regex(reader: bytes, binder: bytes) -> bool:
    """The filter as it was: one regex of every name `binder` binds, searched in `reader` (quadratic)."""
    import re

    names = {m.group(1) or m.group(2) for m in _halves._TOP_LEVEL_NAME.finditer(binder)}
    if not names:
        return False
    used = re.compile(rb"\b(?:" + b"|".join(map(re.escape, sorted(names))) + rb")\b(?![ \t]*=[^=])")
    return used.search(reader) is not None


@pytest.mark.parametrize(
    "reader",
    [
        b"a = 1\nb: int = 2\n",
        b"print(a)\n",
        b"a == 2\n",
        b"a  =\n",
        b"ab = a_b\n",
        b"f(a=1)\n",
        b"x = 1 if b else 2\n",
        b"c.a = 3\n",
        b"a\t= 4\nb=5\n",
        b"s = 'ab'\n",
        b"a",
    ],
)
def test_the_linear_name_filter_says_what_one_regex_of_every_name_said(reader):
    binder = b"a = 1\nb: int = 2\nasync def c():\n    pass\nclass d:\n    pass\n"
    assert _halves._reads_names_of(reader, binder) is _reads_names_one_regex(reader, binder)
