"""A role's window on the log: read models kept caught up, and appends with stale detection.

Catch-up folds every event of the namespace in log order, whoever wrote it. An append is
folded from the events in hand — no read, no decode; stored shapes are canonical when built
(``stratagate.events.payloads``), so they fold exactly as replay's decoded copies — when the log
shows nothing was written in between (the new rows chain onto the last row this state folded); otherwise the state
catches up first. Appends carry the holder's writer lease, so a fenced writer's rows never land.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from projections.replay import PAGE_SIZE, apply_at, decode_at, hydrate, save_snapshot
from projections.state import NamespaceState
from stratagate.errors import FencedWriterError
from stratagate.events import DomainEvent, Recorded
from stratagate.events.codec import encode_all
from stratagate.read.view import MemoryView
from stratagate.store import GENESIS_HASH, EventStore, Lease, StoredEvent
from stratagate.store.keys import keys_for


@dataclass
class LiveCounters:
    """What keeping the state live cost: catch-up reads, rows read and folded, and appends
    folded straight from the events in hand."""

    catch_up_reads: int = 0
    rows_caught_up: int = 0
    appends_folded_directly: int = 0


class LiveState:
    """The read models one host keeps for a namespace, hydrated from snapshot + log tail."""

    def __init__(
        self,
        store: EventStore,
        namespace: str,
        components: Iterable[str] | None,
        *,
        snapshot_key: str,
        snapshot_every: int = 1000,
        lease: Lease | None = None,
        exclusive: bool = False,
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.snapshot_key = snapshot_key
        self.snapshot_every = snapshot_every
        self.lease = lease
        self.exclusive = exclusive and lease is not None
        """Every writer of the namespace shares this state (inline, under its lease): nothing
        can reach the log that was not folded here, so ``refresh`` has nothing to read."""
        self.counters = LiveCounters()
        self.keys = keys_for(store, namespace)
        self.components = components
        self._hydrate()

    def _hydrate(self) -> None:
        self.state, self.from_snapshot = hydrate(
            self.store, self.namespace, self.snapshot_key, self.components
        )
        self.snapshot_position = self.state.position if self.from_snapshot else 0
        """The position of the last snapshot this state wrote or was restored from."""
        self._handled = self.state.handled_types
        self._last_hash: str | None = GENESIS_HASH if self.state.position == 0 else None
        """Hash of the last row folded, when known (unknown after a snapshot restore)."""

    def hold(self, lease: Lease) -> None:
        """Append under ``lease`` from now on, as the namespace's only writer: fold what was
        appended since hydration, then stop looking for other writers' rows."""
        self.lease = lease
        self._catch_up(until=None)
        self.exclusive = True

    def rehydrate(self) -> None:
        """Drop the cached keys and the folded state, and fold the log again (after an
        erasure: the erased content now reads redacted, and no copy of it stays here)."""
        self.keys.forget()
        self._hydrate()

    @property
    def view(self) -> MemoryView:
        return MemoryView(self.state)

    def refresh(self) -> int:
        """Fold what other writers appended since the last look; returns how many events."""
        if self.exclusive:
            return 0
        count = self._catch_up(until=None)
        if count:
            self._maybe_snapshot()
        return count

    def _catch_up(self, until: int | None) -> int:
        count = 0
        while True:
            self.counters.catch_up_reads += 1
            rows = self.store.read(self.namespace, after=self.state.position, limit=PAGE_SIZE)
            for row in rows:
                if until is not None and row.global_position > until:
                    return count
                if row.event_type in self._handled:
                    apply_at(self.state, decode_at(row, self.keys))
                else:  # a role's state holds only some models: no need to decode the rest
                    self.state.skip(row.global_position)
                self._last_hash = row.hash
                count += 1
            self.counters.rows_caught_up += len(rows)
            if len(rows) < PAGE_SIZE:
                return count

    def append(
        self,
        stream: str,
        events: Sequence[DomainEvent],
        *,
        expected_version: int,
        command_id: str,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """Append ``events`` atomically to ``stream`` and fold them (and anything before them)."""
        ids = [f"{command_id}:{i}" for i in range(len(events))]
        encoded = encode_all(events, ids, self.keys)
        try:
            rows = self.store.append(
                self.namespace, stream, encoded, expected_version, lease=self.lease, durable=durable
            )
        except FencedWriterError:
            self.exclusive = False  # another writer owns the namespace now: read what it wrote
            raise
        if not rows:
            return rows
        first = rows[0]
        if first.global_position <= self.state.position:  # a retried batch, already folded
            return rows
        if first.prev_hash != self._last_hash:
            self._catch_up(until=first.global_position - 1)  # someone wrote in between
        if first.prev_hash == self._last_hash:
            for row, event in zip(rows, events, strict=True):
                self.state.apply(
                    Recorded(
                        row.global_position, row.namespace, row.stream, row.stream_version, event
                    )
                )
            self._last_hash = rows[-1].hash
            self.counters.appends_folded_directly += 1
        else:
            self._catch_up(until=None)
        self._maybe_snapshot()
        return rows

    def snapshot(self) -> None:
        """Write a snapshot of the current state now."""
        save_snapshot(self.store, self.state, self.snapshot_key)
        self.snapshot_position = self.state.position

    def _maybe_snapshot(self) -> None:
        if (
            self.snapshot_every
            and self.state.position - self.snapshot_position >= self.snapshot_every
        ):
            self.snapshot()


def fresh_state(namespace: str, components: Iterable[str] | None) -> NamespaceState:
    """An empty state with the given models (used for rebuilds and tests)."""
    return NamespaceState(namespace, components)


__all__ = ["LiveCounters", "LiveState", "fresh_state"]
