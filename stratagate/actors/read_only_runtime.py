"""The read-only runtime: a namespace's read models for an audit, with no lease and no writes.

Nothing is recovered, no settings are applied and no snapshot is written; the read models are
hydrated only when a query first needs them (so ``verify``, ``history`` and ``state_at`` work
even on a log too damaged to fold) and catch up with whatever a writer elsewhere appends. A
message for a writer role — an ingest, a governance action, a search logging its batch —
raises ``ReadOnlyError``; the pipeline runs no follow-up that would append.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from stratagate.actors import pipeline
from stratagate.actors.auditor import Auditor
from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.registry import Handles, handler_of
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.errors import ReadOnlyError
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.read.view import MemoryView
from stratagate.store import open_sql_store

R = TypeVar("R")


class ReadOnlyRuntime:
    """Answers the read side of one namespace from the log; refuses everything that writes."""

    name = "read-only"
    writes = False
    retry_conflicts = False

    def __init__(self, database: str, namespace: str, options: MemoryOptions) -> None:
        self.store = open_sql_store(database, create=False, read_only=True)
        self.namespace = namespace
        self.options = options
        self._reader: Reader | None = None
        self._auditor = Auditor(self.store, namespace, options, self._live_digests)
        self._lock = threading.RLock()

    @property
    def handles(self) -> Handles:
        raise ReadOnlyError("a read-only memory hosts no actors")

    def _live_reader(self) -> Reader:
        if self._reader is None:
            live = LiveState(
                self.store, self.namespace, None, snapshot_key="inline", snapshot_every=0
            )
            self._reader = Reader(live, WeightKeeper(self.namespace, self.options, live))
        return self._reader

    def send(self, message: Message[R]) -> R:
        """Answer a query (by its flow, see ``stratagate.actors.pipeline``)."""
        return pipeline.run(message, self)

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """No lock: this memory writes nothing."""
        return None

    def idle(self, *stages: Message[Any]) -> bool:
        """Not known here: every stage is delivered."""
        return False

    def deliver(self, message: Message[Any]) -> Any:
        """Answer a query; a message for a writer role raises ``ReadOnlyError``."""
        cls = handler_of(message)
        with self._lock:
            if cls is Auditor:
                return self._auditor.handle(message)
            if cls is Reader:
                return self._live_reader().handle(message)
        raise ReadOnlyError(
            f"{type(message).__name__} writes to the log, and this memory is open "
            "read-only: nothing was written"
        )

    def view(self) -> MemoryView:
        """The read models caught up with the log, as a view whose searches log nothing."""
        with self._lock:
            return self._live_reader().view

    def start(self, messages: Sequence[Message[Any]]) -> None:
        raise ReadOnlyError("a read-only memory runs no background work")

    def drain(self, timeout: float | None = None) -> None:
        """Nothing runs in the background of a read-only memory."""

    def reload(self) -> None:
        raise ReadOnlyError("a read-only memory erases nothing")

    def _live_digests(self) -> list[tuple[int, dict[str, str]]]:
        """The hydrated models' position and digests (none until a query hydrated them)."""
        with self._lock:
            if self._reader is None:
                return []
            live = self._reader.live
            live.refresh()
            return [(live.state.position, live.state.digests())]

    def close(self, *, snapshot: bool) -> None:
        """No lease was taken and no snapshot is written: only the connection is released."""
        del snapshot
        self.store.close()


__all__ = ["ReadOnlyRuntime"]
