"""Runs the code cells of examples/tf24/notebooks/*.ipynb on TF 2.4.0 (IPython's lines left out: TF 2.4 needs no
`%load_ext`) and writes what each cell prints to tests/goldens/tf24_notebooks.json. Keep it Python 3.8 compatible."""

import contextlib
import glob
import io
import json
import os

from tf24_recording import write_goldens

NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                         "tf24", "notebooks")


def printed_by_cells(path):
    """{cell index: what the cell printed} for each code cell, run in order in one namespace."""
    with open(path, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    namespace = {"__name__": "__main__"}
    printed = {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).split("\n")
        source = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, "%s[cell %d]" % (os.path.basename(path), index), "exec"), namespace)
        printed[str(index)] = out.getvalue()
    return printed


def main():
    notebooks = {os.path.basename(path): printed_by_cells(path) for path in sorted(glob.glob(NOTEBOOKS + "/*.ipynb"))}
    write_goldens("tf24_notebooks.json", "record_tf24_notebook.py", {"notebooks": notebooks})


if __name__ == "__main__":
    main()
