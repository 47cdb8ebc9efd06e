"""Notebooks: code cells migrated, magics kept, every other byte untouched."""

from __future__ import annotations

import json

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._notebook import migrate_notebook


def _notebook(cells, indent=1):
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "zeta": "é"},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(nb, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def _code(source, outputs=()):
    return {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": list(outputs), "source": source}


def test_notebook_code_cells_migrated_magics_and_rest_kept():
    output = {"output_type": "stream", "name": "stdout", "text": ["LossScale mixed_precision\n"]}
    cells = [
        _code(["%matplotlib inline\n", "import tensorflow as tf\n", "!pip list"]),
        {"cell_type": "markdown", "metadata": {}, "source": ["tf.keras.mixed_precision.experimental.Policy"]},
        _code(["opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n", "opt?"], [output]),
        _code("%%bash\necho tf.keras.mixed_precision.experimental.Policy\n"),
    ]
    before = _notebook(cells)
    result = migrate_notebook(before)
    assert result.status == "changed"
    cells[2]["source"] = ["opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n", "opt?"]
    assert result.new == _notebook(cells)
    assert migrate_notebook(result.new).status == "unchanged"


def test_notebook_indent_is_kept():
    cells = [_code("import tensorflow as tf\np = tf.keras.mixed_precision.experimental.global_policy()")]
    result = migrate_notebook(_notebook(cells, indent=2))
    cells[0]["source"] = "import tensorflow as tf\np = tf.keras.mixed_precision.global_policy()"
    assert result.new == _notebook(cells, indent=2)


def test_notebook_warning_lines_count_within_the_cell():
    cells = [_code("import tensorflow as tf\n"), _code("x = 1\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, s)")]
    result = migrate_notebook(_notebook(cells))
    assert [(f.line, f.code) for f in result.findings] == [(2, w.TF1_LOSS_SCALE_OPTIMIZER)]


def _markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def test_notebook_warnings_name_their_cell():
    """Should give the index into `cells` (markdown cells count) and the line within that cell."""
    cells = [
        _code("import tensorflow as tf\n"),
        _markdown("tf.keras.mixed_precision.experimental"),
        _code("%matplotlib inline\nx = 1\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, s)"),
        _code("y = 2\n\nz = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(p, t)"),
    ]
    result = migrate_notebook(_notebook(cells))
    assert result.status == "unchanged"
    assert [(f.cell, f.line, f.col, f.code) for f in result.findings] == [
        (2, 3, 4, w.TF1_LOSS_SCALE_OPTIMIZER),
        (3, 3, 4, w.TF1_LOSS_SCALE_OPTIMIZER),
    ]


def test_notebook_warning_lines_after_the_run_follow_the_new_cells():
    """Should place each warning in the migrated cell, after added imports and removed lines."""
    cells = [
        _code("a = mpx.LossScaleOptimizer(o, 'dynamic')\n"
              "b = type(o) is mpx.LossScaleOptimizer"),
        _code("from tensorflow.keras.mixed_precision import experimental as mpx\n"
              "from tensorflow.train.experimental import disable_mixed_precision_graph_rewrite\n"
              "disable_mixed_precision_graph_rewrite()\n"
              "c = type(o) is mpx.LossScaleOptimizer"),
    ]
    result = migrate_notebook(_notebook(cells))
    assert result.status == "changed"
    before = [(f.cell, f.line, f.code) for f in result.findings]
    assert before == [
        (0, 2, w.UNSUPPORTED_USE), (1, 1, w.MODULE_FALLBACK_NOTE), (1, 3, w.DISABLE_REMOVED_NOTE), (1, 4, w.UNSUPPORTED_USE),
    ]
    new_cells = json.loads(result.new)["cells"]
    assert new_cells[0]["source"] == "import keras\n\na = keras.mixed_precision.LossScaleOptimizer(o)\nb = type(o) is mpx.LossScaleOptimizer"
    assert new_cells[1]["source"] == "from lossscale_compat import keras_experimental as mpx\nc = type(o) is mpx.LossScaleOptimizer"
    after = [(f.cell, f.line, f.code) for f in result.new_findings]
    assert after == [
        # The removed lines 2-3 sit between the rewritten import (line 1) and `c = ...` (line 2): the note of the
        # removal goes to line 1, the changed line before them.
        (0, 4, w.UNSUPPORTED_USE), (1, 1, w.MODULE_FALLBACK_NOTE), (1, 1, w.DISABLE_REMOVED_NOTE), (1, 2, w.UNSUPPORTED_USE),
    ]


def test_notebook_unparsable_cell_is_named():
    cells = [_code("import tensorflow as tf\n"), _markdown("x"), _code("p = tf.keras.mixed_precision.experimental.Policy(\n")]
    result = migrate_notebook(_notebook(cells))
    assert result.status == "unchanged"  # the other cells were read; nothing in them to migrate
    assert [(f.cell, f.code) for f in result.findings] == [(2, w.NOTEBOOK_CELL)]


def test_notebook_cell_whose_first_line_is_removed_keeps_its_place():
    """Should migrate, since a removed first line of a cell no longer takes the cell boundary with it."""
    cells = [
        _code("import tensorflow as tf\n"),
        _code("from tensorflow.train.experimental import disable_mixed_precision_graph_rewrite\n"
              "disable_mixed_precision_graph_rewrite()\nx = 1"),
    ]
    result = migrate_notebook(_notebook(cells))
    assert result.status == "changed"
    cells[1]["source"] = "x = 1"
    assert result.new == _notebook(cells)


import pytest  # noqa: E402


@pytest.mark.parametrize("import_cell, use_cell", [
    ("import tensorflow.keras.mixed_precision.experimental as mpx\n", "y = mpx.foo_bar\n"),
    ("from tensorflow.python.keras.mixed_precision.experimental import loss_scale_optimizer as lso\n", "y = lso.foo_bar\n"),
    ("from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer\n", "class A(LossScaleOptimizer): pass\n"),
    ("from tensorflow.keras.mixed_precision import experimental as mpx\n", "y = getattr(mpx, name)\n"),
    ("from tensorflow.keras.mixed_precision import experimental as mp\n", "p = mp.Policy('mixed_float16')\nx = mp.foo_bar(1)\n"),
])
def test_an_import_kept_for_uses_left_alone_is_warned_in_its_own_cell(import_cell, use_cell):
    """Should name the import's cell, the one that fails first when the notebook runs top to bottom."""
    result = migrate_notebook(_notebook([_code(import_cell), _markdown("text"), _code(use_cell)]))
    assert (0, 1, w.IMPORT_KEPT) in [(f.cell, f.line, f.code) for f in result.findings]
    after = result.new_findings if result.new_findings is not None else result.findings
    assert (0, 1, w.IMPORT_KEPT) in [(f.cell, f.line, f.code) for f in after]
