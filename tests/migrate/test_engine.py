"""Never do harm: byte-exact fixtures, splicing, prefilter, per-file errors."""

from __future__ import annotations

import importlib.util
import os

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._engine import may_match, may_match_ast, migrate_source, splice, transform_code

LEGACY = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
MODERN = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"


@pytest.mark.parametrize(
    "before, after",
    [
        (LEGACY.replace(b"\n", b"\r\n"), MODERN.replace(b"\n", b"\r\n")),
        (b"\xef\xbb\xbf" + LEGACY, b"\xef\xbb\xbf" + MODERN),
        (
            b"# -*- coding: latin-1 -*-\ns = '\xe9'\n" + LEGACY,
            b"# -*- coding: latin-1 -*-\ns = '\xe9'\n" + MODERN,
        ),
        (
            b"import tensorflow as tf\nif x:\n\tif y:\n\t\t" + LEGACY.split(b"\n")[1] + b"\n",
            b"import tensorflow as tf\nif x:\n\tif y:\n\t\t" + MODERN.split(b"\n")[1] + b"\n",
        ),
        (LEGACY.rstrip(b"\n"), MODERN.rstrip(b"\n")),
    ],
    ids=["crlf", "bom", "latin1-cookie", "tabs", "no-final-newline"],
)
def test_byte_exact_fixtures(before, after):
    result = migrate_source(before)
    assert result.status == "changed"
    assert result.new == after
    assert migrate_source(result.new).status == "unchanged"


def test_unrelated_file_is_not_parsed(monkeypatch):
    """Should not call libcst at all, since the bytes cannot match."""
    import lossscale_compat.codemods._engine as engine

    def boom(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(engine, "transform_code", boom)
    assert not may_match(b"import numpy as np\nx = np.ones(3)\n")
    assert migrate_source(b"import numpy as np\nx = np.ones(3)\n").status == "unchanged"
    # Mentions the words, but no name resolves to a TF 2.4 API: the ast check stops it.
    text = b"import tensorflow as tf\n# mixed_precision experimental LossScale\nx = 1\n"
    assert migrate_source(text).status == "unchanged"


def test_syntax_error_is_an_error_not_a_write():
    result = migrate_source(LEGACY + b"def (:\n")
    assert result.status == "error"
    assert result.error.startswith("cannot parse")
    assert result.new == result.old


def test_undecodable_file_is_an_error():
    result = migrate_source(b"# -*- coding: utf-8 -*-\ns = '\xff\xfe'\n" + LEGACY)
    assert result.status == "error"


def test_splice_applies_changes_only_where_lines_agree():
    original = b"a = 1\nexcept_line :\nb = 2\nc = 3\n"
    printed = b"a = 1\nexcept_line:\nb = 2\nc = 3\n"
    assert splice(original, printed, b"a = 1\nexcept_line:\nb = 22\nc = 3\n") == (
        b"a = 1\nexcept_line :\nb = 22\nc = 3\n"
    )
    assert splice(original, printed, b"a = 1\nexcept_line: x\nb = 2\nc = 3\n") is None
    assert splice(original, printed, b"import z\na = 1\nexcept_line:\nb = 2\nc = 3\n") == (
        b"import z\na = 1\nexcept_line :\nb = 2\nc = 3\n"
    )


def test_inexact_round_trip_is_spliced(monkeypatch):
    """Should keep the bytes libcst would lose, since only changed lines are spliced in."""
    import lossscale_compat.codemods._engine as engine

    real = engine.transform_code

    def lossy(data, target, filename=""):
        printed, new, findings = real(data, target, filename)
        return printed.replace(b"x :", b"x:"), new.replace(b"x :", b"x:"), findings

    monkeypatch.setattr(engine, "transform_code", lossy)
    before = b"y = {x :1 for x in z}\n" + LEGACY
    result = migrate_source(before)
    assert result.status == "changed"
    assert result.new == b"y = {x :1 for x in z}\n" + MODERN


def test_inexact_round_trip_on_changed_line_is_skipped(monkeypatch):
    import lossscale_compat.codemods._engine as engine

    real = engine.transform_code

    def lossy(data, target, filename=""):
        printed, new, findings = real(data, target, filename)
        return printed.replace(b"(opt, ", b"(opt,"), new, findings

    monkeypatch.setattr(engine, "transform_code", lossy)
    result = migrate_source(LEGACY)
    assert result.status == "skipped"
    assert [f.code for f in result.findings] == [w.NOT_BYTE_EXACT]
    assert result.new == LEGACY


def test_line_map_points_at_lines_after_the_change():
    before = (
        b"from tensorflow.keras.mixed_precision import experimental as mpx\n"
        b"a = mpx.LossScaleOptimizer(opt, 'dynamic')\n"
        b"b = type(opt) is mpx.LossScaleOptimizer\n"
    )
    result = migrate_source(before)
    (finding,) = [f for f in result.findings if f.code == w.UNSUPPORTED_USE]
    assert finding.line == 3
    new_lines = result.new.decode().splitlines()
    assert new_lines[result.line_map(finding.line) - 1] == "b = type(opt) is mpx.LossScaleOptimizer"


def _package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def test_zero_diff_over_installed_keras():
    """Should change nothing in a large unrelated tree."""
    root = _package_dir("keras")
    if root is None:
        pytest.skip("keras is not installed in this environment")
    from lossscale_compat.codemods import _files

    count, changed = 0, []
    for path in _files.walk(root):
        if not path.endswith(".py"):
            continue
        with open(path, "rb") as handle:
            data = handle.read()
        result = migrate_source(data, "keras3", path)
        assert result.status in ("unchanged", "changed"), (path, result.status, result.error)
        if result.status == "changed":
            changed.append(os.path.relpath(path, root).replace(os.sep, "/"))
        count += 1
    assert count > 500
    # Keras 2's own loss-scale optimizer (TF 2.15's keras, under `import tensorflow.compat.v2 as tf`) is TF 2.4's
    # implementation: it names TF 1's loss scales to load TF <= 2.3 configs, which the codemod rewrites as it would
    # in user code. Nothing else in the tree is touched.
    assert set(changed) <= {"src/mixed_precision/loss_scale_optimizer.py"}, changed


SHIM_LOOP = b"""\
import lossscale_compat
import tensorflow as tf

opt = lossscale_compat.KerasLossScaleOptimizer(tf.keras.optimizers.SGD())

def step(x):
    with tf.GradientTape() as tape:
        scaled = opt.get_scaled_loss(tf.reduce_sum(x))
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [x]))
    opt.apply_gradients(zip(grads, [x]))
"""


def test_a_second_run_over_loops_on_our_shim_is_not_parsed():
    """The codemod leaves loops on lossscale_compat's optimizer alone, so the `ast` filter skips such a file."""
    assert may_match(SHIM_LOOP, "keras3") and not may_match_ast(SHIM_LOOP, "keras3")
    printed, new, findings = transform_code(SHIM_LOOP, "keras3")
    assert new == printed and findings == []
    without_shim = SHIM_LOOP.replace(b"lossscale_compat.KerasLossScaleOptimizer", b"make_optimizer")
    assert may_match_ast(without_shim, "keras3")
    with_legacy = SHIM_LOOP + b"tf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
    assert may_match_ast(with_legacy, "keras3")


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _migrated_inputs():
    for folder in ("tests/migrate/corpus", "tests/migrate/corpus_public", "examples/tf24", "examples/project"):
        for name in sorted(os.listdir(os.path.join(REPO, folder))):
            if name.endswith(".py"):
                with open(os.path.join(REPO, folder, name), "rb") as handle:
                    yield f"{folder}/{name}", handle.read()


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_the_ast_filter_skips_only_files_the_codemod_would_leave_alone(target):
    """Over the corpus and the examples, before and after migration: a file the filter skips has nothing to do."""
    inputs = list(_migrated_inputs())
    assert inputs
    skipped_loops = 0
    for path, data in inputs:
        migrated = migrate_source(data, target, path).new
        for version in (data, migrated):
            if not may_match_ast(version, target):
                printed, new, findings = transform_code(version, target, path)
                assert (new, findings) == (printed, []), path
                skipped_loops += b"get_scaled_loss" in version
    assert skipped_loops > 0 or target == "tf_keras"  # the shim-loop skip is exercised on Keras 3


# Each mentions a TF 2.4 name on a line of code, where none of them resolves to TensorFlow's.
SURE_BUT_NOT_TENSORFLOW = [
    b"import tensorflow\nimport keras\nopt = keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
    b"import tensorflow as tf\n\ndef f(mp):\n    return mp.mixed_precision.experimental.DynamicLossScale(2.0)\n",
    b"import tensorflow as tf\nopt = self.train.experimental.enable_mixed_precision_graph_rewrite(opt)  # LossScale\n",
    b'import tensorflow as tf\n"""LossScale, for example:\n\n'
    b'    tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n"""\n',
    b"import tensorflow as tf\nfrom mylib import train\ntrain.experimental.enable_mixed_precision_graph_rewrite(o)\n",
]


def test_surely_matches_reads_code_lines_only():
    from lossscale_compat.codemods._engine import surely_matches

    assert surely_matches(LEGACY)
    assert surely_matches(b"x = 1\n    tf.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite(o)\n")
    assert surely_matches(b"f(tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite)\n")
    assert not surely_matches(b"# tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt)\n")
    assert not surely_matches(b"x = 'tf.keras.mixed_precision.experimental.LossScaleOptimizer'\n")
    assert not surely_matches(b'    "tf.train.experimental.enable_mixed_precision_graph_rewrite "\n')
    assert not surely_matches(b"`tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite` can\n")
    assert not surely_matches(b"x = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n")
    assert not surely_matches(b"x = enable_mixed_precision_graph_rewrite_v2(opt)\n")


def test_a_sure_match_skips_the_ast_filter(monkeypatch):
    """Should go straight to libcst where the bytes show a TF 2.4 name in code, and migrate as before."""
    import lossscale_compat.codemods._engine as engine

    def boom(*args, **kwargs):
        raise AssertionError("the ast filter ran")

    expected = migrate_source(LEGACY)
    monkeypatch.setattr(engine, "may_match_parsed", boom)
    result = migrate_source(LEGACY)
    assert (result.status, result.new, result.findings) == ("changed", MODERN, expected.findings)
    with pytest.raises(AssertionError, match="the ast filter ran"):
        migrate_source(b"import tensorflow as tf\n# mixed_precision experimental LossScale\nx = 1\n")


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize(
    "data", SURE_BUT_NOT_TENSORFLOW, ids=["keras", "parameter", "attribute", "docstring", "not-tf"]
)
def test_skipping_the_ast_filter_gives_what_it_would_have(data, target):
    """Where the skip lets through a file the filter would stop, the full transform leaves it unchanged, unwarned."""
    from lossscale_compat.codemods._engine import surely_matches

    assert may_match(data, target) and surely_matches(data) and not may_match_ast(data, target)
    printed, new, findings = transform_code(data, target)
    assert (new, findings) == (printed, [])
    result = migrate_source(data, target)
    # Standalone Keras' `keras.mixed_precision.experimental` is no TF 2.4 name the rules rewrite, but neither target
    # has it: the verifier says so (LSC150); the other files name nothing of TensorFlow's.
    left = [w.NAME_LEFT] if data.startswith(b"import tensorflow\nimport keras\n") else []
    assert (result.status, result.new, [f.code for f in result.findings]) == ("unchanged", data, left)


def _transformed(data, target):
    import libcst as cst
    from libcst.codemod import CodemodContext

    from lossscale_compat.codemods.migrate_loss_scale import MigrateLossScaleCommand

    module = cst.parse_module(data)
    command = MigrateLossScaleCommand(CodemodContext(), target=target, source=data)
    return module, command.transform_module(module), command.input_print


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
def test_the_output_printed_from_the_input_print_is_libcsts_print(target):
    """Over the corpus and the examples, before and after migration: the joined print is libcst's own."""
    reused = fresh = 0
    for path, data in _migrated_inputs():
        for version in (data, migrate_source(data, target, path).new):
            module, new, input_print = _transformed(version, target)
            if input_print is None:
                continue  # a rule placed nodes with PositionProvider, which prints the module itself
            assert input_print.module is module
            assert input_print.print_of(new) == new.code, path
            old_body = {id(statement) for statement in module.body}
            changed = sum(id(statement) not in old_body for statement in new.body)
            fresh += changed
            reused += len(new.body) - changed
    assert reused > 100 and fresh > 10


@pytest.mark.parametrize(
    "data",
    [
        b"# a header\n\n" + LEGACY + b"x = 1\n\n# a footer\n",
        LEGACY.replace(b"\n", b"\r\n") + b"if x:\n\tpass\n",
        LEGACY.rstrip(b"\n"),  # no final newline: libcst's own print
        b"import tensorflow as tf\ntf.train.experimental.disable_mixed_precision_graph_rewrite()\nx = 1\n",
        b'"""Doc."""\nimport tensorflow as tf\nls = tf.mixed_precision.experimental.FixedLossScale(8)\nx = 1\n',
    ],
    ids=["header-footer", "crlf-tabs", "no-final-newline", "removed-statement", "added-import"],
)
def test_the_joined_print_handles_the_modules_ends(data):
    module, new, input_print = _transformed(data, "keras3")
    assert new.code != module.code
    assert input_print.print_of(new) == new.code
    _, new_bytes, _ = transform_code(data, "keras3")
    assert new_bytes == new.bytes


def test_the_joined_print_takes_unchanged_statements_from_the_input_print():
    """Should print only the statements that changed: the others' text comes from the print of the input."""
    import libcst as cst

    from lossscale_compat.codemods import _positions

    module = cst.parse_module(b"# head\na = 1\nb = 2\nc = 3\n# foot\n")
    printed, _ = _positions.starts(module, set())
    assert printed.code == module.code
    printed.code = printed.code.replace("a = 1", "a = 9")  # a stand-in, to tell where each text comes from
    new = module.with_changes(body=[module.body[0], cst.parse_statement("b = 22\n"), module.body[2]])
    assert printed.print_of(new) == "# head\na = 9\nb = 22\nc = 3\n# foot\n"
    moved = module.with_changes(body=[module.body[2], module.body[0]])
    assert printed.print_of(moved) == "# head\nc = 3\na = 9\n# foot\n"
    assert printed.print_of(module) == printed.code  # nothing changed: the print itself


def _all_nodes(module):
    import libcst as cst

    class Collect(cst.CSTVisitor):
        def __init__(self):
            self.nodes = []

        def on_visit(self, node):
            self.nodes.append(node)
            return True

    collect = Collect()
    module.visit(collect)
    return collect.nodes


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_start_positions_are_position_providers(newline):
    """Every node's start, from the print, is PositionProvider's, whatever the newlines (counted two ways)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from lossscale_compat.codemods import _positions

    sources = [data for _, data in _migrated_inputs()]
    sources.append(b'# c\n\nx = """a\nb"""; y = (1,\n  2)\nif x:\n\tz = f(\n\t\t3)  # c\n\n# footer\n')
    checked = 0
    for data in sources:
        text = data.decode("utf-8").replace("\n", newline)
        module = cst.parse_module(text)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        expected = {node: (r.start.line, r.start.column) for node, r in wrapper.resolve(PositionProvider).items()}
        nodes = _all_nodes(module)[1:]  # the module itself is not placed
        printed, places = _positions.starts(module, set(nodes[::3]))
        assert printed.code == module.code
        assert places == {node: expected[node] for node in nodes[::3]}
        checked += len(places)
    assert checked > 1000


def test_the_plain_print_is_libcsts_print():
    """Should print every module as libcst does, without its per-node position bookkeeping."""
    import libcst as cst

    from lossscale_compat.codemods import _positions

    sources = [data for _, data in _migrated_inputs()]
    sources += [b"", b"\n", b"# only a comment", LEGACY.rstrip(b"\n"), LEGACY.replace(b"\n", b"\r\n"), b"x = 1\r"]
    for data in sources:
        module = cst.parse_module(data)
        assert _positions.plain_code(module) == module.code
