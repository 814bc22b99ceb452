"""Ingest progress on stderr: a redrawn bar on a terminal, an occasional plain line otherwise.

One ``Progress`` covers a whole job (every file and namespace); workers on several threads
report into it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from stratagate.cli.render import display_width, progress_line

REDRAW_EVERY_S = 0.1
"""Terminal: the fastest the bar is redrawn."""

PLAIN_EVERY_S = 10.0
"""Not a terminal (a log file, a pipe): one plain line at most this often, none for short runs."""


class Progress:
    """Reports turns done of ``total``, namespaces done (when more than one), turns/s and ETA.

    Use it as a context manager (or call ``finish``) so that the bar's line is ended.
    """

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        namespaces: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.namespaces = namespaces
        self.stream = stream
        self.clock = clock
        self.interactive = _is_terminal(stream)
        self.started = clock()
        self.done = 0
        self.namespaces_done = 0
        self._last_shown = self.started
        self._drawn_width = 0
        self._lock = threading.Lock()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.finish()

    def advance(self, turns: int = 0, *, namespaces: int = 0) -> None:
        """Record more turns (and namespaces) through; redraw or print when it is time."""
        with self._lock:
            self.done += turns
            self.namespaces_done += namespaces
            now = self.clock()
            every = REDRAW_EVERY_S if self.interactive else PLAIN_EVERY_S
            finished = self.done >= self.total and self.namespaces_done >= self.namespaces
            if now - self._last_shown < every and not finished:
                return
            self._last_shown = now
            line = progress_line(
                self.done,
                self.total,
                now - self.started,
                namespaces=(self.namespaces_done, self.namespaces) if self.namespaces > 1 else None,
            )
            if self.interactive:
                self._redraw(line)
            elif not finished:
                self.stream.write(f"ingest: {line}\n")
            self.stream.flush()

    def _redraw(self, line: str) -> None:
        """Overwrite the bar in place; blanks cover what a longer previous line left behind."""
        width = display_width(line)
        self.stream.write("\r" + line + " " * max(0, self._drawn_width - width))
        self._drawn_width = width

    def finish(self) -> None:
        """End the bar's line so later output starts on a fresh one."""
        with self._lock:
            if self.interactive and self._drawn_width:
                self.stream.write("\n")
                self.stream.flush()
                self._drawn_width = 0


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


__all__ = ["PLAIN_EVERY_S", "REDRAW_EVERY_S", "Progress"]
