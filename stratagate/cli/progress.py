"""Ingest progress on stderr: a redrawn bar on a terminal, an occasional plain line otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from stratagate.cli.render import progress_line

REDRAW_EVERY_S = 0.1
"""Terminal: the fastest the bar is redrawn."""

PLAIN_EVERY_S = 10.0
"""Not a terminal (a log file, a pipe): one plain line at most this often, none for short runs."""


class Progress:
    """Reports ``done/total`` turns and turns/s while an ingest runs."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream
        self.clock = clock
        self.interactive = _is_terminal(stream)
        self.started = clock()
        self._last_shown = self.started
        self._shown_any = False

    def update(self, done: int) -> None:
        """Record that ``done`` turns are through; redraw or print when it is time."""
        now = self.clock()
        every = REDRAW_EVERY_S if self.interactive else PLAIN_EVERY_S
        if now - self._last_shown < every and done < self.total:
            return
        self._last_shown = now
        line = progress_line(done, self.total, now - self.started)
        if self.interactive:
            self.stream.write("\r" + line)
            self._shown_any = True
        elif done < self.total:
            self.stream.write(f"ingest: {line}\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar's line so later output starts on a fresh one."""
        if self.interactive and self._shown_any:
            self.stream.write("\n")
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


__all__ = ["PLAIN_EVERY_S", "REDRAW_EVERY_S", "Progress"]
