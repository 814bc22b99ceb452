"""The storage contract of the log: rows going in, rows coming out, and the store's
capabilities — the log, leases, snapshots, keys, purges — one protocol each.

The store knows nothing of domain events: it stores canonical JSON text it is given, chains it
per namespace, and hands it back in position order. Decoding into typed domain events happens
above it (``stratagate.events.codec``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from stratagate.store.leases import Holder, Lease

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first row of every namespace."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One event to append: its id, type, schema version and canonical JSON payload text."""

    event_id: str
    event_type: str
    schema_version: int
    payload: str


@dataclass(frozen=True, slots=True)
class EncodedEvent(NewEvent):
    """A ``NewEvent`` whose payload the event codec wrote (``canonical_json``): JSON by
    construction, so an append does not parse it again to check it."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One row of ``stratagate_events`` exactly as stored (``payload`` is the hashed text)."""

    global_position: int
    namespace: str
    stream: str
    stream_version: int
    event_id: str
    event_type: str
    schema_version: int
    recorded_at: str
    payload: str
    prev_hash: str
    hash: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A disposable read-model checkpoint: the position it covers and the digest it had."""

    namespace: str
    key: str
    position: int
    digest: str
    model_version: int
    payload: bytes
    created_at: str


@dataclass(frozen=True, slots=True)
class DataKey:
    """One data key of a namespace, kept outside the chained rows (``stratagate_keys``).

    ``material`` is the key (wrapped by the key-encryption key whose fingerprint ``wrapped``
    names, or bare when ``wrapped`` is ``None``); a destroyed key keeps its row as a tombstone
    with ``material=None`` and ``destroyed_at`` set, so its ciphertext reads as erased, not as
    missing.
    """

    namespace: str
    key_id: str
    material: bytes | None
    wrapped: str | None
    created_at: str
    destroyed_at: str | None = None


@dataclass(frozen=True, slots=True)
class PurgeRecord:
    """The audit row a physical namespace purge leaves behind (``stratagate_purges``)."""

    namespace: str
    purged_at: str
    rows: int
    last_hash: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportedLog:
    """What ``EventStore.import_log`` wrote: how many rows, the new head, and whether the rows
    kept their positions (then their hashes, and so the head hash, are the originals')."""

    namespace: str
    rows: int
    head_position: int
    head_hash: str
    positions_kept: bool


@dataclass(frozen=True, slots=True)
class Fence:
    """A condition on the rest of the namespace for an append to land: no event of
    ``event_types`` after ``position`` (the position the writer decided at). Another writer's
    erasure behind a writer's back must not be undone by content the writer still holds."""

    position: int
    event_types: frozenset[str]


@dataclass(frozen=True, slots=True)
class LogFault:
    """Where a namespace's stored log first goes wrong, and why (one line)."""

    position: int
    reason: str


@runtime_checkable
class EventLog(Protocol):
    """The log itself: atomic appends with optimistic concurrency, ordered reads, the chain."""

    url: str

    def append(
        self,
        namespace: str,
        stream: str,
        events: Sequence[NewEvent],
        expected_version: int | None,
        *,
        lease: Lease | None = None,
        durable: bool = True,
        fence: Fence | None = None,
    ) -> list[StoredEvent]:
        """Append all of ``events`` to ``stream`` of ``namespace`` or none of them.

        ``expected_version`` is the stream's current version as the writer knows it (0 for an
        empty stream); a mismatch raises ``StaleHandleError`` (a ``StorageConflictError``), as
        does an event ``fence`` forbids. ``None`` skips the check.
        Re-appending a batch whose event ids are already stored with the same content returns
        the stored rows and appends nothing (idempotent retry); the same id with different
        content raises ``StorageConflictError``. With ``lease`` the append lands only while the
        lease's epoch is current (else ``FencedWriterError``). ``durable=False`` may return
        before the commit reaches the disk; the next durable commit makes it durable.
        """
        ...

    def read(self, namespace: str, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of ``namespace`` with ``global_position > after``, in position order."""
        ...

    def read_all(self, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of every namespace with ``global_position > after``: the catch-up feed."""
        ...

    def stream_version(self, namespace: str, stream: str, *, at: int | None = None) -> int:
        """Number of events in the stream (0 when empty); with ``at``, counting only rows at
        or before global position ``at``."""
        ...

    def head(self, namespace: str) -> int:
        """The ``global_position`` of the namespace's last row (0 when empty)."""
        ...

    def count(self, namespace: str) -> int:
        """How many rows the namespace has."""
        ...

    def global_head(self) -> int:
        """The ``global_position`` of the last row of any namespace (0 when the log is empty)."""
        ...

    def taking_turns(self, namespace: str) -> AbstractContextManager[None]:
        """Hold the namespace's decision lock while the block runs: writers that collided take
        turns deciding (catch up, decide, append) instead of colliding again. Only a way to
        avoid conflicts — the expected version still decides every append."""
        ...

    def namespaces(self) -> list[str]:
        """Every namespace with at least one row, sorted."""
        ...

    def verify_chain(self, namespace: str) -> int | None:
        """The ``global_position`` of the first row whose hash does not verify, or ``None``."""
        ...

    def find_fault(self, namespace: str) -> LogFault | None:
        """The first row that does not chain (or a heads record that disagrees with the rows),
        with the reason; ``None`` when the namespace's chain verifies."""
        ...

    def check_head(self, namespace: str) -> None:
        """Raise ``LogIntegrityError`` unless the namespace's heads record is its last row
        (one row read: what every open and append checks before extending the log)."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...


@runtime_checkable
class LeaseStore(Protocol):
    """Writer leases and their epochs (``stratagate.store.leases``)."""

    def acquire_lease(self, namespace: str, holder: Holder, *, ttl_s: float = ...) -> Lease:
        """Become the namespace's writer with a new epoch (``WriterBusyError`` if a live
        holder of another process keeps it)."""
        ...

    def renew_lease(self, lease: Lease) -> None:
        """Keep ``lease`` alive (``FencedWriterError`` when it was taken over)."""
        ...

    def release_lease(self, lease: Lease) -> None:
        """Give ``lease`` up."""
        ...


@runtime_checkable
class SnapshotStore(Protocol):
    """Disposable read-model checkpoints, one per (namespace, key)."""

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store (replace) the snapshot of ``(namespace, key)``."""
        ...

    def load_snapshot(self, namespace: str, key: str) -> Snapshot | None:
        """The stored snapshot of ``(namespace, key)``, or ``None``."""
        ...


@runtime_checkable
class KeyStore(Protocol):
    """Data keys, kept outside the chained rows, and their destruction (erasure)."""

    def put_keys(self, keys: Sequence[DataKey]) -> list[str]:
        """Store new data keys; a key id already stored is left as it is, and returned (another
        process made a key of that name first). Commits without waiting for the disk: the
        append that uses the keys is a later, durable commit."""
        ...

    def load_keys(self, namespace: str) -> list[DataKey]:
        """Every data key of ``namespace``, tombstones included."""
        ...

    def shred(self, namespace: str, key_ids: Sequence[str] | None, at: str) -> int:
        """Destroy the named data keys (every key of the namespace with ``None``) and delete the
        namespace's snapshots, then flush what the database keeps of them (a SQLite file's WAL
        is checkpointed and truncated); returns how many keys were destroyed."""
        ...

    def flush_erased(self, wait: float) -> bool | None:
        """After ``shred``: wait up to ``wait`` seconds for the destroyed keys' bytes to leave
        the database file; whether they did (``None``: the backend cannot say, PostgreSQL)."""
        ...


@runtime_checkable
class PurgeStore(Protocol):
    """Physical removal of a whole namespace, with the audit row it leaves."""

    def purge_namespace(self, namespace: str, *, reason: str, at: str) -> PurgeRecord:
        """Delete every row of ``namespace`` (log, head, lease, snapshots, keys) and keep one
        audit record of it in ``stratagate_purges``."""
        ...

    def purges(self) -> list[PurgeRecord]:
        """The audit records of purged namespaces, oldest first."""
        ...


@runtime_checkable
class LogImportStore(Protocol):
    """Copying another log in whole: what ``StrataGate.import_log`` writes through."""

    def import_log(
        self,
        namespace: str,
        rows: Iterable[StoredEvent],
        keys: Sequence[DataKey],
        *,
        keep_positions: bool,
    ) -> ImportedLog:
        """Write another log's ``rows`` (in position order) and data ``keys`` into the empty
        ``namespace``, in one transaction: all of it or nothing, also when iterating ``rows``
        raises. Every column but the position and the hashes is kept; with ``keep_positions``
        the rows keep their positions too (``StorageConflictError`` unless each is above every
        position this store has handed out), else they take the next free ones and are chained
        anew. A namespace that holds rows or keys, or an event id stored already, is a
        ``StorageConflictError``."""
        ...


@runtime_checkable
class EventStore(
    EventLog, LeaseStore, SnapshotStore, KeyStore, PurgeStore, LogImportStore, Protocol
):
    """Every capability of a store: what the SQL and the in-process stores implement. Code
    that needs one capability asks for that protocol alone."""


__all__ = [
    "GENESIS_HASH",
    "DataKey",
    "EncodedEvent",
    "EventLog",
    "EventStore",
    "Fence",
    "ImportedLog",
    "KeyStore",
    "LeaseStore",
    "LogFault",
    "LogImportStore",
    "NewEvent",
    "PurgeRecord",
    "PurgeStore",
    "Snapshot",
    "SnapshotStore",
    "StoredEvent",
]
