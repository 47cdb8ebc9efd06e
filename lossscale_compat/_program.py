"""Running a user's program as `python` would, for `run` and `record`: `__main__`, `sys.argv`, the path, and
tracebacks and exit codes as Python gives them."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable, Sequence
from types import TracebackType


def _ours(filename: str) -> bool:
    """Whether a frame's file is ours, runpy's or importlib's: not the user's."""
    if filename.startswith("<"):
        return filename == "<frozen runpy>" or filename.startswith("<frozen importlib")
    package = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(filename)
    return path == os.path.abspath(runpy.__file__) or path.startswith(package + os.sep)


def ours_only(tb: TracebackType | None) -> bool:
    """Whether no frame of the traceback is the user's (so no user code ran)."""
    while tb is not None:
        if not _ours(tb.tb_frame.f_code.co_filename):
            return False
        tb = tb.tb_next
    return True


def print_user_traceback(error: BaseException) -> None:
    """Prints the traceback as `python SCRIPT` would: without our frames and runpy's in front."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None and _ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    sys.excepthook(type(error), error.with_traceback(tb), tb)


def exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


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
