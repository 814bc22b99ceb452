"""The namespaces the Memory UI serves, each opened read-only, all read on one worker thread.

A ``NamespaceReader`` is one namespace as the UI reads it: a memory opened with
``StrataGate.open(..., read_only=True)`` (no lease, nothing appended; its past states for time
travel are kept by the memory, see ``state_at(..., search=False)``) and the last verification
this server ran. ``catch_up`` is the one place where reads
learn of what other processes appended; every request goes through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from stratagate.errors import UnknownIdError
from stratagate.memory import StrataGate, check_namespace, database_url
from stratagate.read.view import MemoryView
from stratagate.results import VerifyReport
from stratagate.timeutil import utc_now

R = TypeVar("R")


@dataclass(frozen=True)
class Verification:
    """A verify this server ran: its report, the revision it covered and when it ran."""

    report: VerifyReport
    revision: int
    position: int
    checked_at: datetime


class NamespaceReader:
    """One namespace, read-only: now, as of a past position, and its last verification."""

    def __init__(self, database: str, namespace: str) -> None:
        self.database = database
        self.namespace = namespace
        self.memory = StrataGate.open(database, namespace, read_only=True)
        self.present = True
        self.verified: Verification | None = None
        summary = self.memory.log_summary()
        self.revision, self.head = summary.revision, summary.last_position

    def catch_up(self) -> None:
        """Learn what other processes appended since the last look (cost ∝ what is new).

        The moved revision (``log_summary``) is the cheap signal: the read-only memory folds the
        new events at its next read by itself; an erasure among them (keys destroyed elsewhere)
        or a dropped namespace makes the memory re-open, so no copy of erased text stays here
        (its past states and cached keys went with the old one).
        """
        summary = self.memory.log_summary()
        self.present = summary.present
        if summary.revision == self.revision:
            return
        grew = summary.revision > self.revision
        new = self.memory.history(since=self.head) if grew else []
        if not grew or any(r.type.endswith("Erased") for r in new):
            self.memory.close()  # its read models, past states and keys go with it
            self.memory = StrataGate.open(self.database, self.namespace, read_only=True)
            self.verified = None
        self.revision, self.head = summary.revision, summary.last_position

    def now(self) -> MemoryView:
        """The namespace as it is now (caught up)."""
        return self.memory.view()

    def at(self, position: int) -> MemoryView:
        """The namespace as of a past global position (clamped to the head)."""
        return self.memory.state_at(min(position, self.head), search=False)

    def verify(self) -> Verification:
        """The chain and a full replay checked now, unless nothing was appended since the last."""
        if self.verified is None or self.verified.revision != self.revision:
            self.verified = Verification(
                report=self.memory.verify(),
                revision=self.revision,
                position=self.head,
                checked_at=utc_now(),
            )
        return self.verified

    def close(self) -> None:
        self.memory.close()


class Catalog:
    """The served namespaces of one database (all of them, or an allow-list), on one thread."""

    def __init__(self, database: str, namespaces: Iterable[str] | None = None) -> None:
        self.database = database_url(database)
        self.allowed = (
            None if namespaces is None else frozenset(check_namespace(n) for n in namespaces)
        )
        self.readers: dict[str, NamespaceReader] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stratagate-ui")

    def names(self) -> list[str]:
        """The served namespaces that hold at least one event, sorted (worker thread only)."""
        found = [summary.namespace for summary in StrataGate.list_namespaces(self.database)]
        return [n for n in found if self.allowed is None or n in self.allowed]

    def reader(self, namespace: str) -> NamespaceReader:
        """The caught-up reader of a served namespace; ``UnknownIdError`` for any other name
        (which does not say whether it exists unserved)."""
        unknown = UnknownIdError(f"unknown namespace {namespace!r}")
        if self.allowed is not None and namespace not in self.allowed:
            raise unknown
        reader = self.readers.get(namespace)
        if reader is None:
            if namespace not in self.names():
                raise unknown
            reader = self.readers[namespace] = NamespaceReader(self.database, namespace)
        reader.catch_up()
        if not reader.present:  # dropped since
            self.drop(namespace)
            raise unknown
        return reader

    def drop(self, namespace: str) -> None:
        reader = self.readers.pop(namespace, None)
        if reader is not None:
            reader.close()

    def run(self, work: Callable[[Catalog], R]) -> R:
        """Run ``work`` on the worker thread and wait (tests, the CLI's startup check)."""
        return self._worker.submit(work, self).result()

    async def arun(self, work: Callable[[Catalog], R]) -> R:
        """``run`` without blocking the event loop."""
        return await asyncio.wrap_future(self._worker.submit(work, self))

    def close(self) -> None:
        """Close every reader, then stop the worker."""

        def close_all(_: Catalog) -> None:
            while self.readers:
                self.readers.popitem()[1].close()

        self.run(close_all)
        self._worker.shutdown()


__all__ = ["Catalog", "NamespaceReader", "Verification"]
