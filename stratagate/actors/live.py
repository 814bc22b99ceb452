"""A role's window on the log: read models kept caught up, and appends with stale detection.

Any number of handles, in any processes, may write one namespace. Each keeps its own folded
state; before deciding, a role ``refresh``es it (a head probe, then a read of only what is new).
An append carries the version of its stream the state showed (``expected_version``) and a fence
against erasures after the state's position: if another writer got there first, the log's unique
key and the fence refuse the append with ``StaleHandleError`` and nothing lands. An append that
lands is folded from the events in hand — no read, no decode; stored shapes are canonical when
built (``stratagate.events.payloads``), so they fold exactly as replay's decoded copies — once
the state has caught up to the row before it. Under Ray, appends carry the actor's writer lease
too, so a recycled actor's late rows never land.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from projections.blocks import forget_turn_digest, thread_key
from projections.replay import PAGE_SIZE, apply_at, decode_at, hydrate, save_snapshot
from projections.state import NamespaceState
from stratagate.actors.snapshot_writer import SnapshotWriter
from stratagate.errors import KeyRaceError
from stratagate.events import ERASURE_TYPES, DomainEvent, Recorded, TurnAppended
from stratagate.events.codec import encode_all
from stratagate.read.view import MemoryView
from stratagate.store import GENESIS_HASH, EventStore, Fence, Lease, NewEvent, StoredEvent
from stratagate.store.keys import keys_for

KEY_RACE_ATTEMPTS = 5
"""How often an append encodes again after another writer stored a data key of a name first."""

JOURNAL_SIZE = 64
"""How many of its own appended events a state remembers (``journal``) before it forgets
the older half."""


@dataclass
class LiveCounters:
    """What keeping the state live cost: catch-up reads, rows read and folded, and appends
    folded straight from the events in hand."""

    catch_up_reads: int = 0
    rows_caught_up: int = 0
    appends_folded_directly: int = 0
    head_probes: int = 0
    erasures_seen: int = 0
    """Erasures other writers appended, each folded by a fresh rehydration."""


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
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.snapshot_key = snapshot_key
        self.snapshot_every = snapshot_every
        self.lease = lease
        self.counters = LiveCounters()
        self.keys = keys_for(store, namespace)
        self.components = components
        self.snapshots = SnapshotWriter(store, namespace, components, snapshot_key)
        """Writes the periodic snapshots in the background (``snapshot`` writes one now)."""
        self._requested_at = 0
        self.generation = 0
        self._hydrate()

    def _hydrate(self) -> None:
        self.state, self.from_snapshot = hydrate(
            self.store, self.namespace, self.snapshot_key, self.components
        )
        self._snapshot_position = self.state.position if self.from_snapshot else 0
        self._origin: int | None = 0 if self.state.position else None
        """Where the namespace's log began, as positions go (they are global to the database):
        0 when it had rows here (as before), else about where its first rows land."""
        self._handled = self.state.handled_types
        self._last_hash: str | None = GENESIS_HASH if self.state.position == 0 else None
        """Hash of the last row folded, when known (unknown after a snapshot restore)."""
        self._versions: dict[str, int] = {}
        """Each stream's version as of ``state.position`` (asked of the store on first use)."""
        self._forget()

    def _forget(self) -> None:
        """Start a new ``journal``: what was folded before it is no longer told apart."""
        self.journal: list[tuple[int, str, str | None]] = []
        """(position, event type, the thread of a turn) of each event this state folded from
        its own appends, oldest first, since ``generation`` began: what changed lately, for
        a runtime that skips stages with nothing to do (see ``InlineRuntime``)."""
        self.generation += 1
        """Moves whenever the state folds something it does not journal (rows caught up from
        the log, a rehydration) and when the journal is trimmed."""

    def _note(self, position: int, event: DomainEvent) -> None:
        journal = self.journal
        if len(journal) >= JOURNAL_SIZE:
            self._forget()
            journal = self.journal
        thread = thread_key(event.thread_id) if isinstance(event, TurnAppended) else None
        journal.append((position, event.type, thread))

    def rehydrate(self) -> None:
        """Drop the cached keys and the folded state, and fold the log again (after an
        erasure: the erased content now reads redacted, and no copy of it stays here)."""
        self.snapshots.fence()
        self.keys.forget()
        forget_turn_digest()
        self._hydrate()

    def version(self, stream: str) -> int:
        """The version of ``stream`` the state has folded: what an append to it expects."""
        found = self._versions.get(stream)
        if found is None:
            found = self.store.stream_version(self.namespace, stream, at=self.state.position)
            self._versions[stream] = found
        return found

    @property
    def view(self) -> MemoryView:
        return MemoryView(self.state)

    def refresh(self) -> int:
        """Fold what other writers appended since the last look; returns how many events.
        Costs one head probe when nothing is new."""
        count = self._fold_new()
        if count:
            self._maybe_snapshot()
        return count

    def _fold_new(self) -> int:
        self.counters.head_probes += 1
        if self.store.head(self.namespace) <= self.state.position:
            return 0
        return self._catch_up(until=None)

    def _catch_up(self, until: int | None) -> int:
        count = 0
        erased = False
        while True:
            self.counters.catch_up_reads += 1
            rows = self.store.read(self.namespace, after=self.state.position, limit=PAGE_SIZE)
            if rows:
                self._forget()  # others' rows: what they changed is not told apart here
            for row in rows:
                if until is not None and row.global_position > until:
                    return self._after_catch_up(count, erased)
                if row.event_type in self._handled:
                    apply_at(self.state, decode_at(row, self.keys))
                else:  # a role's state holds only some models: no need to decode the rest
                    self.state.skip(row.global_position)
                erased = erased or row.event_type in ERASURE_TYPES
                self._versions[row.stream] = row.stream_version
                self._last_hash = row.hash
                count += 1
            self.counters.rows_caught_up += len(rows)
            if len(rows) < PAGE_SIZE:
                return self._after_catch_up(count, erased)

    def _after_catch_up(self, count: int, erased: bool) -> int:
        if erased:  # another writer destroyed keys: no plaintext or key of it may stay here
            self.counters.erasures_seen += 1
            self.rehydrate()
        return count

    def append(
        self,
        stream: str,
        events: Sequence[DomainEvent],
        *,
        command_id: str,
        expected_version: int | None = None,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """Append ``events`` atomically to ``stream`` and fold them (and anything before them).

        The append expects the stream at the version the state folded (or ``expected_version``)
        and no erasure since the state's position; otherwise ``StaleHandleError``, nothing
        appended."""
        expected = self.version(stream) if expected_version is None else expected_version
        erasing = any(event.type in ERASURE_TYPES for event in events)
        if erasing:
            self.snapshots.fence()  # no snapshot of what this erasure destroys may be saved
        fence = Fence(self.state.position, ERASURE_TYPES)
        rows = self.store.append(
            self.namespace,
            stream,
            self._encode(events, command_id),
            expected,
            lease=self.lease,
            durable=durable,
            fence=fence,
        )
        if not rows:
            return rows
        first = rows[0]
        if first.global_position <= self.state.position:  # a retried batch, already folded
            return rows
        if first.prev_hash != self._last_hash:
            self._catch_up(until=first.global_position - 1)  # someone wrote in between
        if first.prev_hash == self._last_hash and first.global_position > self.state.position:
            for row, event in zip(rows, events, strict=True):
                self.state.apply(
                    Recorded(
                        row.global_position, row.namespace, row.stream, row.stream_version, event
                    )
                )
                self._note(row.global_position, event)
            self._versions[stream] = rows[-1].stream_version
            self._last_hash = rows[-1].hash
            self.counters.appends_folded_directly += 1
        else:
            self._catch_up(until=None)
        if not erasing:  # the erasure's keys are destroyed next, then the state is rebuilt
            self._maybe_snapshot()
        return rows

    def _encode(self, events: Sequence[DomainEvent], command_id: str) -> list[NewEvent]:
        """The rows of ``events``; encoded again with the winner's keys when another writer
        stored a data key of the same name first."""
        ids = [f"{command_id}:{i}" for i in range(len(events))]
        for attempt in range(KEY_RACE_ATTEMPTS):
            try:
                return encode_all(events, ids, self.keys)
            except KeyRaceError:
                if attempt == KEY_RACE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    @property
    def snapshot_position(self) -> int:
        """The position of the last snapshot this state wrote or was restored from."""
        return max(self._snapshot_position, self.snapshots.position)

    def snapshot(self) -> None:
        """Write a snapshot of the current state now, after any background write in flight
        and a look for what others appended (an erasure elsewhere is folded first); another
        writer's key race on the snapshot's key costs one more try."""
        self.snapshots.join()
        self._fold_new()
        try:
            save_snapshot(self.store, self.state, self.snapshot_key)
        except KeyRaceError:
            save_snapshot(self.store, self.state, self.snapshot_key)
        self._snapshot_position = self.state.position

    def close(self) -> None:
        """Finish (or, past its timeout, abandon with a logged reason) the background write."""
        self.snapshots.close()

    def _maybe_snapshot(self) -> None:
        """After ``snapshot_every`` events, and at least half the log's length at the previous
        snapshot (so a snapshot's cost per event stays constant and a restart folds at most
        a third of the log), ask the background writer for a snapshot: the turn never
        serialises the state nor waits for a write."""
        if not self.snapshot_every:  # snapshots off (an in-memory namespace): nothing to ask
            return
        if self._origin is None:  # a new namespace: the rows before it are other namespaces'
            self._origin = self.state.position - 1
        since = max(self.snapshot_position, self._requested_at, self._origin)
        gap = max(self.snapshot_every, (since - self._origin) // 2)
        due = self.snapshot_every and self.state.position - since >= gap
        if due and self.snapshots.request():
            self._requested_at = self.state.position


def fresh_state(namespace: str, components: Iterable[str] | None) -> NamespaceState:
    """An empty state with the given models (used for rebuilds and tests)."""
    return NamespaceState(namespace, components)


__all__ = ["LiveCounters", "LiveState", "fresh_state"]
