"""The event store in plain Python: the same contract as the SQL store, for ephemeral memories.

``StrataGate.in_memory()`` uses it: rows live in lists and dictionaries of this process, so an
append is a few list operations and a hash, not SQL. Everything the contract promises holds
here too — atomic batches, expected versions, idempotent retries, the per-namespace hash chain,
leases and epochs, snapshots — and the conformance suite runs against it like against SQLite
and PostgreSQL. Nothing survives ``close()``.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from stratagate.errors import (
    FencedWriterError,
    InvalidInputError,
    LogIntegrityError,
    StorageConflictError,
    StorageError,
    WriterBusyError,
)
from stratagate.store.chain import check_chain, rechain, seal_batch
from stratagate.store.leases import DEFAULT_TTL_S, Holder, Lease, may_take_over
from stratagate.store.records import (
    GENESIS_HASH,
    DataKey,
    Fence,
    ImportedLog,
    LogFault,
    NewEvent,
    PurgeRecord,
    Snapshot,
    StoredEvent,
)
from stratagate.store.validation import (
    check_batch,
    check_fence,
    check_name,
    check_snapshot,
    fence_crossed,
    is_count,
    replayed,
    stale_version,
)
from stratagate.timeutil import format_utc, utc_now

IN_PROCESS_URL = "memory://"


@dataclass
class _LeaseRow:
    epoch: int
    holder: Holder
    renewed_at: float
    ttl_s: float
    released: bool = False


@dataclass
class _Namespace:
    rows: list[StoredEvent] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)


class StoreCounters:
    """How much work a store did (for benchmarks): statements are list operations here."""

    def __init__(self) -> None:
        self.statements = 0


class InProcessEventStore:
    """The log in this process's memory: one list of rows per namespace, chained."""

    def __init__(self, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.url = IN_PROCESS_URL
        self.counters = StoreCounters()
        self._clock = clock
        self._lock = threading.RLock()
        self._turns = threading.RLock()
        self._namespaces: dict[str, _Namespace] = {}
        self._by_id: dict[str, StoredEvent] = {}
        self._all: list[StoredEvent] = []
        self._snapshots: dict[tuple[str, str], Snapshot] = {}
        self._leases: dict[str, _LeaseRow] = {}
        self._keys: dict[tuple[str, str], DataKey] = {}
        self._purges: list[PurgeRecord] = []
        self._closed = False

    def __enter__(self) -> InProcessEventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- appends ----------------------------------------------------------------------------

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
        """Append all of ``events`` or none (see ``EventStore.append``); ``durable`` is moot."""
        check_name("namespace", namespace)
        check_name("stream", stream)
        if expected_version is not None and not is_count(expected_version):
            raise InvalidInputError(
                f"expected_version must be an int >= 0 or None, not {expected_version!r}"
            )
        batch = check_batch(events)
        check_fence(fence)
        with self._lock:
            self._ensure_open()
            if not batch:
                return []
            stored = {
                new.event_id: self._by_id[new.event_id]
                for new in batch
                if new.event_id in self._by_id
            }
            if stored:
                return replayed(namespace, stream, batch, stored)
            if lease is not None:
                self._check_lease(lease)
            space = self._namespaces.setdefault(namespace, _Namespace())
            current = space.versions.get(stream, 0)
            if expected_version is not None and expected_version != current:
                raise stale_version(namespace, stream, expected_version, current)
            if fence is not None and space.rows and space.rows[-1].global_position > fence.position:
                crossed = next(
                    (
                        row.event_type
                        for row in _after(space.rows, fence.position, None)
                        if row.event_type in fence.event_types
                    ),
                    None,
                )
                if crossed is not None:
                    raise fence_crossed(namespace, stream, fence, crossed)
            last = self._all[-1].global_position if self._all else 0
            rows = seal_batch(
                batch,
                namespace=namespace,
                stream=stream,
                first_position=last + 1,
                first_version=current + 1,
                recorded_at=format_utc(self._clock()),
                prev_hash=space.rows[-1].hash if space.rows else GENESIS_HASH,
            )
            space.rows.extend(rows)
            space.versions[stream] = current + len(rows)
            self._all.extend(rows)
            self._by_id.update((row.event_id, row) for row in rows)
            self.counters.statements += 1
            return rows

    def _check_lease(self, lease: Lease) -> None:
        row = self._leases.get(lease.namespace)
        if row is None or row.epoch != lease.epoch or row.released:
            raise FencedWriterError(
                f"the write lease of namespace {lease.namespace!r} moved on: nothing was appended"
            )

    # -- reads ------------------------------------------------------------------------------

    def read(self, namespace: str, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of ``namespace`` with ``global_position > after``, in position order."""
        check_name("namespace", namespace)
        with self._lock:
            self._ensure_open()
            space = self._namespaces.get(namespace)
            return _after(space.rows if space else [], after, limit)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of every namespace with ``global_position > after``."""
        with self._lock:
            self._ensure_open()
            return _after(self._all, after, limit)

    @contextmanager
    def taking_turns(self, namespace: str) -> Iterator[None]:
        """The decision lock: this store lives in one process, so a thread lock."""
        check_name("namespace", namespace)
        with self._turns:
            yield

    def stream_version(self, namespace: str, stream: str, *, at: int | None = None) -> int:
        check_name("namespace", namespace)
        check_name("stream", stream)
        with self._lock:
            space = self._namespaces.get(namespace)
            if space is None:
                return 0
            if at is None:
                return space.versions.get(stream, 0)
            return max(
                (
                    r.stream_version
                    for r in space.rows
                    if r.stream == stream and r.global_position <= at
                ),
                default=0,
            )

    def head(self, namespace: str) -> int:
        check_name("namespace", namespace)
        with self._lock:
            space = self._namespaces.get(namespace)
            return space.rows[-1].global_position if space and space.rows else 0

    def count(self, namespace: str) -> int:
        check_name("namespace", namespace)
        with self._lock:
            space = self._namespaces.get(namespace)
            return len(space.rows) if space else 0

    def global_head(self) -> int:
        with self._lock:
            return self._all[-1].global_position if self._all else 0

    def namespaces(self) -> list[str]:
        with self._lock:
            return sorted(name for name, space in self._namespaces.items() if space.rows)

    def verify_chain(self, namespace: str) -> int | None:
        """The first row of ``namespace`` whose hash does not verify, or ``None``."""
        fault = self.find_fault(namespace)
        return fault.position if fault else None

    def find_fault(self, namespace: str) -> LogFault | None:
        """The first row of ``namespace`` that does not chain, with the reason, or ``None``."""
        check_name("namespace", namespace)
        with self._lock:
            space = self._namespaces.get(namespace)
            walk = check_chain(space.rows if space else [])
        if walk.first_bad_position is None:
            return None
        return LogFault(walk.first_bad_position, walk.reason)

    def check_head(self, namespace: str) -> None:
        """Rows here are only ever appended whole, so the head is always the last row."""
        check_name("namespace", namespace)

    # -- snapshots --------------------------------------------------------------------------

    def save_snapshot(self, snapshot: Snapshot) -> None:
        check_snapshot(snapshot)
        with self._lock:
            self._ensure_open()
            self._snapshots[(snapshot.namespace, snapshot.key)] = snapshot

    def load_snapshot(self, namespace: str, key: str) -> Snapshot | None:
        check_name("namespace", namespace)
        check_name("key", key)
        with self._lock:
            return self._snapshots.get((namespace, key))

    # -- leases -----------------------------------------------------------------------------

    def acquire_lease(
        self, namespace: str, holder: Holder, *, ttl_s: float = DEFAULT_TTL_S
    ) -> Lease:
        """Become the writer of ``namespace`` (see ``SqlEventStore.acquire_lease``)."""
        check_name("namespace", namespace)
        with self._lock:
            row = self._leases.get(namespace)
            now = time.time()
            if (
                row is not None
                and not row.released
                and not may_take_over(row.holder, row.renewed_at, row.ttl_s, now=now)
            ):
                raise WriterBusyError(
                    f"namespace {namespace!r} is open for writing by {row.holder.describe()}"
                )
            epoch = (row.epoch if row is not None else 0) + 1
            self._leases[namespace] = _LeaseRow(epoch, holder, now, ttl_s)
            return Lease(namespace, epoch, holder, ttl_s)

    def renew_lease(self, lease: Lease) -> None:
        with self._lock:
            self._check_lease(lease)
            self._leases[lease.namespace].renewed_at = time.time()

    def release_lease(self, lease: Lease) -> None:
        with self._lock:
            row = self._leases.get(lease.namespace)
            if row is not None and row.epoch == lease.epoch:
                row.released = True

    # -- data keys and erasure ---------------------------------------------------------------

    def put_keys(self, keys: Sequence[DataKey]) -> list[str]:
        """Store new data keys; returns the ids already stored (kept as they were)."""
        with self._lock:
            self._ensure_open()
            taken = [key.key_id for key in keys if (key.namespace, key.key_id) in self._keys]
            for key in keys:
                self._keys.setdefault((key.namespace, key.key_id), key)
            return taken

    def load_keys(self, namespace: str) -> list[DataKey]:
        """Every data key of ``namespace``, tombstones included."""
        check_name("namespace", namespace)
        with self._lock:
            return sorted(
                (key for (space, _), key in self._keys.items() if space == namespace),
                key=lambda key: key.key_id,
            )

    def flush_erased(self, wait: float) -> bool | None:
        """Nothing outlives ``shred`` in this process's memory but Python's own garbage."""
        return True

    def shred(self, namespace: str, key_ids: Sequence[str] | None, at: str) -> int:
        """Destroy data keys (all of the namespace's with ``None``) and its snapshots."""
        check_name("namespace", namespace)
        with self._lock:
            self._ensure_open()
            wanted = None if key_ids is None else set(key_ids)
            done = 0
            for (space, key_id), key in list(self._keys.items()):
                if space != namespace or key.material is None:
                    continue
                if wanted is None or key_id in wanted:
                    self._keys[(space, key_id)] = DataKey(
                        namespace, key_id, None, None, key.created_at, at
                    )
                    done += 1
            for pair in [pair for pair in self._snapshots if pair[0] == namespace]:
                del self._snapshots[pair]
            return done

    def purge_namespace(self, namespace: str, *, reason: str, at: str) -> PurgeRecord:
        """Delete every row of ``namespace`` and keep an audit record of it."""
        check_name("namespace", namespace)
        with self._lock:
            self._ensure_open()
            space = self._namespaces.pop(namespace, None)
            rows = space.rows if space else []
            for row in rows:
                del self._by_id[row.event_id]
            self._all = [row for row in self._all if row.namespace != namespace]
            self._leases.pop(namespace, None)
            for table in (self._snapshots, self._keys):
                for pair in [pair for pair in table if pair[0] == namespace]:
                    del table[pair]
            record = PurgeRecord(
                namespace, at, len(rows), rows[-1].hash if rows else GENESIS_HASH, reason
            )
            self._purges.append(record)
            return record

    def purges(self) -> list[PurgeRecord]:
        """The audit records of purged namespaces, oldest first."""
        with self._lock:
            return list(self._purges)

    def import_log(
        self,
        namespace: str,
        rows: Iterable[StoredEvent],
        keys: Sequence[DataKey],
        *,
        keep_positions: bool,
    ) -> ImportedLog:
        """Write another log into the empty ``namespace``, all or nothing (see
        ``EventStore.import_log``): rows are collected first and stored at the end."""
        check_name("namespace", namespace)
        with self._lock:
            self._ensure_open()
            space = self._namespaces.get(namespace)
            if (space is not None and space.rows) or any(n == namespace for n, _ in self._keys):
                raise StorageConflictError(
                    f"namespace {namespace!r} already holds a log or keys in this store: import "
                    "into another namespace (nothing was imported)"
                )
            high = self._all[-1].global_position if self._all else 0
            copied: list[StoredEvent] = []
            versions: dict[str, int] = {}
            for row in rows:
                if row.event_id in self._by_id:
                    raise StorageConflictError(
                        f"event id {row.event_id!r} is stored already: this log is in this "
                        "store already (event ids are unique across its namespaces); nothing "
                        "was imported"
                    )
                last = copied[-1].global_position if copied else high
                position = row.global_position if keep_positions else last + 1
                if position <= last:
                    raise StorageConflictError(
                        f"the log's position {position} is not above the store's highest "
                        f"position {last}: it cannot be kept (nothing was imported)"
                    )
                prev = copied[-1].hash if copied else GENESIS_HASH
                [new] = rechain([row], namespace=namespace, positions=[position], prev_hash=prev)
                if keep_positions and new.hash != row.hash:
                    raise LogIntegrityError(
                        "rows copied at their own positions do not keep their hashes: they are "
                        "not one namespace's log from its first row; nothing was imported"
                    )
                copied.append(new)
                versions[row.stream] = max(versions.get(row.stream, 0), row.stream_version)
            for key in keys:
                self._keys[(namespace, key.key_id)] = DataKey(
                    namespace,
                    key.key_id,
                    key.material,
                    key.wrapped,
                    key.created_at,
                    key.destroyed_at,
                )
            self._namespaces[namespace] = _Namespace(copied, versions)
            self._all.extend(copied)
            self._by_id.update((row.event_id, row) for row in copied)
            head = copied[-1] if copied else None
            return ImportedLog(
                namespace,
                len(copied),
                head.global_position if head else 0,
                head.hash if head else GENESIS_HASH,
                keep_positions,
            )

    def close(self) -> None:
        """Forget everything; the store is unusable afterwards."""
        with self._lock:
            self._closed = True
            self._namespaces.clear()
            self._by_id.clear()
            self._all.clear()
            self._snapshots.clear()
            self._keys.clear()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"the event store {self.url} is closed")


def _after(rows: list[StoredEvent], after: int, limit: int | None) -> list[StoredEvent]:
    if not is_count(after):
        raise InvalidInputError(f"after must be an int >= 0, not {after!r}")
    if limit is not None and not is_count(limit):
        raise InvalidInputError(f"limit must be an int >= 0 or None, not {limit!r}")
    start = _first_after(rows, after)
    end = len(rows) if limit is None else start + limit
    return rows[start:end]


def _first_after(rows: list[StoredEvent], after: int) -> int:
    """Index of the first row with ``global_position > after`` (rows are in position order)."""
    return bisect.bisect_right(rows, after, key=_position)


def _position(row: StoredEvent) -> int:
    return row.global_position


__all__ = ["IN_PROCESS_URL", "InProcessEventStore"]
