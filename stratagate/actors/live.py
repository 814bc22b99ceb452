"""A role's window on the log: read models kept caught up, and appends with stale detection."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from projections.replay import catch_up, hydrate, save_snapshot
from projections.state import NamespaceState
from stratagate.events import DomainEvent, encode
from stratagate.read.view import MemoryView
from stratagate.store import EventStore, StoredEvent


class LiveState:
    """The read models one host keeps for a namespace, hydrated from snapshot + log tail.

    Catch-up folds every event of the namespace in log order, whoever wrote it; writes go
    through ``append`` with the writer's expected stream version and are folded right after.
    """

    def __init__(
        self,
        store: EventStore,
        namespace: str,
        components: Iterable[str] | None,
        *,
        snapshot_key: str,
        snapshot_every: int = 1000,
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.snapshot_key = snapshot_key
        self.snapshot_every = snapshot_every
        self.state, self.from_snapshot = hydrate(store, namespace, snapshot_key, components)
        self._snapshot_position = self.state.position if self.from_snapshot else 0

    @property
    def view(self) -> MemoryView:
        return MemoryView(self.state)

    def refresh(self) -> int:
        """Fold what other writers appended since the last look; returns how many events."""
        count = catch_up(self.state, self.store)
        if count:
            self._maybe_snapshot()
        return count

    def append(
        self,
        stream: str,
        events: Sequence[DomainEvent],
        *,
        expected_version: int,
        command_id: str,
    ) -> list[StoredEvent]:
        """Append ``events`` atomically to ``stream`` and fold them (and anything before them)."""
        rows = self.store.append(
            self.namespace,
            stream,
            [encode(event, f"{command_id}:{i}") for i, event in enumerate(events)],
            expected_version,
        )
        self.refresh()
        return rows

    def snapshot(self) -> None:
        """Write a snapshot of the current state now."""
        save_snapshot(self.store, self.state, self.snapshot_key)
        self._snapshot_position = self.state.position

    def _maybe_snapshot(self) -> None:
        if (
            self.snapshot_every
            and self.state.position - self._snapshot_position >= self.snapshot_every
        ):
            self.snapshot()


def fresh_state(namespace: str, components: Iterable[str] | None) -> NamespaceState:
    """An empty state with the given models (used for rebuilds and tests)."""
    return NamespaceState(namespace, components)


__all__ = ["LiveState", "fresh_state"]
