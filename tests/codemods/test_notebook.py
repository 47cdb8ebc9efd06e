"""Notebooks: code cells migrated, magics kept, every other byte untouched."""

from __future__ import annotations

import json

from codemods import _warnings as w
from codemods._notebook import migrate_notebook


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


def test_notebook_with_unreproducible_layout_is_skipped():
    cells = [_code("import tensorflow as tf\np = tf.keras.mixed_precision.experimental.global_policy()")]
    before = _notebook(cells).replace(b'"cells": [', b'"cells":  [')
    result = migrate_notebook(before)
    assert result.status == "skipped"
    assert [f.code for f in result.findings] == [w.NOTEBOOK_LAYOUT]
    assert result.new == before


def test_notebook_warning_lines_count_within_the_cell():
    cells = [_code("import tensorflow as tf\n"), _code("x = 1\no = tf.keras.mixed_precision.experimental.LossScaleOptimizer(o, s)")]
    result = migrate_notebook(_notebook(cells))
    assert [(f.line, f.code) for f in result.findings] == [(2, w.LOSS_SCALE_NOT_VISIBLE)]
