"""Legacy mode turned on for a program that `run` starts, a script's or a notebook's."""

from __future__ import annotations

import os
import sys


def start_legacy_mode(argv: list[str], directory: str | None = None) -> None:
    """Turns legacy mode on for this process and its children, and sets `sys.argv` (and the path's first entry)."""
    # Children started by the program (launchers, multi-worker jobs) inherit legacy mode too.
    os.environ["LOSSSCALE_COMPAT_LEGACY"] = "1"
    from lossscale_compat.legacy import install

    install()
    sys.argv = argv
    if directory is not None:
        sys.path[0] = directory
