"""`lossscale-compat run SCRIPT [ARGS...]`, `run -m MODULE [ARGS...]` and `run NOTEBOOK.ipynb`: a TF 2.4 program,
unmodified."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable, Sequence

from lossscale_compat.legacy._program import exit_code, ours_only, print_user_traceback, start_legacy_mode

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


def run_as_main(
    target: str,
    as_module: bool,
    program_args: Sequence[str],
    command: str,
    on_error: Callable[[BaseException], None] | None = None,
) -> int:
    """Runs a script or module as `__main__`, as `python` would; returns its exit code (tracebacks printed).

    `on_error` is told of an exception that ended the program (not of `SystemExit`), before it is printed.
    """
    sys.argv = [target if not as_module else sys.argv[0], *program_args]
    try:
        if as_module:
            # As `python -m` does: the current directory first on the path, wherever the console script lives.
            sys.path[:1] = [os.getcwd()]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            path = os.path.abspath(target)  # as `python SCRIPT`: its directory first, its `__file__` absolute
            sys.path[0] = os.path.dirname(path)
            runpy.run_path(path, run_name="__main__")
    except SystemExit as stop:
        return exit_code(stop.code)
    except ImportError as error:
        if on_error is not None:
            on_error(error)
        if ours_only(error.__traceback__):  # no module to run was found, no user code ran: one line, as `python -m`
            print(f"lossscale-compat {command}: {error}", file=sys.stderr)
        else:
            print_user_traceback(error)
        return 1
    except SyntaxError as error:
        if ours_only(error.__traceback__):  # the script itself does not compile: no frame, as `python SCRIPT` shows
            sys.excepthook(type(error), error.with_traceback(None), None)
        else:
            print_user_traceback(error)
        return 1
    except BaseException as error:  # noqa: BLE001 - reported as Python would, from the user's frames
        if on_error is not None:
            on_error(error)
        print_user_traceback(error)
        return 130 if isinstance(error, KeyboardInterrupt) else 1
    return 0
