"""A SQLite file's write-ahead log checkpointed beside the writers, never inside a commit.

SQLite's default (``wal_autocheckpoint`` = 1,000 pages) checkpoints in the commit that
crosses the threshold: that commit copies the log into the database file and flushes it, so
one append in a few hundred paid a pause many times its own cost while holding the write
lock. The store's connections turn that off (``engines``) and count their commits here; every
``CHECKPOINT_EVERY`` commits a background thread runs a
``PASSIVE`` checkpoint on a connection of its own. A passive checkpoint takes no write lock and
waits for no one (writers go on appending to the log meanwhile), and the sqlite3 module
releases the GIL while it runs; its last pass, which copies only what was committed during
the ones before, runs inside the writers' queue when the disk answers quickly, so the whole
log is copied and the next commit starts it over (``checkpoint_whole``). A checkpoint moves no data: committed rows are durable
in the log already (``synchronous=FULL``); what it bounds is the log's size.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

LOG = logging.getLogger(__name__)

CHECKPOINT_EVERY = 100
"""Commits between two background checkpoints: an append writes a few pages of log, so about
SQLite's own threshold of 1,000 pages."""


class Checkpointer:
    """Starts ``checkpoint`` in a background thread every ``every`` commits (one at a time)."""

    def __init__(self, checkpoint: Callable[[], None], every: int = CHECKPOINT_EVERY) -> None:
        self._checkpoint = checkpoint
        self.every = every
        self._commits = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.done = 0
        """Background checkpoints that ran to the end (for tests and benchmarks)."""

    def committed(self) -> None:
        """One more commit; after ``every`` of them, start a checkpoint unless one is running
        (the count then goes on: the next commit tries again)."""
        self._commits += 1
        if self._closed or self._commits < self.every:
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._commits = 0
            self._thread = threading.Thread(
                target=self._run, name="stratagate-checkpoint", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """No further checkpoints; the one in flight is finished."""
        self._closed = True
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            self._checkpoint()
            self.done += 1
        except Exception as exc:  # only the log's size is at stake: logged, never raised
            LOG.warning("a background checkpoint of the write-ahead log failed: %s", exc)


def passive_checkpoint(driver: sqlite3.Connection) -> bool:
    """Copy what the log holds into the database file as far as no reader needs it, waiting
    for nothing (``fetchall`` finishes the statement); whether every frame is copied."""
    ((busy, frames, copied),) = driver.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    return not busy and frames == copied


RESTART_BUDGET_S = 0.005
"""The longest a pass beside the writers may take for the last pass to run inside their
queue (the appends wait for that one: a slow disk skips it, and the log starts over later)."""


def checkpoint_whole(
    driver: sqlite3.Connection, writers: Callable[[], AbstractContextManager[None]]
) -> bool:
    """Copy the whole log, so that the next writer starts it over from its beginning; whether
    it did.

    A log that is never wholly copied grows for as long as the writers write (a pass takes
    longer than a commit, and commits land during it), and each commit's flush then also
    flushes the file's new size. Started over, the log is overwritten in place (measured in
    ``docs/BENCHMARKS.md``). So: the bulk beside the writers; a second pass beside them, which
    copies what they committed during the first (a few commits' pages) and times what the
    last one will cost; then, if that took at most ``RESTART_BUDGET_S``, the last pass inside
    their queue (``writers``), where none is committing."""
    passive_checkpoint(driver)
    began = time.monotonic()
    passive_checkpoint(driver)
    if time.monotonic() - began > RESTART_BUDGET_S:
        return False
    with writers():
        return passive_checkpoint(driver)


__all__ = [
    "CHECKPOINT_EVERY",
    "RESTART_BUDGET_S",
    "Checkpointer",
    "checkpoint_whole",
    "passive_checkpoint",
]
