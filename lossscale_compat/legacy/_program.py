"""What `lossscale-compat run` does around any program it runs: legacy mode on, tracebacks and exit codes as Python
gives them."""

from __future__ import annotations

import os
import runpy
import sys
from types import TracebackType


def start_legacy_mode(argv: list[str], directory: str | None = None) -> None:
    """Turns legacy mode on for this process and its children, and sets `sys.argv` (and the path's first entry)."""
    # Children started by the program (launchers, multi-worker jobs) inherit legacy mode too.
    os.environ["LOSSSCALE_COMPAT_LEGACY"] = "1"
    from lossscale_compat.legacy import install

    install()
    sys.argv = argv
    if directory is not None:
        sys.path[0] = directory


def _ours(filename: str) -> bool:
    """Whether a frame's file is ours, runpy's or importlib's: not the user's."""
    if filename.startswith("<"):
        return filename == "<frozen runpy>" or filename.startswith("<frozen importlib")
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
