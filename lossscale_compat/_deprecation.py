"""Deprecation warnings that point at the caller's line and name the modern replacement."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class LossScaleDeprecationWarning(DeprecationWarning):
    """Warns that a TF 2.4 loss-scaling API is used; filter on this class to silence or escalate it."""


MIGRATE_HINT = "Run `lossscale-compat migrate PATH` to rewrite such call sites."
# What Keras 3's own dynamic LossScaleOptimizer does differently from TF 2.4's (docs/equivalence.md): said wherever a
# message names it as the replacement of a dynamic TF 2.4 loss scale, on a stack whose Keras has it.
KERAS3_DYNAMIC_DIFFERENCE = (
    "Keras 3's own `LossScaleOptimizer` is configured alike but does not train alike: a skipped (non-finite) step "
    "does not advance its `iterations`, so learning-rate schedules and Adam's bias correction drift from TF 2.4's, "
    "and the scale can fall below 1; `lossscale_compat.KerasLossScaleOptimizer` takes the same arguments and trains "
    "as TF 2.4 did. To compare two runs: `lossscale-compat record` and `lossscale-compat compare` "
    "(docs/equivalence.md)."
)


def dynamic_difference(keras3: bool) -> str:
    """The sentences a message naming Keras's own dynamic `LossScaleOptimizer` adds on `keras3`; "" on Keras 2."""
    return f" {KERAS3_DYNAMIC_DIFFERENCE}" if keras3 else ""


def _first_frame_outside_package() -> int:
    """Returns the `stacklevel` of the nearest caller that is not lossscale_compat itself."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


# TF 2.4 names already warned about, while warnings are once per process (legacy mode).
_warned_names: set = set()
_once_per_process = False


def warn_once_per_process(enabled: bool) -> None:
    """Makes `warn_deprecated(..., name=...)` warn once per process per name (True) or per call site."""
    global _once_per_process
    _once_per_process = enabled
    _warned_names.clear()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No deprecation warnings inside: for TF 2.4 objects that another warned-about one builds itself."""
    global _quiet
    _quiet, before = True, _quiet
    try:
        yield
    finally:
        _quiet = before


_quiet = False


def warn_deprecated(message: str, name: str = "") -> None:
    """Issues `message` once per user call site, or once per TF 2.4 `name` when set to once per process."""
    if _quiet:
        return
    if _once_per_process and name:
        if name in _warned_names:
            return
        _warned_names.add(name)
    warnings.warn(f"{message} {MIGRATE_HINT}", LossScaleDeprecationWarning, stacklevel=_first_frame_outside_package())
