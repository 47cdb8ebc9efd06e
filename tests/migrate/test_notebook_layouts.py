"""Notebooks as Jupyter, JupyterLab, Colab, VS Code and Kaggle write them: every layout migrates, and every byte
outside the changed cells' `source` stays as it was."""

from __future__ import annotations

import json

import pytest

from lossscale_compat.codemods import _notebook
from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._notebook import migrate_notebook

LEGACY = ["import tensorflow as tf\n", "# 损失缩放 — échelle\n", "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')"]
MODERN = ["import tensorflow as tf\n", "# 损失缩放 — échelle\n", "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)"]


def _cells(code, minor=5):
    ids = {"id": "a1b2"} if minor >= 5 else {}
    return [
        {"cell_type": "markdown", **ids, "metadata": {}, "source": ["# Смешанная точность\n", "混合精度 🚀 `LossScaleOptimizer`"]},
        {"cell_type": "code", "execution_count": 2, **ids, "metadata": {"id": "xYz", "colab": {}},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["é\n"]}], "source": code},
    ]


def _dump(code, indent=1, ensure_ascii=False, newline=True, sort_keys=False, minor=5, separators=None, reverse=False):
    notebook = {"cells": _cells(code, minor), "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
                "nbformat_minor": minor}
    if reverse:
        notebook = dict(reversed(list(notebook.items())))
        for cell in notebook["cells"]:
            cell_items = list(cell.items())
            cell.clear()
            cell.update(reversed(cell_items))
    text = json.dumps(notebook, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators)
    return (text + ("\n" if newline else "")).encode("utf-8")


@pytest.mark.parametrize("indent", [None, 0, 1, 2, 4, "\t"])
@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("newline", [False, True])
@pytest.mark.parametrize("as_list", [False, True])
def test_every_layout_migrates_and_keeps_its_bytes(indent, ensure_ascii, newline, as_list):
    layout = dict(indent=indent, ensure_ascii=ensure_ascii, newline=newline)
    before = _dump(LEGACY if as_list else "".join(LEGACY), **layout)
    result = migrate_notebook(before)
    assert result.status == "changed", result.findings
    assert result.new == _dump(MODERN if as_list else "".join(MODERN), **layout)
    assert result.findings == []


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("order", ["sorted", "reversed"])
@pytest.mark.parametrize("separators", [None, (",", ":")])
def test_key_order_minor_and_separators_are_kept(minor, order, separators):
    layout = dict(minor=minor, sort_keys=order == "sorted", reverse=order == "reversed", separators=separators)
    result = migrate_notebook(_dump(LEGACY, **layout))
    assert result.new == _dump(MODERN, **layout)


def test_odd_whitespace_and_crlf_are_kept_around_the_changed_source():
    before = _dump(LEGACY, indent=2).replace(b'"cells": [', b'"cells" :   [').replace(b"\n", b"\r\n")
    result = migrate_notebook(before)
    old_line = json.dumps(LEGACY[2]).encode()
    new_line = json.dumps(MODERN[2]).encode()
    assert result.new == before.replace(old_line, new_line)


def test_unchanged_lines_of_a_changed_cell_keep_their_escapes():
    """Should keep `\\/` and an escaped é in lines the codemod did not change, as some writers escape them."""
    before = _dump(["import tensorflow as tf  # caf\\u00e9 a\\/b\n", LEGACY[2]])
    before = before.replace(b"caf\\\\u00e9 a\\\\/b", b"caf\\u00e9 a\\/b")
    result = migrate_notebook(before)
    assert result.new == before.replace(json.dumps(LEGACY[2]).encode(), json.dumps(MODERN[2]).encode())


def test_a_line_added_to_a_list_source_follows_the_list_layout():
    before = _dump(["from tensorflow.keras.mixed_precision import experimental as mpx\n", "p = mpx.Policy('mixed_float16')"], indent=2)
    result = migrate_notebook(before, "keras3")
    assert result.status == "changed"
    new = json.loads(result.new)
    expected = json.loads(before)
    expected["cells"][1]["source"] = new["cells"][1]["source"]
    assert result.new == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()


def test_a_layout_that_cannot_be_kept_is_written_as_nbformat_writes_with_a_note(monkeypatch):
    def unreadable(text):
        raise ValueError("no spans")

    monkeypatch.setattr(_notebook, "_source_spans", unreadable)
    before = _dump(LEGACY, indent=4)
    result = migrate_notebook(before)
    assert result.status == "changed"
    assert [f.code for f in result.findings] == [w.NOTEBOOK_LAYOUT]
    expected = json.loads(_dump(MODERN))
    assert result.new == (json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


# Cells whose body is Python behind a magic, and cells that are not migrated: each migrated or named.


def _code_notebook(*sources, cell_type="code"):
    cells = [{"cell_type": cell_type, "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources]
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()


OLD = "tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')"
NEW = "tf.keras.mixed_precision.LossScaleOptimizer(opt)"


@pytest.mark.parametrize("magic", ["%%python", "%%python3", "%%script python", "%%script /usr/bin/python3", "%%writefile train.py", "%%writefile -a train.py"])
def test_cell_magics_whose_body_is_a_program_are_migrated_alone(magic):
    before = _code_notebook("import tensorflow as tf\n", f"{magic}\nimport tensorflow as tf\nopt = {OLD}\n")
    result = migrate_notebook(before)
    assert result.status == "changed", result.findings
    assert result.new == _code_notebook("import tensorflow as tf\n", f"{magic}\nimport tensorflow as tf\nopt = {NEW}\n")


def test_findings_of_a_cell_migrated_alone_count_the_magic_line():
    before = _code_notebook("%%python\nimport tensorflow as tf\n\no = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, s)")
    result = migrate_notebook(before)
    assert [(f.cell, f.line, f.code) for f in result.findings] == [(0, 4, w.TF1_LOSS_SCALE_OPTIMIZER)]


@pytest.mark.parametrize("magic", ["%time ", "%timeit ", "%timeit -n 1 -r 2 ", "%prun "])
def test_line_magics_holding_a_statement_have_it_migrated(magic):
    before = _code_notebook(f"import tensorflow as tf\n{magic}opt = {OLD}\nprint(1)")
    result = migrate_notebook(before)
    assert result.status == "changed", result.findings
    assert result.new == _code_notebook(f"import tensorflow as tf\n{magic}opt = {NEW}\nprint(1)")


def test_ipython_lines_are_kept_as_they_are():
    source = "import tensorflow as tf\n%matplotlib inline\nfiles = !ls\n!pip install x\ntf?\nopt = {}"
    result = migrate_notebook(_code_notebook(source.format(OLD)))
    assert result.new == _code_notebook(source.format(NEW))


def test_a_cell_magic_that_is_not_python_is_named_when_it_names_a_legacy_api():
    before = _code_notebook("import tensorflow as tf\n", f"%%bash\npython -c \"{OLD}\"\n", "%%bash\necho hi\n")
    result = migrate_notebook(before)
    assert [(f.cell, f.code) for f in result.findings] == [(1, w.NOTEBOOK_CELL_LEFT)]
    assert "%%bash" in result.findings[0].message


def test_a_cell_with_no_cell_type_is_named():
    cells = [{"metadata": {}, "source": f"import tensorflow as tf\nopt = {OLD}"}, {"metadata": {}, "source": "x = 1"}]
    before = (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)).encode()
    result = migrate_notebook(before)
    assert result.status == "unchanged"
    assert [(f.cell, f.code) for f in result.findings] == [(0, w.NOTEBOOK_CELL_LEFT)]
    assert "cell_type" in result.findings[0].message


def test_ipython_lines_that_name_a_legacy_api_are_named_where_they_end_up():
    help_line = "tf.keras.mixed_precision.experimental.LossScaleOptimizer?"
    shell_line = f'!python -c "{OLD}"'
    magic_line = "%pinfo tf.mixed_precision.experimental.DynamicLossScale"
    loss_scale = "s = tf.mixed_precision.experimental.DynamicLossScale()"  # adds `import lossscale_compat` above
    cell = f"import tensorflow as tf\n{help_line}\n!pip install x\ntf?\n{shell_line}\n{loss_scale}\n{magic_line}"
    result = migrate_notebook(_code_notebook(cell, f"opt = {OLD}\n{help_line}"))
    assert result.status == "changed"
    left = [(f.cell, f.line, f.detail) for f in result.findings if f.code == w.IPYTHON_LINE_LEFT]
    kinds = ("IPython help (`?`)",), ("a shell command (`!`)",), ("a line magic (`%`)",)
    assert left == [(0, 2, kinds[0]), (0, 5, kinds[1]), (0, 7, kinds[2]), (1, 2, kinds[0])]
    assert "`?`" in result.findings[[f.code for f in result.findings].index(w.IPYTHON_LINE_LEFT)].message
    new_cells = [c["source"].split("\n") for c in json.loads(result.new)["cells"]]
    placed = [(f.cell, new_cells[f.cell][f.line - 1]) for f in result.new_findings if f.code == w.IPYTHON_LINE_LEFT]
    assert placed == [(0, help_line), (0, shell_line), (0, magic_line), (1, help_line)]
    assert [f.line for f in result.new_findings if f.code == w.IPYTHON_LINE_LEFT] != [line for _, line, _ in left]

