"""A corpus of notebooks laid out as Colab, Kaggle, an older Jupyter and VS Code write them (tests/migrate/notebooks/,
modelled on public TF 2.4-era notebooks: TensorFlow's mixed-precision guide as Colab keeps it, Kaggle's one-line
export): each migrates for both targets, none skipped, only the changed cells' `source` strings differ, every TF 2.4
name left in a cell is named by a finding on that cell, and the results run through a Jupyter kernel (the keras3
target's on Keras 3, the tf_keras target's where `tf.keras` is Keras 2), each failing cell being one a finding named."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from lossscale_compat.codemods import _warnings as w
from lossscale_compat.codemods._notebook import _source_spans, migrate_notebook

CORPUS = sorted((Path(__file__).parent / "notebooks").glob("*.ipynb"))
# A TF 2.4 loss-scaling name, not reached through lossscale_compat.
LEGACY_NAME = re.compile(
    r"(?<!lossscale_compat\.)\b(?:mixed_precision\.experimental|experimental import|train\.experimental\.\w*LossScale"
    r"|(?:enable|disable)_mixed_precision_graph_rewrite|MixedPrecisionLossScaleOptimizer)"
)


def _outside_sources(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    pieces, at = [], 0
    for start, end in sorted(_source_spans(text).values()):
        pieces.append(text[at:start])
        at = end
    return [*pieces, text[at:]]


def _cells(data: bytes) -> list[dict]:
    return json.loads(data)["cells"]


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def test_the_corpus_has_each_layout():
    assert [path.name for path in CORPUS] == [
        "colab_custom_loop.ipynb", "jupyter_loss_scale_ascii.ipynb", "kaggle_fit.ipynb", "vscode_indent4_crlf.ipynb"
    ]


@pytest.mark.parametrize("target", ["keras3", "tf_keras"])
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_each_notebook_migrates_keeping_every_byte_outside_the_changed_sources(path, target):
    before = path.read_bytes()
    result = migrate_notebook(before, target, str(path))
    assert result.status == "changed", result.findings
    assert w.NOTEBOOK_LAYOUT not in [f.code for f in result.findings]
    assert _outside_sources(result.new) == _outside_sources(before)
    named = {f.cell for f in result.new_findings}
    for index, cell in enumerate(_cells(result.new)):
        if cell.get("cell_type") != "markdown" and LEGACY_NAME.search(_text(cell)):
            assert index in named, f"cell {index} keeps a TF 2.4 name and no finding says so: {_text(cell)!r}"
    assert migrate_notebook(result.new, target, str(path)).status == "unchanged"  # a fixed point


RUNS = [pytest.param(p, target) for p in CORPUS for target in ("keras3", "tf_keras")]


@pytest.mark.parametrize(("path", "target"), RUNS, ids=lambda p: getattr(p, "stem", p))
def test_each_migrated_notebook_runs_in_a_kernel_where_no_finding_says_otherwise(path, target, tmp_path):
    """Should run every code cell of the result for `target`, except cells a finding needing a person named."""
    pytest.importorskip("tensorflow")  # the codemod-libcst sessions have none
    from lossscale_compat import _flavour

    if target == "keras3" and not _flavour.has_keras3_loss_scaling():
        pytest.skip("Keras 3's scale_loss/apply-unscales contract exists only on Keras 3")
    if target == "tf_keras" and _flavour.has_keras3_loss_scaling():
        pytest.skip("the tf_keras target's output runs where `tf.keras` is Keras 2 (tf221-tfkeras, tf215-keras2)")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    result = migrate_notebook(path.read_bytes(), target, str(path))
    flagged = {f.cell for f in result.new_findings if f.code not in w.NOTE_CODES}
    raw = json.loads(result.new)
    kept = [index for index, cell in enumerate(raw["cells"]) if "cell_type" in cell]  # nbformat requires it
    raw["cells"] = [raw["cells"][index] for index in kept]
    for cell in raw["cells"]:
        cell.setdefault("metadata", {})
        if cell["cell_type"] == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
    notebook = nbformat.reads(json.dumps(raw), as_version=4)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env, cwd=str(tmp_path))
    failed = []
    for index, cell in zip(kept, notebook.cells):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors and index not in flagged:
            failed.append((index, errors[0]["ename"], errors[0]["evalue"][:300]))
    assert not failed
    ran = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.get("outputs")]
    assert ran, "no cell printed anything"
