"""`migrate --check` says per cell what would change in a notebook; `--annotate` and `--strip-annotations` edit
notebooks' cells as they edit .py files, idempotently."""

from __future__ import annotations

import json

from .test_cli import run

TF1 = "o = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(o, s)"


def _notebook(*sources, indent=1):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources]
    cells.insert(1, {"cell_type": "markdown", "metadata": {}, "source": ["# Título"]})
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=indent,
                       ensure_ascii=True) + "\n").encode()


def test_check_names_each_cell_and_its_lines_that_would_change(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(_notebook(
        "import tensorflow as tf\n",
        ["x = 1\n", "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n", "y = 2\n",
         "p = tf.keras.mixed_precision.experimental.global_policy()"],
        "z = 3\n",
    ))
    done = run("--check", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.decode().splitlines() == [
        "would migrate: nb.ipynb",
        "  nb.ipynb[cell 2]: line 2 changed",
        "  nb.ipynb[cell 2]: line 4 changed",
    ]


def test_annotate_writes_notes_into_the_cells_idempotently_and_strip_removes_them(tmp_path):
    before = _notebook("import tensorflow as tf\n", ["%time x = 1\n", f"{TF1}\n", "!ls"], indent=2)
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    done = run("--write", "--annotate", "nb.ipynb", cwd=tmp_path)
    assert done.stderr.startswith(b"migrated: nb.ipynb\n"), done.stderr  # exit 1: LSC116 needs a person
    annotated = path.read_bytes()
    cell = json.loads(annotated)["cells"][2]["source"]
    assert cell[0] == "%time x = 1\n" and cell[2] == "!ls"
    assert cell[1].startswith(TF1 + "  # lossscale-compat: LSC116 ")
    assert annotated == before.replace(json.dumps(f"{TF1}\n").encode(), json.dumps(cell[1]).encode())
    run("--write", "--annotate", "nb.ipynb", cwd=tmp_path)
    assert path.read_bytes() == annotated
    done = run("--write", "--strip-annotations", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == before


def test_a_line_magic_statement_with_a_warning_is_annotated_after_the_statement(tmp_path):
    before = _notebook("import tensorflow as tf\n", f"%time {TF1}")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    run("--write", "--annotate", "nb.ipynb", cwd=tmp_path)
    source = json.loads(path.read_bytes())["cells"][2]["source"]
    assert source.startswith(f"%time {TF1}  # lossscale-compat: LSC116 ")


def test_an_ipython_line_naming_a_legacy_api_is_reported_and_not_annotated(tmp_path):
    help_line = "tf.keras.mixed_precision.experimental.LossScaleOptimizer?"
    before = _notebook("import tensorflow as tf\n", [f"{help_line}\n", f"{TF1}\n"])
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    done = run("--write", "--annotate", "nb.ipynb", cwd=tmp_path)
    assert "LSC170" in done.stdout.decode() + done.stderr.decode()
    cell = json.loads(path.read_bytes())["cells"][2]["source"]
    assert cell[0] == f"{help_line}\n"  # a comment after `?` would change what IPython does
    assert cell[1].startswith(TF1 + "  # lossscale-compat: LSC116 ")
