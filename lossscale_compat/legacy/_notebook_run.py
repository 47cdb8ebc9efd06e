"""`lossscale-compat run NOTEBOOK.ipynb`: a TF 2.4 notebook's code cells, run in order in legacy mode."""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import types
from collections.abc import Sequence

EXIT_USAGE = 2
# A line only IPython runs: a magic, a shell escape, help, or an assignment from one (`files = !ls`).
_IPYTHON_LINE = re.compile(r"^\s*(?:%|!|\?)|\?\s*$|^\s*[\w.]+\s*=\s*[!%]")


def _refuse(message: str) -> int:
    print(f"lossscale-compat run: {message}", file=sys.stderr)
    return EXIT_USAGE


def code_cells(path: str) -> list[tuple[int, str]] | str:
    """(index in `cells`, source) of each code cell of the notebook at `path`, or why it cannot be run."""
    # The codemod's own check of a notebook's shape (the codemod package installs beside this one).
    malformed = importlib.import_module("lossscale_compat.codemods._notebook")._malformed
    try:
        with open(path, "rb") as handle:
            notebook = json.loads(handle.read().decode("utf-8"))
    except OSError as error:
        return f"cannot read {path}: {error.strerror}"
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return f"{path} is not a notebook's JSON ({error}). Instead, run it as a script, or save it from Jupyter"
    problem = malformed(notebook)
    if problem:
        return f"{path} is not a notebook nbformat 4 reads: {problem}. Instead, open and save it in Jupyter"
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        source = cell.get("source", "")
        if cell.get("cell_type") == "code":
            cells.append((index, "".join(source) if isinstance(source, list) else source))
    return cells


def ipython_line(cells: Sequence[tuple[int, str]]) -> str | None:
    """Where the first line only IPython runs is, and what it is, or None."""
    for index, source in cells:
        for number, line in enumerate(source.split("\n"), 1):
            if _IPYTHON_LINE.search(line) and not line.lstrip().startswith("#"):
                return f"cell {index} line {number}, `{line.strip()}`"
    return None


def run_notebook(path: str, args: Sequence[str]) -> int:
    """Runs the notebook's code cells in order, as a kernel would, with legacy mode on; returns the exit code."""
    cells = code_cells(path)
    if isinstance(cells, str):
        return _refuse(cells)
    if not any(source.strip() for _, source in cells):
        return _refuse(f"{path} has no code to run (no code cell holds any). Instead, name a notebook with code cells")
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        InteractiveShell = None
        magic = ipython_line(cells)
        if magic is not None:
            return _refuse(
                f"{path}: {magic} is IPython syntax, which needs IPython to run. Instead, install IPython "
                "(pip install ipython) or remove the line"
            )
    from lossscale_compat.legacy._start import start_legacy_mode

    directory = os.path.dirname(os.path.abspath(path))
    start_legacy_mode([path, *args], directory)
    os.chdir(directory)  # as Jupyter starts a notebook's kernel
    if InteractiveShell is not None:
        shell = InteractiveShell.instance(**({} if sys.stderr.isatty() else {"colors": "NoColor"}))
        # Tracebacks go to stderr, as `python SCRIPT` writes them (IPython's shell writes them to stdout).
        shell._showtraceback = lambda _type, _value, lines: print(shell.InteractiveTB.stb2text(lines), file=sys.stderr)
        return _run_in_ipython(shell, cells)
    return _run_plain(path, cells)


def _run_in_ipython(shell: object, cells: Sequence[tuple[int, str]]) -> int:
    """Each cell through IPython's own shell (magics, `!` lines and all); stops at the first cell that fails."""
    for _, source in cells:
        result = shell.run_cell(source, store_history=True)  # type: ignore[attr-defined]
        error = result.error_before_exec or result.error_in_exec
        if error is not None:  # IPython has shown it
            from lossscale_compat._program import exit_code

            if isinstance(error, SystemExit):
                return exit_code(error.code)
            return 130 if isinstance(error, KeyboardInterrupt) else 1
    return 0


def _run_plain(path: str, cells: Sequence[tuple[int, str]]) -> int:
    """Each cell as Python in one `__main__` namespace, when IPython is not installed (no cell needs it)."""
    from lossscale_compat._program import exit_code, print_user_traceback

    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath(path)
    sys.modules["__main__"] = main
    for index, source in cells:
        try:
            exec(compile(source, f"{path}[cell {index}]", "exec"), main.__dict__)
        except SystemExit as stop:
            return exit_code(stop.code)
        except BaseException as error:  # noqa: BLE001 - reported as a kernel would, from the user's frames
            print_user_traceback(error)
            return 130 if isinstance(error, KeyboardInterrupt) else 1
    return 0
