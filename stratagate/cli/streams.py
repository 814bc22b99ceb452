"""Keeping a command's own output on stdout apart from what libraries print there.

Ray's driver threads (and the processes it starts) write warnings to file descriptor 1, some of
them after the command has printed its result (``(raylet) WARNING …`` at shutdown): after
``reserve_stdout`` that descriptor is stderr for the rest of the process, and ``sys.stdout``
alone writes to the real stdout, so a ``--json`` document is the only thing there.
"""

from __future__ import annotations

import io
import os
import sys


def reserve_stdout() -> None:
    """From now on, only ``sys.stdout`` reaches stdout; anything written to fd 1 goes to
    stderr (idempotent)."""
    if getattr(sys.stdout, "stratagate_reserved", False):
        return
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    stream = io.TextIOWrapper(
        os.fdopen(real, "wb"), encoding=sys.stdout.encoding or "utf-8", line_buffering=True
    )
    stream.stratagate_reserved = True  # type: ignore[attr-defined]
    sys.stdout = stream


__all__ = ["reserve_stdout"]
