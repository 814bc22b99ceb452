"""Reading a file a user names (a turn file, an anchor, an exported log): only a regular file,
and only up to a bound, so ``/dev/zero`` or a FIFO is an input error, not a hang or a
``MemoryError``. The file is opened without blocking (a FIFO with no writer would block the
open itself), checked with ``fstat`` on the open descriptor (no race with a rename), then read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from stratagate.errors import InvalidInputError

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""256 MiB: a LoCoMo conversation is about 1 MB; a larger turn file is better split."""


class InputFileError(InvalidInputError):
    """A named input file cannot be read: missing, not a regular file, or over the limit."""


def open_input_file(path: str | Path, what: str, limit: int = MAX_INPUT_BYTES) -> IO[bytes]:
    """The open regular file at ``path`` (binary), refused when it is anything else or larger
    than ``limit`` bytes; ``what`` names it in the error."""
    source = os.fspath(path)
    try:
        descriptor = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(f"cannot read the {what} {source}: {exc.strerror or exc}") from exc
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise InputFileError(f"the {what} {source} is not a regular file")
        if status.st_size > limit:
            raise InputFileError(
                f"the {what} {source} is larger than {limit} bytes ({status.st_size}): split it"
            )
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_input_file(path: str | Path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them (a file that grows
    past the limit while being read is refused too)."""
    with open_input_file(path, what, limit) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputFileError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputFileError(f"the {what} {path} is larger than {limit} bytes: split it")
    return data


__all__ = ["MAX_INPUT_BYTES", "InputFileError", "open_input_file", "read_input_file"]
