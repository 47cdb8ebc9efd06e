"""TF 2.4 notebooks in legacy mode: through a real Jupyter kernel (`%load_ext lossscale_compat`, or
`lossscale_compat.install()`), and through `lossscale-compat run NOTEBOOK.ipynb`; each cell prints what it printed on
TF 2.4.0 (tests/goldens/tf24_notebooks.json, tests/recorders/record_tf24_notebook.py)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "examples" / "tf24" / "notebooks"
GOLDENS = json.loads((Path(__file__).resolve().parents[1] / "goldens" / "tf24_notebooks.json").read_text())["notebooks"]
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
LOAD_EXT = "%load_ext lossscale_compat"


def _without_tf_logs(text, want):
    """`text` less TensorFlow's own log records (`WARNING:tensorflow:...` and its lines up to the next one wanted),
    which a kernel's TensorFlow writes to stdout, as interactive TensorFlow does, and TF 2.4's recorder did not."""
    wanted = want.splitlines(keepends=True)
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if len(kept) < len(wanted) and line == wanted[len(kept)]:
            kept.append(line)
            skipping = False
        elif re.match(r"(WARNING|INFO):tensorflow:", line) or skipping:
            skipping = True
        else:
            kept.append(line)
    return "".join(kept)


def _stdout_by_cell(notebook):
    """{cell index: the text the cell wrote to stdout} for the code cells of an executed notebook."""
    printed = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            printed[str(index)] = "".join(
                o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stdout"
            )
    return printed


def _execute(path, first_cell=None):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(str(path), as_version=4)
    if first_cell is not None:
        notebook.cells[1].source = first_cell
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    os.environ.update(TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    client.execute(env=ENV)
    return notebook


@pytest.mark.parametrize("first_cell", [LOAD_EXT, "import lossscale_compat\nlossscale_compat.install()"])
def test_a_tf24_notebook_runs_in_a_jupyter_kernel_as_on_tf24(first_cell):
    notebook = _execute(NOTEBOOKS / "mixed_precision_guide.ipynb", first_cell)
    golden = GOLDENS["mixed_precision_guide.ipynb"]
    got = _stdout_by_cell(notebook)
    assert {index: _without_tf_logs(text, golden.get(index, "")) for index, text in got.items()} == golden


def test_without_legacy_mode_the_notebook_fails_in_the_kernel():
    """Should fail at TF 2.4's experimental module (the test can fail: the first cell is what makes it run)."""
    nbclient = pytest.importorskip("nbclient")
    with pytest.raises(nbclient.exceptions.CellExecutionError):
        _execute(NOTEBOOKS / "mixed_precision_guide.ipynb", "pass")


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "lossscale_compat", "run", *map(str, args)], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=600, check=False)


def test_run_runs_the_notebook_cells_in_order_as_on_tf24():
    done = _run(NOTEBOOKS / "mixed_precision_guide.ipynb")
    assert done.returncode == 0, done.stderr[-3000:]
    golden = GOLDENS["mixed_precision_guide.ipynb"]
    want = "".join(golden[index] for index in sorted(golden, key=int))
    assert _without_tf_logs(done.stdout, want) == want


def _write(path, *sources, cell_type="code"):
    cells = [{"cell_type": cell_type, "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    return path


def test_run_handles_magics_and_shell_lines_as_jupyter(tmp_path):
    path = _write(tmp_path / "nb.ipynb", "x = 41\n", "%load_ext lossscale_compat\n!echo shell-ran\nfiles = !echo a\nprint(x + 1, files)\n")
    done = _run(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["shell-ran", "42 ['a']"]


def test_run_stops_at_the_first_failing_cell_with_its_traceback(tmp_path):
    path = _write(tmp_path / "nb.ipynb", "print('one')\n", "raise ValueError('cell two')\n", "print('three')\n")
    done = _run(path)
    assert done.returncode == 1
    assert "one" in done.stdout and "three" not in done.stdout
    assert "ValueError: cell two" in done.stderr


@pytest.mark.parametrize("content, said", [
    (b'{"cells": [{"cell_type": "code", "source": "print(1)"}]', "not a notebook's JSON"),
    (b'{"cells": {}}', "`cells` is an object, not a list"),
    (b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "has no code to run"),
    (b"\xff\xfe", "not a notebook's JSON"),
])
def test_run_refuses_what_is_not_a_runnable_notebook_in_one_line(tmp_path, content, said):
    """Should refuse with exit 2, where it ran the JSON as Python (a traceback, or exit 0 having run nothing)."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(content)
    done = _run(path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr


def test_without_ipython_a_magic_is_refused_naming_it(tmp_path):
    from lossscale_compat.legacy._notebook_run import ipython_line

    assert ipython_line([(0, "x = 1\n"), (2, "y = 2\n  %time f(x)\n")]) == "cell 2 line 2, `%time f(x)`"
    assert ipython_line([(0, "x = 1  # not %magic\n")]) is None


def _without_ipython(tmp_path):
    """An environment in which `import IPython` fails, as where it is not installed."""
    blocker = tmp_path / "no_ipython" / "IPython"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named IPython')\n")
    return dict(ENV, PYTHONPATH=str(blocker.parent))


def test_without_ipython_plain_cells_run_and_a_magic_is_refused_in_one_line(tmp_path):
    env = _without_ipython(tmp_path)
    plain = _write(tmp_path / "plain.ipynb", "x = 41\n", "print(x + 1)\n")
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", str(plain)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr
    magic = _write(tmp_path / "magic.ipynb", "x = 41\n", "%matplotlib inline\nprint(x)\n")
    done = subprocess.run([sys.executable, "-m", "lossscale_compat", "run", str(magic)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "cell 1 line 1, `%matplotlib inline`" in done.stderr, done.stderr
