"""Deprecation warnings that point at the caller's line and name the modern replacement."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class LossScaleDeprecationWarning(DeprecationWarning):
    """Warns that a TF 2.4 loss-scaling API is used; filter on this class to silence or escalate it."""


MIGRATE_HINT = "Run `lossscale-compat migrate PATH` to rewrite such call sites."


def _first_frame_outside_package() -> int:
    """Returns the `stacklevel` of the nearest caller that is not lossscale_compat itself."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn_deprecated(message: str) -> None:
    """Issues `message` once per user call site (Python's default warning filters)."""
    warnings.warn(f"{message} {MIGRATE_HINT}", LossScaleDeprecationWarning,
                  stacklevel=_first_frame_outside_package())
