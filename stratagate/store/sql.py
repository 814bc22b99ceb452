"""The durable event store on SQLAlchemy 2 Core: a SQLite file, in-memory SQLite or PostgreSQL.

``open_event_store(database)`` opens it on the engine ``stratagate.store.engines`` builds for
its argument; ``SqlEventStore`` implements
the ``EventStore`` protocol of ``stratagate.store.records`` over the tables of
``stratagate.store.schema`` and the hash chain of ``stratagate.store.chain``.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row, event, func, select, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from stratagate.errors import (
    FencedWriterError,
    InvalidInputError,
    LogIntegrityError,
    ReadOnlyError,
    StorageConflictError,
    StorageError,
    WriterBusyError,
)
from stratagate.store import schema
from stratagate.store.chain import ChainCheck, check_chain, rechain, seal_batch
from stratagate.store.checkpoints import Checkpointer, checkpoint_whole
from stratagate.store.engines import (
    SQLITE_SYNCHRONOUS,
    WRITE_OPTION,
    engine_for,
    is_shared_memory,
    set_sqlite_synchronous,
)
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
from stratagate.store.snapshot_files import SnapshotFiles
from stratagate.store.statements import statements
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

_ROW = [schema.events.c[name] for name in StoredEvent.__dataclass_fields__]  # in field order
_PAGE = 1000  # rows per query when walking a whole namespace
_ID_CHUNK = 500  # event ids per ``IN (...)`` lookup, well under every bind-parameter limit


def open_event_store(
    database: str | os.PathLike[str],
    *,
    create: bool = True,
    read_only: bool = False,
    clock: Callable[[], datetime] = utc_now,
) -> SqlEventStore:
    """Open (and with ``create`` set up) the event store named by ``database``.

    A filesystem path or ``sqlite:///path`` is a SQLite file (WAL); ``":memory:"`` is a private
    in-memory SQLite on one shared connection; ``postgresql://`` and ``postgres://`` URLs use
    psycopg 3. ``clock`` stamps ``recorded_at``. Bad URLs and unreachable servers raise
    ``StorageError`` with the cause chained; a newer table layout raises ``SchemaVersionError``.
    ``read_only`` opens an existing store for audits: SQLite through a ``mode=ro`` URI (also on
    a read-only file in a read-only directory), PostgreSQL in read-only transactions (a role
    with SELECT alone suffices); no write lock is taken and every write raises
    ``ReadOnlyError``.
    """
    engine = engine_for(database, create=create and not read_only, read_only=read_only)
    try:
        return SqlEventStore(
            engine, create=create and not read_only, read_only=read_only, clock=clock
        )
    except BaseException:
        engine.dispose()
        raise


class SqlEventStore:
    """The log on one SQLAlchemy engine: atomic chained appends, ordered reads, snapshots.

    Writers on SQLite begin with ``BEGIN IMMEDIATE`` and writers on PostgreSQL hold an
    ``EXCLUSIVE`` lock on ``stratagate_events``, so appends from many processes are serialised
    and positions are assigned gap-free in commit order. The store owns ``engine``.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        create: bool = True,
        read_only: bool = False,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.engine = engine
        self.read_only = read_only
        self.url = engine.url.render_as_string(hide_password=True)
        self._clock = clock
        self._postgres = engine.dialect.name == "postgresql"
        self._upsert = upsert_builder(self._postgres)
        self._sql = statements(engine.dialect.name)
        self._file_backed = engine.dialect.name == "sqlite" and not is_shared_memory(engine)
        self.counters = StoreCounters()
        event.listen(engine, "before_cursor_execute", self.counters.count_statement)
        self._writer = _Writer(engine, self.url) if self._file_backed and not read_only else None
        self._turns = _ENGINE_TURNS.setdefault(engine, threading.RLock())
        self._held = threading.local()
        """PostgreSQL: the namespaces whose decision lock this thread holds, and how deep."""
        self._writers = self._decisions = self._checkpoints = None
        if self._file_backed and not read_only:
            self._writers = _FileQueue(f"{engine.url.database}.writers")
            self._decisions = _FileQueue(f"{engine.url.database}.turns")
            self._checkpoints = Checkpointer(self._checkpoint_log)
        self._snapshot_files = _snapshot_files(engine) if self._file_backed else None
        """A SQLite file's snapshot payloads (read-only too: its rows name them)."""
        # One shared in-memory connection must not carry two threads' transactions at once.
        self._serial: AbstractContextManager[Any] = (
            threading.RLock() if is_shared_memory(engine) else nullcontext()
        )
        self._closed = False
        if read_only:
            with self._transaction(write=False) as conn:
                schema.ensure_layout(conn, create=False)
            return
        with self._transaction(write=True) as conn:
            if self._postgres:  # concurrent first opens must not race to CREATE TABLE
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('stratagate_layout'))"))
            schema.ensure_layout(conn, create=create)

    def __enter__(self) -> SqlEventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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

        ``expected_version`` is the stream's current version as the writer knows it (0 when
        empty; ``None`` skips the check). A batch whose ids are all stored with identical
        content returns the stored rows, in batch order, whatever ``expected_version`` says;
        a partly stored or differing batch raises ``StorageConflictError``; a stale
        ``expected_version``, or an event ``fence`` forbids, ``StaleHandleError``. With ``lease``, the
        append lands only while that lease's epoch is the namespace's current one (else
        ``FencedWriterError``). Before chaining onto the stored head the head is checked against
        the namespace's last row: a broken log raises ``LogIntegrityError`` and is not extended.
        ``durable=False`` commits without waiting for the disk (see ``commit_durability``).
        """
        check_name("namespace", namespace)
        check_name("stream", stream)
        if expected_version is not None and not is_count(expected_version):
            raise InvalidInputError(
                f"expected_version must be an int >= 0 or None, not {expected_version!r}"
            )
        batch = check_batch(events)
        check_fence(fence)
        self._ensure_open()
        if not batch:
            return []
        try:
            if durable and self._writers is not None:  # a SQLite file, writable
                return self._append_on_driver(
                    namespace, stream, batch, expected_version, lease, fence
                )
            with self._transaction(write=True, durable=durable) as conn:
                run = _Run(conn)
                return self._append_in(
                    run, namespace, stream, batch, expected_version, lease, fence
                )
        except StorageConflictError as conflict:
            if not isinstance(conflict.__cause__, IntegrityError | sqlite3.IntegrityError):
                raise
            # an event id is taken: a retry of a stored batch, or a real clash
            with self._transaction(write=False) as conn:
                stored = _stored_by_id(conn, [new.event_id for new in batch])
            if not stored:
                raise
            return replayed(namespace, stream, batch, stored)

    def _append_on_driver(
        self,
        namespace: str,
        stream: str,
        batch: list[NewEvent],
        expected_version: int | None,
        lease: Lease | None,
        fence: Fence | None,
    ) -> list[StoredEvent]:
        """``_append_in`` on a SQLite file, on the store's own writer connection: the same
        statements, ``BEGIN IMMEDIATE`` and a commit at ``synchronous=FULL``, without
        SQLAlchemy's pool, connection, transaction and result objects around them (most of
        an append's time outside SQLite, measured in ``docs/BENCHMARKS.md``)."""
        assert self._writers is not None and self._writer is not None
        assert self._checkpoints is not None
        writer, queue = self._writer, self._writers
        queue.enter()  # no generator: ``_FileQueue.turn`` without its frame, on every append
        try:
            with writer.lock:
                cursor = writer.cursor()
                run = _DriverRun(cursor, self.counters)
                try:
                    run.one("BEGIN IMMEDIATE", {})
                    rows = self._append_in(
                        run, namespace, stream, batch, expected_version, lease, fence
                    )
                    cursor.execute("COMMIT")
                    if run.head is not None:
                        writer.appended(namespace, run.head)
                except sqlite3.IntegrityError as exc:
                    raise StorageConflictError(
                        f"a concurrent write clashed with this one on {self.url}: {exc}"
                    ) from exc
                except sqlite3.Error as exc:
                    raise StorageError(f"event store {self.url} failed: {exc}") from exc
                finally:
                    # refused or failed: nothing of it stays, and a connection that cannot
                    # even roll back is not used again (the next append opens another)
                    try:
                        if cursor.connection.in_transaction:
                            writer.forget()
                            cursor.execute("ROLLBACK")
                    except sqlite3.Error:
                        writer.close()
        finally:
            queue.leave()
        self._checkpoints.committed()
        return rows

    def _append_in(
        self,
        run: _Run | _DriverRun,
        namespace: str,
        stream: str,
        batch: list[NewEvent],
        expected_version: int | None,
        lease: Lease | None,
        fence: Fence | None = None,
    ) -> list[StoredEvent]:
        sql = self._sql
        key = {"ns": namespace}
        # WHY: a catch-up reader tails ``global_position > N`` of one namespace and must
        # never skip a row, which holds only if that namespace's rows become visible in
        # position order: were its position 8 committed while its 7 is still in flight, a
        # reader would see 8, move past 7 and never read it. So each writer holds the
        # namespace's advisory lock from before it draws positions until it commits: the
        # namespace's next writer cannot draw a position until this one has committed or
        # rolled back, so per namespace commit order equals position order. Writers of
        # other namespaces take other locks and do not wait. The lock also makes the
        # expected-version check and the heads update race-free. SQLite serialises every
        # writer with BEGIN IMMEDIATE instead. (What a reader of the *global* order may
        # assume: docs/OPERATIONS.md.)
        if sql.namespace_lock is not None:  # PostgreSQL
            run.one(sql.namespace_lock, key)
        # the heads row, the lease and the stream's state in one statement
        found = run.one(
            sql.before_append,
            {**key, "stream": stream, "lns": namespace if lease is None else lease.namespace},
        )
        assert found is not None
        *state, last_position, last_hash, count, epoch, released = found
        head = None if last_position is None else (last_position, last_hash, count)
        if lease is not None:
            _check_lease(lease, None if epoch is None else (epoch, released))
        current = state[0] or 0
        _check_head(namespace, head, state[1], state[2])
        if expected_version is not None and expected_version != current:
            stored = {
                row[4]: StoredEvent(*row)
                for ids in _chunks([new.event_id for new in batch])
                for row in run.all(sql.rows_by_ids(len(ids)), _id_params(ids))
            }
            if stored:  # the batch was appended before and only its answer was lost
                return replayed(namespace, stream, batch, stored)
            raise stale_version(namespace, stream, expected_version, current)
        if fence is not None and head is not None and head[0] > fence.position:
            crossed = run.one(
                sql.fence.format(types=", ".join(f"'{t}'" for t in sorted(fence.event_types))),
                {**key, "after": fence.position},
            )
            if crossed is not None:
                raise fence_crossed(namespace, stream, fence, crossed[0])
        if sql.next_positions is not None:
            drawn = run.all(sql.next_positions, {"n": len(batch)})
            positions = sorted(int(value) for (value,) in drawn)
        else:
            first = (state[3] or 0) + 1
            positions = list(range(first, first + len(batch)))
        rows = seal_batch(
            batch,
            namespace=namespace,
            stream=stream,
            positions=positions,
            first_version=current + 1,
            recorded_at=format_utc(self._clock()),
            prev_hash=head[1] if head else GENESIS_HASH,
        )
        run.many(sql.insert_events, [_columns(row) for row in rows])
        last = rows[-1]
        run.head = last.global_position
        values = {**key, "position": last.global_position, "hash": last.hash}
        if head is None:
            run.many(sql.insert_head, [{**values, "count": len(rows)}])
        else:
            run.many(sql.update_head, [{**values, "count": head[2] + len(rows)}])
        return rows

    # -- leases -----------------------------------------------------------------------------

    def acquire_lease(
        self, namespace: str, holder: Holder, *, ttl_s: float = DEFAULT_TTL_S
    ) -> Lease:
        """Become the writer of ``namespace``: a new epoch fences every earlier holder.

        A lease a live holder of another process keeps raises ``WriterBusyError`` naming it;
        one whose holder is gone (or this very process) is taken over.

        Lease writes commit without waiting for the disk (``durable=False``): an append under
        the new epoch is a durable commit after it in the write-ahead log, so it makes the
        epoch durable too; a lost release or renewal only looks like a holder that is gone.
        """
        check_name("namespace", namespace)
        with self._transaction(write=True, durable=False) as conn:
            self._lock_namespace(conn, namespace)
            row = conn.execute(
                select(schema.leases).where(schema.leases.c.namespace == namespace)
            ).one_or_none()
            now = time.time()
            if row is not None and not row.released:
                current = Holder(row.host, row.pid, row.started, row.label)
                if not may_take_over(current, row.renewed_at, row.ttl_s, now=now):
                    raise WriterBusyError(
                        f"namespace {namespace!r} is open for writing by {current.describe()}; "
                        "open it with read_only=True, or close that writer first"
                    )
            epoch = (row.epoch if row is not None else 0) + 1
            values = {
                "epoch": epoch,
                "host": holder.host,
                "pid": holder.pid,
                "started": holder.started,
                "label": holder.label,
                "renewed_at": now,
                "ttl_s": ttl_s,
                "released": False,
            }
            if row is None:
                conn.execute(schema.leases.insert().values(namespace=namespace, **values))
            else:
                conn.execute(
                    schema.leases.update()
                    .where(schema.leases.c.namespace == namespace)
                    .values(**values)
                )
        return Lease(namespace, epoch, holder, ttl_s)

    def renew_lease(self, lease: Lease) -> None:
        """Keep ``lease`` alive for holders on other hosts; ``FencedWriterError`` if lost."""
        with self._transaction(write=True, durable=False) as conn:
            done = conn.execute(
                schema.leases.update()
                .where(
                    schema.leases.c.namespace == lease.namespace,
                    schema.leases.c.epoch == lease.epoch,
                    schema.leases.c.released.is_(False),
                )
                .values(renewed_at=time.time())
            )
        if done.rowcount != 1:
            raise FencedWriterError(f"the write lease of namespace {lease.namespace!r} was lost")

    def release_lease(self, lease: Lease) -> None:
        """Give ``lease`` up (a no-op when it was already taken over)."""
        with self._transaction(write=True, durable=False) as conn:
            conn.execute(
                schema.leases.update()
                .where(
                    schema.leases.c.namespace == lease.namespace,
                    schema.leases.c.epoch == lease.epoch,
                )
                .values(released=True)
            )

    def read(self, namespace: str, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of ``namespace`` with ``global_position > after``, in position order."""
        check_name("namespace", namespace)
        return self._read_after(after, limit, namespace)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of every namespace with ``global_position > after``: the catch-up feed."""
        return self._read_after(after, limit, None)

    def stream_version(self, namespace: str, stream: str, *, at: int | None = None) -> int:
        """Number of events in the stream (0 when empty); with ``at``, of rows at or before
        global position ``at``."""
        check_name("namespace", namespace)
        check_name("stream", stream)
        if at is not None and not is_count(at):
            raise InvalidInputError(f"at must be an int >= 0 or None, not {at!r}")
        with self._transaction(write=False) as conn:
            return _stream_version(conn, namespace, stream, at)

    def head(self, namespace: str) -> int:
        """The ``global_position`` of the namespace's last row (0 when empty): the cheap probe
        a handle asks before catching up (one indexed read, no expression to build)."""
        check_name("namespace", namespace)
        if self._writer is not None:
            self._ensure_open()
            return self._writer.head(namespace)
        with self._transaction(write=False) as conn:
            row = conn.exec_driver_sql(self._sql.head, {"ns": namespace}).first()
        return int(row[0]) if row else 0

    def count(self, namespace: str) -> int:
        """How many rows the namespace has."""
        row = self._head_row(namespace)
        return row.event_count if row else 0

    def global_head(self) -> int:
        """The ``global_position`` of the last row of any namespace (0 when the log is empty)."""
        with self._transaction(write=False) as conn:
            return conn.execute(select(func.max(schema.events.c.global_position))).scalar() or 0

    @contextmanager
    def taking_turns(self, namespace: str) -> Iterator[None]:
        """The namespace's decision lock (see ``EventLog.taking_turns``): an exclusive ``flock``
        on ``<database>.turns`` for a SQLite file (processes of one machine), a transaction's
        advisory lock on PostgreSQL (any machine), a thread lock for a database in memory; the
        thread that holds it takes it again freely."""
        check_name("namespace", namespace)
        self._ensure_open()
        if self._postgres:
            held: dict[str, int] = self._held.__dict__.setdefault("depth", {})
            if held.get(namespace):  # this thread holds it already: a flow's stage
                held[namespace] += 1
                try:
                    yield
                finally:
                    held[namespace] -= 1
                return
            # a transaction's advisory lock, on a connection of its own: it ends with the
            # transaction, so no path leaves it held on a pooled connection
            key = {"key": f"stratagate turns {namespace}"}
            try:
                with self.engine.connect() as conn, conn.begin():
                    conn.exec_driver_sql(
                        "SELECT pg_advisory_xact_lock(hashtextextended("
                        "current_schema() || ' ' || %(key)s, 0))",
                        key,
                    )
                    held[namespace] = 1
                    try:
                        yield
                    finally:
                        held[namespace] = 0
            except SQLAlchemyError as exc:
                raise StorageError(f"the decision lock failed: {_detail(exc)}") from exc
            return
        if self._decisions is None:
            with self._turns:
                yield
            return
        with self._decisions.turn():
            yield

    def namespaces(self) -> list[str]:
        """Every namespace with at least one row, sorted (by Python, not the DB's collation)."""
        with self._transaction(write=False) as conn:
            return sorted(conn.execute(select(schema.heads.c.namespace)).scalars())

    def verify_chain(self, namespace: str) -> int | None:
        """The ``global_position`` of the first row whose hash does not verify, or ``None``
        (``find_fault`` says why)."""
        fault = self.find_fault(namespace)
        return fault.position if fault else None

    def find_fault(self, namespace: str) -> LogFault | None:
        """The first place the namespace's log goes wrong, with the reason, or ``None``.

        Rows are checked in position order (see ``stratagate.store.chain``). When every row
        verifies but the namespace's heads record disagrees with them, the fault is where the
        two part: the first row past the recorded head (rows added behind the store's back),
        the first position past the last row that no other namespace holds, up to the recorded
        head (a deleted tail), or the last row (a lost or edited heads record).
        """
        check_name("namespace", namespace)
        with self._transaction(write=False, snapshot=True) as conn, _lenient_text(conn):
            walk = check_chain(_walk(conn, namespace))
            if walk.first_bad_position is not None:
                return LogFault(walk.first_bad_position, walk.reason)
            head = conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()
            return _head_fault(conn, namespace, walk, head)

    def check_head(self, namespace: str) -> None:
        """Raise ``LogIntegrityError`` unless the heads record is the namespace's last row."""
        check_name("namespace", namespace)
        # one snapshot for both reads: another writer's commit in between is not damage
        with self._transaction(write=False, snapshot=True) as conn:
            head = conn.exec_driver_sql(self._sql.head, {"ns": namespace}).first()
            column = schema.events.c
            last = conn.execute(
                select(column.global_position, column.hash)
                .where(column.namespace == namespace)
                .order_by(column.global_position.desc())
                .limit(1)
            ).first()
        try:
            _check_head(namespace, head, *(last or (None, None)))
        except LogIntegrityError:
            fault = self.find_fault(namespace)  # the slow walk, only once the log is damaged
            if fault is None:
                raise
            raise LogIntegrityError(
                f"the log of namespace {namespace!r} is damaged at global position "
                f"{fault.position}: {fault.reason}; nothing was appended — run verify",
                fault.position,
            ) from None

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store (replace) the snapshot of ``(namespace, key)``. On a SQLite file the payload
        goes to a file beside the database, written and flushed before the writers' queue is
        taken, and the row names it (``stratagate.store.snapshot_files``)."""
        check_snapshot(snapshot)
        payload = bytes(snapshot.payload)
        files = self._snapshot_files
        if files is not None:
            payload = files.write(snapshot.namespace, snapshot.key, payload)
        values = {
            "namespace": snapshot.namespace,
            "key": snapshot.key,
            "position": snapshot.position,
            "digest": snapshot.digest,
            "model_version": snapshot.model_version,
            "payload": payload,
            "created_at": snapshot.created_at,
        }
        insert = self._upsert
        statement = insert(schema.snapshots).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=[schema.snapshots.c.namespace, schema.snapshots.c.key],
            set_={
                name: statement.excluded[name]
                for name in values
                if name not in ("namespace", "key")
            },
        )
        try:
            with self._transaction(write=True) as conn:
                conn.execute(statement)
        except BaseException:
            if files is not None:
                files.remove(payload)  # not stored: its file goes
            raise
        if files is not None:
            files.discard(snapshot.namespace, snapshot.key, keep=payload)  # the ones it replaced

    def load_snapshot(self, namespace: str, key: str) -> Snapshot | None:
        """The stored snapshot of ``(namespace, key)``, or ``None`` (also when the file a
        SQLite file's row names is missing or damaged: a cache, the log is replayed)."""
        check_name("namespace", namespace)
        check_name("key", key)
        with self._transaction(write=False) as conn:
            row = conn.execute(
                select(schema.snapshots).where(
                    schema.snapshots.c.namespace == namespace, schema.snapshots.c.key == key
                )
            ).one_or_none()
        if row is None:
            return None
        stored = bytes(row.payload)
        files = self._snapshot_files
        payload = stored if files is None else files.read(stored)
        if payload is None:
            return None
        return Snapshot(
            namespace=row.namespace,
            key=row.key,
            position=row.position,
            digest=row.digest,
            model_version=row.model_version,
            payload=payload,
            created_at=row.created_at,
        )

    # -- data keys and erasure ---------------------------------------------------------------

    def put_keys(self, keys: Sequence[DataKey]) -> list[str]:
        """Store new data keys; returns the ids already stored (kept as they were: another
        process made a key of that name first). Commits without waiting for the disk, as the
        durable append that uses them follows in the write-ahead log."""
        if not keys:
            return []
        insert = self._upsert
        statement = (
            insert(schema.keys)
            .on_conflict_do_nothing(index_elements=[schema.keys.c.namespace, schema.keys.c.key_id])
            .returning(schema.keys.c.key_id)
        )
        taken: list[str] = []
        with self._transaction(write=True, durable=False) as conn:
            for key in keys:  # one by one: a returned row says it was stored
                if conn.execute(statement, _key_columns(key.namespace, key)).first() is None:
                    taken.append(key.key_id)
        return taken

    def load_keys(self, namespace: str) -> list[DataKey]:
        """Every data key of ``namespace``, tombstones included."""
        check_name("namespace", namespace)
        column = schema.keys.c
        with self._transaction(write=False) as conn:
            found = conn.execute(
                select(schema.keys).where(column.namespace == namespace).order_by(column.key_id)
            ).all()
        return [
            DataKey(
                namespace=row.namespace,
                key_id=row.key_id,
                material=None if row.material is None else bytes(row.material),
                wrapped=row.wrapped,
                created_at=row.created_at,
                destroyed_at=row.destroyed_at,
            )
            for row in found
        ]

    def shred(self, namespace: str, key_ids: Sequence[str] | None, at: str) -> int:
        """Destroy data keys (all of the namespace's with ``None``) and the namespace's
        snapshots, then checkpoint a SQLite file's WAL so no copy of either stays on disk
        (``secure_delete`` overwrites the freed pages). On PostgreSQL, dead tuples stay in
        the table files until VACUUM (docs/OPERATIONS.md)."""
        check_name("namespace", namespace)
        column = schema.keys.c
        update = (
            schema.keys.update()
            .where(column.namespace == namespace, column.material.is_not(None))
            .values(material=None, wrapped=None, destroyed_at=at)
        )
        with self._transaction(write=True) as conn:
            if key_ids is None:
                done = conn.execute(update).rowcount
            else:
                done = 0
                ids = list(key_ids)
                for start in range(0, len(ids), _ID_CHUNK):
                    chunk = ids[start : start + _ID_CHUNK]
                    done += conn.execute(update.where(column.key_id.in_(chunk))).rowcount
            conn.execute(schema.snapshots.delete().where(schema.snapshots.c.namespace == namespace))
            self._discard_snapshot_files(namespace)
        self._checkpoint()  # at once if it can; ``flush_erased`` waits and says
        return done

    def purge_namespace(self, namespace: str, *, reason: str, at: str) -> PurgeRecord:
        """Delete every row of ``namespace`` and record the purge in ``stratagate_purges``."""
        check_name("namespace", namespace)
        with self._transaction(write=True) as conn:
            self._lock_namespace(conn, namespace)
            head = conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()
            rows = conn.execute(
                schema.events.delete().where(schema.events.c.namespace == namespace)
            ).rowcount
            for table in (schema.heads, schema.leases, schema.snapshots, schema.keys):
                conn.execute(table.delete().where(table.c.namespace == namespace))
            self._discard_snapshot_files(namespace)
            record = PurgeRecord(
                namespace=namespace,
                purged_at=at,
                rows=rows,
                last_hash=head.last_hash if head is not None else GENESIS_HASH,
                reason=reason,
            )
            conn.execute(
                schema.purges.insert().values(
                    namespace=namespace,
                    purged_at=at,
                    rows=rows,
                    last_hash=record.last_hash,
                    reason=reason,
                )
            )
        self._checkpoint()
        return record

    def _discard_snapshot_files(self, namespace: str) -> None:
        """Zero and remove every snapshot file of ``namespace``, inside the transaction that
        deletes its rows (a crash before the commit leaves rows naming no file: no snapshot)."""
        if self._snapshot_files is not None:
            self._snapshot_files.discard(namespace)

    def purges(self) -> list[PurgeRecord]:
        """The audit records of purged namespaces, oldest first."""
        column = schema.purges.c
        with self._transaction(write=False) as conn:
            found = conn.execute(
                select(
                    column.namespace, column.purged_at, column.rows, column.last_hash, column.reason
                ).order_by(column.id)
            ).all()
        return [PurgeRecord(*row) for row in found]

    def import_log(
        self,
        namespace: str,
        rows: Iterable[StoredEvent],
        keys: Sequence[DataKey],
        *,
        keep_positions: bool,
    ) -> ImportedLog:
        """Write another log into the empty ``namespace`` in one transaction (see
        ``EventStore.import_log``), a page of rows at a time."""
        check_name("namespace", namespace)
        with self._transaction(write=True) as conn:
            self._lock_namespace(conn, namespace)
            if keep_positions and self._postgres:
                # Other namespaces' writers wait until the copied positions are committed and
                # the sequence is moved past them (a writer that drew a position before the
                # sequence moved and collides fails with a conflict; it overwrites nothing).
                conn.exec_driver_sql(f"LOCK TABLE {schema.events.name} IN EXCLUSIVE MODE")
            _check_empty(conn, namespace)
            if keys:
                conn.execute(schema.keys.insert(), [_key_columns(namespace, key) for key in keys])
            high = self._high_water(conn)
            prev_hash, count, last = GENESIS_HASH, 0, 0
            source = iter(rows)
            while page := list(itertools.islice(source, _PAGE)):
                _check_new_ids(conn, page)
                if keep_positions:
                    positions = _kept_positions(page, max(high, last))
                elif self._sql.next_positions is not None:
                    drawn = conn.exec_driver_sql(self._sql.next_positions, {"n": len(page)})
                    positions = sorted(int(value) for value in drawn.scalars().all())
                else:
                    start = max(high, last) + 1
                    positions = list(range(start, start + len(page)))
                chained = rechain(
                    page, namespace=namespace, positions=positions, prev_hash=prev_hash
                )
                if keep_positions and any(
                    new.hash != old.hash for new, old in zip(chained, page, strict=True)
                ):
                    raise LogIntegrityError(
                        "rows copied at their own positions do not keep their hashes: they are "
                        "not one namespace's log from its first row; nothing was imported"
                    )
                conn.exec_driver_sql(self._sql.insert_events, [_columns(row) for row in chained])
                prev_hash, count, last = chained[-1].hash, count + len(page), positions[-1]
            if count:
                conn.exec_driver_sql(
                    self._sql.insert_head,
                    {"ns": namespace, "position": last, "hash": prev_hash, "count": count},
                )
            if keep_positions and self._postgres and last > high:
                conn.exec_driver_sql(f"SELECT setval('{schema.POSITION_SEQUENCE}', {int(last)})")
        return ImportedLog(namespace, count, last, prev_hash, keep_positions)

    def _high_water(self, conn: Connection) -> int:
        """The highest position this store has handed out (PostgreSQL: its sequence too)."""
        highest = conn.execute(select(func.max(schema.events.c.global_position))).scalar() or 0
        if self._postgres:
            drawn = conn.exec_driver_sql(
                f"SELECT last_value, is_called FROM {schema.POSITION_SEQUENCE}"
            ).one()
            highest = max(highest, int(drawn[0]) if drawn[1] else int(drawn[0]) - 1)
        return int(highest)

    def _checkpoint(self, wait: float = 0.0) -> bool | None:
        """Copy a SQLite file's WAL into the database and truncate it, retrying for ``wait``
        seconds while another connection's read transaction holds older pages; whether it
        finished (``None`` elsewhere: PostgreSQL keeps dead tuples until VACUUM)."""
        if not self._file_backed:
            return None
        deadline = time.monotonic() + wait
        with self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            (timeout,) = raw.execute("PRAGMA busy_timeout").fetchone()
            raw.execute("PRAGMA busy_timeout = 0")  # our own bounded wait, not the busy handler's
            try:
                while True:
                    busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                    if not busy:
                        return True
                    if time.monotonic() >= deadline:
                        return False
                    time.sleep(0.05)
            finally:
                raw.execute(f"PRAGMA busy_timeout = {int(timeout)}")

    def flush_erased(self, wait: float) -> bool | None:
        """After ``shred``: whether the destroyed keys' bytes are gone from the database file
        (a SQLite file's WAL checkpointed within ``wait`` seconds; ``None`` on PostgreSQL,
        where dead tuples stay in the table files until VACUUM)."""
        return self._checkpoint(wait)

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        self._closed = True
        if self._checkpoints is not None:
            self._checkpoints.close()
        if self._writer is not None:
            self._writer.close()
        for queue in (self._writers, self._decisions):
            if queue is not None:
                queue.close()
        self.engine.dispose()

    def _read_after(
        self, after: int, limit: int | None, namespace: str | None
    ) -> list[StoredEvent]:
        if not is_count(after):
            raise InvalidInputError(f"after must be an int >= 0, not {after!r}")
        if limit is not None and not is_count(limit):
            raise InvalidInputError(f"limit must be an int >= 0 or None, not {limit!r}")
        sql = self._sql
        params: dict[str, Any] = {"after": after}
        if namespace is None:
            statement = sql.read_all if limit is None else sql.read_all_limit
        else:
            statement = sql.read_namespace if limit is None else sql.read_namespace_limit
            params["ns"] = namespace
        if limit is not None:
            params["limit"] = limit
        with self._transaction(write=False) as conn:
            return [StoredEvent(*row) for row in conn.exec_driver_sql(statement, params).all()]

    def _head_row(self, namespace: str) -> Row[Any] | None:
        check_name("namespace", namespace)
        with self._transaction(write=False) as conn:
            return conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"the event store {self.url} is closed")

    def _lock_namespace(self, conn: Connection, namespace: str) -> None:
        """Hold ``namespace``'s advisory lock until commit (PostgreSQL; why: ``_append_in``)."""
        if self._sql.namespace_lock is not None:
            conn.exec_driver_sql(self._sql.namespace_lock, {"ns": namespace})

    @contextmanager
    def _transaction(
        self, *, write: bool, snapshot: bool = False, durable: bool = True
    ) -> Iterator[Connection]:
        """One transaction; driver errors become ``StorageError`` (unique clashes a conflict).
        A write's commit is counted towards the next background checkpoint.

        ``durable=False`` commits without waiting for the disk: on SQLite the connection runs
        that one transaction with ``synchronous=NORMAL``, on PostgreSQL with
        ``synchronous_commit=off``. Either way the commit is ordered in the write-ahead log, so
        the next durable commit makes it durable too (see ``commit_durability``).
        """
        self._ensure_open()
        if write and self.read_only:
            raise ReadOnlyError(
                f"the event store {self.url} is open read-only: nothing was written"
            )
        queue = self._writers.turn() if write and self._writers is not None else nullcontext()
        with self._serial, queue:
            try:
                with self.engine.connect() as conn:
                    if write:
                        conn.execution_options(**{WRITE_OPTION: True})
                    if snapshot and self._postgres:
                        conn.execution_options(isolation_level="REPEATABLE READ")
                    relaxed = not durable and self._file_backed
                    if relaxed:
                        set_sqlite_synchronous(conn, "NORMAL")
                    try:
                        with conn.begin():
                            if self.read_only and self._postgres:
                                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                            if not durable and self._postgres:
                                conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                            yield conn
                    finally:
                        if relaxed:
                            set_sqlite_synchronous(conn, SQLITE_SYNCHRONOUS)
            except IntegrityError as exc:
                raise StorageConflictError(
                    f"a concurrent write clashed with this one on {self.url}: {_detail(exc)}"
                ) from exc
            except SQLAlchemyError as exc:
                raise StorageError(f"event store {self.url} failed: {_detail(exc)}") from exc
        if write and self._checkpoints is not None:
            self._checkpoints.committed()

    def _checkpoint_log(self) -> None:
        """Passive checkpoints of the whole log on a connection of the pool (not the
        writer's: it runs beside the appends), in the checkpointer's thread."""
        assert self._writers is not None
        with self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert isinstance(raw, sqlite3.Connection)
            checkpoint_whole(raw, self._writers.turn)


class _Run:
    """The statements of an append on a SQLAlchemy connection (PostgreSQL, a relaxed commit)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.head: int | None = None
        """The namespace's head once this append wrote its rows."""

    def one(self, statement: str, params: dict[str, Any]) -> Sequence[Any] | None:
        return self.conn.exec_driver_sql(statement, params).first()

    def all(self, statement: str, params: dict[str, Any]) -> Sequence[Sequence[Any]]:
        return self.conn.exec_driver_sql(statement, params).all()

    def many(self, statement: str, params: list[dict[str, Any]]) -> None:
        """A write, once per parameter set."""
        self.conn.exec_driver_sql(statement, params[0] if len(params) == 1 else params)


class _DriverRun:
    """The same on a sqlite3 cursor, counting statements as the engine's listener does."""

    def __init__(self, cursor: sqlite3.Cursor, counters: StoreCounters) -> None:
        self.cursor = cursor
        self.counters = counters
        self.head: int | None = None
        """The namespace's head once this append wrote its rows."""

    def one(self, statement: str, params: dict[str, Any]) -> Sequence[Any] | None:
        self.counters.statements += 1
        found: Sequence[Any] | None = self.cursor.execute(statement, params).fetchone()
        return found

    def all(self, statement: str, params: dict[str, Any]) -> Sequence[Sequence[Any]]:
        self.counters.statements += 1
        return self.cursor.execute(statement, params).fetchall()

    def many(self, statement: str, params: list[dict[str, Any]]) -> None:
        self.counters.statements += 1
        if len(params) == 1:
            self.cursor.execute(statement, params[0])
        else:
            self.cursor.executemany(statement, params)


def _snapshot_files(engine: Engine) -> SnapshotFiles:
    """The snapshot files beside a SQLite file, named from the file SQLite opened (a
    read-only engine's URL names none)."""
    try:
        with engine.connect() as conn:
            listed = conn.exec_driver_sql("PRAGMA database_list").all()
    except SQLAlchemyError as exc:
        raise StorageError(f"event store {engine.url} failed: {_detail(exc)}") from exc
    return SnapshotFiles(next(str(row[2]) for row in listed if row[1] == "main"))


def upsert_builder(postgres: bool) -> Callable[..., Any]:
    """The dialect's ``INSERT … ON CONFLICT`` builder. PostgreSQL's is imported only by a store
    on PostgreSQL: importing it loads all of SQLAlchemy's PostgreSQL dialects, which a SQLite
    process (every Ray host on a fresh cluster, inside the first open) would pay for nothing."""
    if postgres:
        from sqlalchemy.dialects.postgresql import insert

        return insert
    return sqlite_insert


def _check_lease(lease: Lease, row: tuple[int, bool] | None) -> None:
    """The lease's epoch must be the namespace's current one, not released (``row``)."""
    if row is None or row[0] != lease.epoch or row[1]:
        now = "no writer" if row is None or row[1] else f"epoch {row[0]}"
        raise FencedWriterError(
            f"the write lease of namespace {lease.namespace!r} moved on ({now}; this writer "
            f"held epoch {lease.epoch}): a newer writer owns it, nothing was appended"
        )


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    return (ids[start : start + _ID_CHUNK] for start in range(0, len(ids), _ID_CHUNK))


def _id_params(ids: list[str]) -> dict[str, Any]:
    return {f"id{index}": value for index, value in enumerate(ids)}


def _check_head(
    namespace: str, head: Sequence[Any] | None, last_position: int | None, last_hash: str | None
) -> None:
    """The stored head must be the namespace's last row, or the log is not extended."""
    if last_position is None and (head is None or head[0] == 0):
        return  # nothing stored, or a heads record of an emptied namespace
    if head is not None and (head[0], head[1]) == (last_position, last_hash):
        return
    if head is None:
        reason = "its heads row is missing"
        position = last_position
    elif last_position is None:
        reason = "its heads row names rows that are gone"
        position = head[0]
    else:
        reason = "its heads row does not match its last row"
        position = min(head[0], last_position)
    raise LogIntegrityError(
        f"the log of namespace {namespace!r} is damaged ({reason}, near global position "
        f"{position}); nothing was appended — run verify",
        position,
    )


_ENGINE_TURNS: weakref.WeakKeyDictionary[Engine, threading.RLock] = weakref.WeakKeyDictionary()
"""One decision lock per engine: stores sharing a database in memory share it too."""

_FORKS = [0]
"""Forks between this process and the one that started the lineage: a descriptor or connection
made under another count is a parent's (compared on every append, where ``os.getpid`` would be
a system call each time)."""


def _forked() -> None:
    _FORKS[0] += 1


os.register_at_fork(after_in_child=_forked)


class _FileQueue:
    """An ``flock`` on one file beside a SQLite database, taken again freely by the thread that
    holds it (a thread lock orders this process's own takers: ``flock`` is per open file).

    Writers queue on ``<db>.writers`` before ``BEGIN IMMEDIATE``: the kernel wakes the next one
    as soon as the lock is free, where SQLite's busy handler sleeps 1, 2, 5, 10 … 100 ms between
    its tries — which made two processes writing one file slower than one. Deciders that
    collided take turns on ``<db>.turns`` (``SqlEventStore.taking_turns``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._descriptor: int | None = None
        self._forks = -1
        self._depth = 0

    @contextmanager
    def turn(self) -> Iterator[None]:
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def enter(self) -> None:
        """Take the lock (``turn`` without a generator, for the appends' hot path)."""
        self._lock.acquire()
        try:
            if self._depth == 0:
                self._acquire()
        except BaseException:
            self._lock.release()
            raise
        self._depth += 1

    def leave(self) -> None:
        """Give back what ``enter`` took."""
        self._depth -= 1
        try:
            if self._depth == 0 and self._descriptor is not None:
                fcntl.flock(self._descriptor, fcntl.LOCK_UN)
        finally:
            self._lock.release()

    def _acquire(self) -> None:
        if self._descriptor is None or self._forks != _FORKS[0]:  # a forked child: its own
            try:
                self._descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                self._descriptor = None  # cannot make it (a read-only directory): SQLite's queue
                return
            self._forks = _FORKS[0]
        fcntl.flock(self._descriptor, fcntl.LOCK_EX)

    def close(self) -> None:
        with self._lock:
            if self._descriptor is not None and self._forks == _FORKS[0]:
                os.close(self._descriptor)
            self._descriptor = None


class _Writer:
    """A SQLite file's own writer connection, taken from the engine's pool once (so it has the
    pool's pragmas: WAL, ``synchronous=FULL``, the busy timeout) and kept out of it: durable
    appends run on it with ``BEGIN IMMEDIATE`` … ``COMMIT``, and it answers the head probes a
    handle asks before every decision. Through the pool an append paid for a checkout, a
    reset and a return around its statements, and a probe for a read of the heads table.

    Head probes use ``PRAGMA data_version``, which changes when *another* connection — of
    this process or any other — commits, never for this one's own commits. So the heads this
    connection read or wrote itself stay true while the version stands; a changed version
    drops them all and the head is read again. Never used across a fork: a child takes a
    connection of its own."""

    def __init__(self, engine: Engine, url: str) -> None:
        self._engine = engine
        self._url = url
        self.lock = threading.RLock()
        self._driver: sqlite3.Connection | None = None
        self._cursor: sqlite3.Cursor | None = None
        self._forks = -1
        self._version: int | None = None
        self._heads: dict[str, int] = {}
        self._head_sql = f"SELECT last_position FROM {schema.heads.name} WHERE namespace = ?"

    def cursor(self) -> sqlite3.Cursor:
        """The connection's one cursor (made on first use, and again in a forked child); hold
        ``lock``. Every statement on it is run to its end, so it keeps no read transaction."""
        if self._cursor is None or self._forks != _FORKS[0]:
            try:
                raw = self._engine.raw_connection()
            except SQLAlchemyError as exc:
                raise StorageError(f"event store {self._url} failed: {_detail(exc)}") from exc
            driver = raw.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            raw.detach()  # this store's own from now on: the pool neither resets nor reuses it
            self._driver, self._cursor, self._forks = driver, driver.cursor(), _FORKS[0]
            self._version, self._heads = None, {}
        return self._cursor

    def head(self, namespace: str) -> int:
        """The namespace's head: remembered while no other connection has committed."""
        with self.lock:
            try:
                cursor = self.cursor()
                # fetchall finishes each statement: one left open would keep its read
                # transaction, and every later probe would see that old snapshot
                ((version,),) = cursor.execute("PRAGMA data_version").fetchall()
                if version != self._version:
                    self._version, self._heads = version, {}
                found = self._heads.get(namespace)
                if found is None:
                    rows = cursor.execute(self._head_sql, (namespace,)).fetchall()
                    found = self._heads[namespace] = int(rows[0][0]) if rows else 0
            except sqlite3.Error as exc:
                raise StorageError(f"reading the head of {namespace!r} failed: {exc}") from exc
        return found

    def appended(self, namespace: str, head: int) -> None:
        """This connection committed ``namespace`` up to ``head`` (which moves no version)."""
        if self._version is not None:
            self._heads[namespace] = head

    def forget(self) -> None:
        """Drop the remembered heads (after a failed or refused append)."""
        self._heads = {}

    def close(self) -> None:
        with self.lock:
            if self._driver is not None and self._forks == _FORKS[0]:
                with contextlib.suppress(sqlite3.Error):
                    self._driver.close()
            self._driver = self._cursor = None


class StoreCounters:
    """How much work a store did: statements executed and appends made (for benchmarks)."""

    def __init__(self) -> None:
        self.statements = 0

    def count_statement(self, *_: Any) -> None:
        self.statements += 1


def _stream_version(conn: Connection, namespace: str, stream: str, at: int | None = None) -> int:
    column = schema.events.c
    query = select(func.max(column.stream_version)).where(
        column.namespace == namespace, column.stream == stream
    )
    if at is not None:
        query = query.where(column.global_position <= at)
    return conn.execute(query).scalar() or 0


def _stored_by_id(conn: Connection, event_ids: list[str]) -> dict[str, StoredEvent]:
    found: dict[str, StoredEvent] = {}
    for start in range(0, len(event_ids), _ID_CHUNK):
        chunk = event_ids[start : start + _ID_CHUNK]
        query = select(*_ROW).where(schema.events.c.event_id.in_(chunk))
        found.update((row.event_id, _stored(row)) for row in conn.execute(query))
    return found


@contextmanager
def _lenient_text(conn: Connection) -> Iterator[None]:
    """On SQLite, let text that is not UTF-8 (written behind the store's back) reach the chain
    check as undecodable characters instead of failing the whole read."""
    raw = conn.connection.dbapi_connection
    if conn.dialect.name != "sqlite" or raw is None:
        yield
        return
    saved = raw.text_factory
    raw.text_factory = lambda data: data.decode("utf-8", "surrogateescape")
    try:
        yield
    finally:
        raw.text_factory = saved


def _walk(conn: Connection, namespace: str) -> Iterator[StoredEvent]:
    """Every row of ``namespace`` in position order, fetched a page at a time."""
    after = 0
    while True:
        page = conn.execute(
            select(*_ROW)
            .where(schema.events.c.namespace == namespace, schema.events.c.global_position > after)
            .order_by(schema.events.c.global_position)
            .limit(_PAGE)
        ).all()
        yield from (_stored(row) for row in page)
        if len(page) < _PAGE:
            return
        after = page[-1].global_position


def _head_fault(
    conn: Connection, namespace: str, walk: ChainCheck, head: Row[Any] | None
) -> LogFault | None:
    """Where the heads record and a verified walk of the rows part, if they do."""
    if head is None:
        if not walk.count:
            return None
        return LogFault(walk.last_position, "the namespace's heads record is missing")
    if (head.last_position, head.last_hash, head.event_count) == (
        walk.last_position,
        walk.last_hash,
        walk.count,
    ):
        return None
    column = schema.events.c
    if walk.last_position > head.last_position:
        first_extra = conn.execute(
            select(func.min(column.global_position)).where(
                column.namespace == namespace, column.global_position > head.last_position
            )
        ).scalar()
        return LogFault(
            int(first_extra or 0), "rows follow the position the heads record names (rows added)"
        )
    if walk.last_position < head.last_position:
        taken = set(
            conn.execute(
                select(column.global_position).where(
                    column.namespace != namespace,
                    column.global_position > walk.last_position,
                    column.global_position <= head.last_position,
                )
            ).scalars()
        )
        missing = next(
            (p for p in range(walk.last_position + 1, head.last_position + 1) if p not in taken),
            head.last_position,
        )
        return LogFault(
            missing, f"the heads record ends at {head.last_position} (rows at the end are gone)"
        )
    return LogFault(walk.last_position, "the heads record does not match the last row")


def _check_empty(conn: Connection, namespace: str) -> None:
    """An import writes only into a namespace that holds no row, heads record or data key."""
    for table in (schema.events, schema.heads, schema.keys):
        found = conn.execute(
            select(table.c.namespace).where(table.c.namespace == namespace).limit(1)
        ).first()
        if found is not None:
            raise StorageConflictError(
                f"namespace {namespace!r} already holds a log or keys in this database: import "
                "into another namespace or database (nothing was imported)"
            )


def _check_new_ids(conn: Connection, page: Sequence[StoredEvent]) -> None:
    stored = _stored_by_id(conn, [row.event_id for row in page])
    if stored:
        clash = next(iter(stored.values()))
        raise StorageConflictError(
            f"event id {clash.event_id!r} is stored already (namespace {clash.namespace!r}): this "
            "log is in this database already (event ids are unique across its namespaces): "
            "import it into another database; nothing was imported"
        )


def _kept_positions(page: Sequence[StoredEvent], above: int) -> list[int]:
    """The rows' own positions, which must rise above every position handed out so far."""
    positions = [row.global_position for row in page]
    if positions[0] <= above or any(a >= b for a, b in itertools.pairwise(positions)):
        raise StorageConflictError(
            f"the log's positions from {positions[0]} are not all above the database's highest "
            f"position {above}: they cannot be kept (nothing was imported)"
        )
    return positions


def _key_columns(namespace: str, key: DataKey) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "key_id": key.key_id,
        "material": key.material,
        "wrapped": key.wrapped,
        "created_at": key.created_at,
        "destroyed_at": key.destroyed_at,
    }


_EVENT_COLUMNS = tuple(column.name for column in schema.events.columns)
"""The event table's column names, taken once (walking the table's columns per row cost more
than the row's insert)."""


def _columns(row: StoredEvent) -> dict[str, Any]:
    return {name: getattr(row, name) for name in _EVENT_COLUMNS}


def _stored(row: Row[Any]) -> StoredEvent:
    return StoredEvent(*row)  # type: ignore[call-arg]  # the columns of _ROW, in field order


def _detail(exc: SQLAlchemyError) -> str:
    return str(getattr(exc, "orig", None) or exc).strip()


__all__ = ["SqlEventStore", "open_event_store"]
