"""`lossscale-compat run SCRIPT [ARGS...]`, `run -m MODULE [ARGS...]` and `run NOTEBOOK.ipynb`: a TF 2.4 program,
unmodified."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from lossscale_compat._program import run_as_main
from lossscale_compat.legacy._start import start_legacy_mode

USAGE = (
    "usage: lossscale-compat run SCRIPT [ARGS...]  |  lossscale-compat run -m MODULE [ARGS...]  |  "
    "lossscale-compat run NOTEBOOK.ipynb [ARGS...]"
)
EXIT_USAGE = 2


def main(argv: Sequence[str]) -> int:
    """Runs the program as `__main__` with legacy mode on; returns its exit code."""
    args: list[str] = list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else EXIT_USAGE
    as_module = args[0] == "-m"
    if as_module:
        if len(args) < 2:
            print("lossscale-compat run: -m needs a module name; " + USAGE, file=sys.stderr)
            return EXIT_USAGE
        target, program_args = args[1], args[2:]
    else:
        target, program_args = args[0], args[1:]
        if not os.path.exists(target):
            print(f"lossscale-compat run: no such script: {target}", file=sys.stderr)
            return EXIT_USAGE
        if target.endswith(".ipynb"):
            from lossscale_compat.legacy._notebook_run import run_notebook

            return run_notebook(target, program_args)
    start_legacy_mode([target if not as_module else sys.argv[0], *program_args])
    return run_as_main(target, as_module, program_args, "run")
