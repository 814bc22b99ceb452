"""The read-only runtime: a namespace's read models for an audit, with no lease and no writes.

Nothing is recovered, no settings are applied and no snapshot is written; the read models are
hydrated only when a query first needs them (so ``verify``, ``history`` and ``state_at`` work
even on a log too damaged to fold) and catch up with whatever a writer elsewhere appends. A
message that would append — an ingest, a governance action, a search logging its batch —
raises ``ReadOnlyError``.
"""

from __future__ import annotations

import threading
from typing import TypeVar

from stratagate.actors.live import LiveState
from stratagate.actors.reader import Reader
from stratagate.actors.routing import Handles, route
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.errors import ReadOnlyError
from stratagate.messages import Message
from stratagate.options import MemoryOptions
from stratagate.read.view import MemoryView
from stratagate.store import EventStore

R = TypeVar("R")


class ReadOnlyRuntime:
    """Answers the read side of one namespace from the log; refuses everything that writes."""

    name = "read-only"

    def __init__(self, store: EventStore, namespace: str, options: MemoryOptions) -> None:
        self.store = store
        self.namespace = namespace
        self.options = options
        self._reader: Reader | None = None
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
        """Answer a query; a message for a writer role raises ``ReadOnlyError``."""
        if route(message) != "reader":
            raise ReadOnlyError(
                f"{type(message).__name__} writes to the log, and this memory is open "
                "read-only: nothing was written"
            )
        with self._lock:
            return self._live_reader().handle(message)

    def view(self) -> MemoryView:
        """The read models caught up with the log, as a view whose searches log nothing."""
        with self._lock:
            return self._live_reader().view

    def start_pipeline(self) -> None:
        raise ReadOnlyError("a read-only memory runs no pipeline")

    def drain(self, timeout: float | None = None) -> None:
        """Nothing runs in the background of a read-only memory."""

    def reload(self) -> None:
        """Fold the log again with fresh keys (another process erased content meanwhile)."""
        with self._lock:
            if self._reader is not None:
                self._reader.live.rehydrate()

    def positioned_digests(self) -> list[tuple[int, dict[str, str]]]:
        """The hydrated models' position and digests (none until a query hydrated them)."""
        with self._lock:
            if self._reader is None:
                return []
            live = self._reader.live
            live.refresh()
            return [(live.state.position, live.state.digests())]

    def close(self, *, snapshot: bool) -> None:
        """Nothing to release: no lease was taken, no snapshot is written."""
        del snapshot


__all__ = ["ReadOnlyRuntime"]
