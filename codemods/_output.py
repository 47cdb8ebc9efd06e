"""Text that reaches a terminal or a CI log safely: file names quoted, GitHub workflow commands escaped."""

from __future__ import annotations

import os
import sys
from typing import TextIO


def name(path: str) -> str:
    """`path` as printed in text output: quoted (Python's repr) when it holds a control character or a byte that
    is not text (an ESC, a newline), so that it can neither start a new line nor drive the terminal."""
    return path if path.isprintable() else repr(path)


def data(text: str) -> str:
    """Escapes the message of a GitHub workflow command (`%`, CR, LF), as the workflow-command spec says."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(text: str) -> str:
    """Escapes a property value of a GitHub workflow command (`file=`, `title=`): also `:` and `,`."""
    return data(text).replace(":", "%3A").replace(",", "%2C")


def tolerant(*streams: TextIO) -> None:
    """Makes text streams write what they cannot encode as backslash escapes instead of raising."""
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def closed(*streams: TextIO) -> None:
    """Points those of `streams` whose reader has gone (a closed pipe) at the null device, so that the run ends
    quietly: nothing more is printed there and the final flush does not raise."""
    for stream in streams:
        try:
            stream.flush()
        except BrokenPipeError:
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, stream.fileno())
                os.close(null)
            except (OSError, ValueError, AttributeError):
                pass
        except (OSError, ValueError):
            pass
    if sys.stdout in streams:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass
