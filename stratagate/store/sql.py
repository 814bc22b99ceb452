"""The durable event store on SQLAlchemy 2 Core: a SQLite file, in-memory SQLite or PostgreSQL.

``open_event_store(database)`` picks the backend from its argument; ``SqlEventStore`` implements
the ``EventStore`` protocol of ``stratagate.store.records`` over the tables of
``stratagate.store.schema`` and the hash chain of ``stratagate.store.chain``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, Row, create_engine, event, func, select, text
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from stratagate.core.timeutil import format_utc, utc_now
from stratagate.errors import InvalidInputError, StorageConflictError, StorageError
from stratagate.store import schema
from stratagate.store.chain import ChainCheck, check_chain, seal_batch
from stratagate.store.records import GENESIS_HASH, NewEvent, Snapshot, StoredEvent

SQLITE_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite writer waits for another process's write lock before failing."""

SQLITE_SYNCHRONOUS = "FULL"
"""WAL + ``synchronous=FULL``: the WAL is fsynced at every commit, so a committed append
survives a process crash *and* a power loss or OS crash. (``NORMAL`` would survive a process
crash but could lose the last commits on power loss; the log is the only source of truth, so
we pay the fsync.)"""

POSTGRES_CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a PostgreSQL server before ``open_event_store`` gives up."""

_ROW = [schema.events.c[name] for name in StoredEvent.__dataclass_fields__]  # in field order
_PAGE = 1000  # rows per query when walking a whole namespace
_ID_CHUNK = 500  # event ids per ``IN (...)`` lookup, well under every bind-parameter limit
_WRITE = "stratagate_write"  # execution option: this transaction will write
_MEMORY_NAMES = {"", ":memory:"}


def open_event_store(
    database: str | os.PathLike[str],
    *,
    create: bool = True,
    clock: Callable[[], datetime] = utc_now,
) -> SqlEventStore:
    """Open (and with ``create`` set up) the event store named by ``database``.

    A filesystem path or ``sqlite:///path`` is a SQLite file (WAL); ``":memory:"`` is a private
    in-memory SQLite on one shared connection; ``postgresql://`` and ``postgres://`` URLs use
    psycopg 3. ``clock`` stamps ``recorded_at``. Bad URLs and unreachable servers raise
    ``StorageError`` with the cause chained; a newer table layout raises ``SchemaVersionError``.
    """
    engine = _engine_for(database, create=create)
    try:
        return SqlEventStore(engine, create=create, clock=clock)
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
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.engine = engine
        self.url = engine.url.render_as_string(hide_password=True)
        self._clock = clock
        self._postgres = engine.dialect.name == "postgresql"
        # One shared in-memory connection must not carry two threads' transactions at once.
        self._serial: AbstractContextManager[Any] = (
            threading.RLock() if isinstance(engine.pool, StaticPool) else nullcontext()
        )
        self._closed = False
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
    ) -> list[StoredEvent]:
        """Append all of ``events`` to ``stream`` of ``namespace`` or none of them.

        ``expected_version`` is the stream's current version as the writer knows it (0 when
        empty; ``None`` skips the check). A batch whose ids are all stored with identical
        content returns the stored rows, in batch order, whatever ``expected_version`` says;
        a partly stored or differing batch raises ``StorageConflictError``.
        """
        _check_name("namespace", namespace)
        _check_name("stream", stream)
        if expected_version is not None and not _is_count(expected_version):
            raise InvalidInputError(
                f"expected_version must be an int >= 0 or None, not {expected_version!r}"
            )
        batch = _check_batch(events)
        self._ensure_open()
        if not batch:
            return []
        with self._transaction(write=True) as conn:
            if self._postgres:
                # WHY: a catch-up reader tails ``global_position > N`` and must never skip a
                # row, which holds only if rows become visible in position order: were position
                # 8 committed while 7 is still in flight, a reader would see 8, move its cursor
                # past 7 and never read it. So positions are assigned as max + 1 *under this
                # lock*, taken before the maximum is read: EXCLUSIVE conflicts with every other
                # writer's EXCLUSIVE (plain SELECTs are not blocked), so the next writer cannot
                # read the maximum until this transaction has committed or rolled back, and
                # commit order equals position order. The lock also makes the expected-version
                # check and the heads update race-free: without it two writers would pick the
                # same position and one would fail although its expected version was right.
                # SQLite gets the same serialisation from BEGIN IMMEDIATE.
                conn.execute(text(f"LOCK TABLE {schema.events.name} IN EXCLUSIVE MODE"))
            stored = _stored_by_id(conn, [new.event_id for new in batch])
            if stored:
                return _replayed(namespace, stream, batch, stored)
            current = _stream_version(conn, namespace, stream)
            if expected_version is not None and expected_version != current:
                raise StorageConflictError(
                    f"stream {stream!r} of namespace {namespace!r} is at version {current}, "
                    f"but the writer expected version {expected_version}"
                )
            head = conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()
            last = conn.execute(select(func.max(schema.events.c.global_position))).scalar()
            rows = seal_batch(
                batch,
                namespace=namespace,
                stream=stream,
                first_position=(last or 0) + 1,
                first_version=current + 1,
                recorded_at=format_utc(self._clock()),
                prev_hash=head.last_hash if head else GENESIS_HASH,
            )
            conn.execute(schema.events.insert(), [_columns(row) for row in rows])
            _advance_head(conn, rows, previous_count=head.event_count if head else None)
        return rows

    def read(self, namespace: str, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of ``namespace`` with ``global_position > after``, in position order."""
        _check_name("namespace", namespace)
        return self._read_after(after, limit, schema.events.c.namespace == namespace)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Rows of every namespace with ``global_position > after``: the catch-up feed."""
        return self._read_after(after, limit)

    def stream_version(self, namespace: str, stream: str) -> int:
        """Number of events in the stream (0 when empty)."""
        _check_name("namespace", namespace)
        _check_name("stream", stream)
        with self._transaction(write=False) as conn:
            return _stream_version(conn, namespace, stream)

    def head(self, namespace: str) -> int:
        """The ``global_position`` of the namespace's last row (0 when empty)."""
        row = self._head_row(namespace)
        return row.last_position if row else 0

    def count(self, namespace: str) -> int:
        """How many rows the namespace has."""
        row = self._head_row(namespace)
        return row.event_count if row else 0

    def global_head(self) -> int:
        """The ``global_position`` of the last row of any namespace (0 when the log is empty)."""
        with self._transaction(write=False) as conn:
            return conn.execute(select(func.max(schema.events.c.global_position))).scalar() or 0

    def namespaces(self) -> list[str]:
        """Every namespace with at least one row, sorted (by Python, not the DB's collation)."""
        with self._transaction(write=False) as conn:
            return sorted(conn.execute(select(schema.heads.c.namespace)).scalars())

    def verify_chain(self, namespace: str) -> int | None:
        """The ``global_position`` of the first row whose hash does not verify, or ``None``.

        Rows are checked in position order (see ``stratagate.store.chain``). When every row
        verifies but the namespace's heads record disagrees with them (say, its tail was
        deleted), the larger of the recorded and the found last position is returned.
        """
        _check_name("namespace", namespace)
        with self._transaction(write=False, snapshot=True) as conn:
            walk = check_chain(_walk(conn, namespace))
            head = conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()
        if walk.first_bad_position is not None:
            return walk.first_bad_position
        return _head_mismatch(walk, head)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store (replace) the snapshot of ``(namespace, key)``."""
        _check_snapshot(snapshot)
        values = {
            "namespace": snapshot.namespace,
            "key": snapshot.key,
            "position": snapshot.position,
            "digest": snapshot.digest,
            "model_version": snapshot.model_version,
            "payload": bytes(snapshot.payload),
            "created_at": snapshot.created_at,
        }
        insert = postgres_insert if self._postgres else sqlite_insert
        statement = insert(schema.snapshots).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=[schema.snapshots.c.namespace, schema.snapshots.c.key],
            set_={
                name: statement.excluded[name]
                for name in values
                if name not in ("namespace", "key")
            },
        )
        with self._transaction(write=True) as conn:
            conn.execute(statement)

    def load_snapshot(self, namespace: str, key: str) -> Snapshot | None:
        """The stored snapshot of ``(namespace, key)``, or ``None``."""
        _check_name("namespace", namespace)
        _check_name("key", key)
        with self._transaction(write=False) as conn:
            row = conn.execute(
                select(schema.snapshots).where(
                    schema.snapshots.c.namespace == namespace, schema.snapshots.c.key == key
                )
            ).one_or_none()
        if row is None:
            return None
        return Snapshot(
            namespace=row.namespace,
            key=row.key,
            position=row.position,
            digest=row.digest,
            model_version=row.model_version,
            payload=bytes(row.payload),
            created_at=row.created_at,
        )

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        self._closed = True
        self.engine.dispose()

    def _read_after(self, after: int, limit: int | None, *where: Any) -> list[StoredEvent]:
        if not _is_count(after):
            raise InvalidInputError(f"after must be an int >= 0, not {after!r}")
        if limit is not None and not _is_count(limit):
            raise InvalidInputError(f"limit must be an int >= 0 or None, not {limit!r}")
        query = (
            select(*_ROW)
            .where(schema.events.c.global_position > after, *where)
            .order_by(schema.events.c.global_position)
        )
        if limit is not None:
            query = query.limit(limit)
        with self._transaction(write=False) as conn:
            return [_stored(row) for row in conn.execute(query).all()]

    def _head_row(self, namespace: str) -> Row[Any] | None:
        _check_name("namespace", namespace)
        with self._transaction(write=False) as conn:
            return conn.execute(
                select(schema.heads).where(schema.heads.c.namespace == namespace)
            ).one_or_none()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"the event store {self.url} is closed")

    @contextmanager
    def _transaction(self, *, write: bool, snapshot: bool = False) -> Iterator[Connection]:
        """One transaction; driver errors become ``StorageError`` (unique clashes a conflict)."""
        self._ensure_open()
        with self._serial:
            try:
                with self.engine.connect() as conn:
                    if write:
                        conn.execution_options(**{_WRITE: True})
                    if snapshot and self._postgres:
                        conn.execution_options(isolation_level="REPEATABLE READ")
                    with conn.begin():
                        yield conn
            except IntegrityError as exc:
                raise StorageConflictError(
                    f"a concurrent write clashed with this one on {self.url}: {_detail(exc)}"
                ) from exc
            except SQLAlchemyError as exc:
                raise StorageError(f"event store {self.url} failed: {_detail(exc)}") from exc


def _engine_for(database: str | os.PathLike[str], *, create: bool) -> Engine:
    """Build the engine ``database`` names: a name that is no text raises ``InvalidInputError``,
    one no backend can use ``StorageError``."""
    if not isinstance(database, str | os.PathLike):
        raise InvalidInputError(
            f"database must be a file path or a URL, not {type(database).__name__}"
        )
    name = os.fsdecode(database)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:  # undecodable bytes of a file name: SQLite cannot open it
        raise InvalidInputError(f"database {name!r} is not valid UTF-8") from exc
    if name == ":memory:":
        return _sqlite_memory_engine()
    if "://" not in name:
        return _sqlite_file_engine(Path(name), create=create)
    try:
        url = make_url(name)
    except ArgumentError as exc:
        raise StorageError(f"not a database URL: {name!r}") from exc
    backend, _, driver = url.drivername.partition("+")
    if backend in ("postgresql", "postgres") and driver in ("", "psycopg"):
        return _postgres_engine(url.set(drivername="postgresql+psycopg"))
    if backend == "sqlite" and driver in ("", "pysqlite"):
        if (url.database or "") in _MEMORY_NAMES:
            return _sqlite_memory_engine()
        return _sqlite_file_engine(Path(url.database or ""), create=create)
    raise StorageError(
        f"unsupported database {url.drivername!r}: use a SQLite path, sqlite:///…, "
        "postgresql://… or postgresql+psycopg://…"
    )


def _sqlite_memory_engine() -> Engine:
    engine = create_engine(
        "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    _install_sqlite_hooks(engine, file_backed=False)
    return engine


def _sqlite_file_engine(path: Path, *, create: bool) -> Engine:
    if not str(path):
        raise StorageError("a SQLite database needs a file path")
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a parent is a file, or cannot be made (/proc, permissions)
            raise StorageError(
                f"cannot make the directory of the database {path}: {exc.strerror or exc}"
            ) from exc
    elif not path.is_file():
        raise StorageError(f"no event store at {path} (create=False)")
    engine = create_engine(URL.create("sqlite", database=str(path)))
    _install_sqlite_hooks(engine, file_backed=True)
    return engine


def _install_sqlite_hooks(engine: Engine, *, file_backed: bool) -> None:
    """SQLAlchemy, not the sqlite3 module, emits BEGIN: IMMEDIATE for writers, DEFERRED else.

    A writer that began DEFERRED would take the write lock only at its first write and could
    fail with SQLITE_BUSY at once (no waiting) when another process wrote in between; taking
    the lock at BEGIN makes concurrent writers queue on the busy timeout instead.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook below own BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        if file_backed:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute(f"PRAGMA synchronous = {SQLITE_SYNCHRONOUS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        writes = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN DEFERRED")


def _postgres_engine(url: URL) -> Engine:
    try:
        return create_engine(
            url,
            isolation_level="READ COMMITTED",
            pool_pre_ping=True,
            connect_args={"connect_timeout": POSTGRES_CONNECT_TIMEOUT_S},
        )
    except ImportError as exc:
        raise StorageError(
            "PostgreSQL needs psycopg 3, which is not installed: pip install 'stratagate[postgres]'"
        ) from exc
    except ArgumentError as exc:
        raise StorageError(f"cannot use PostgreSQL URL {url!r}: {exc}") from exc


def _stream_version(conn: Connection, namespace: str, stream: str) -> int:
    column = schema.events.c
    query = select(func.max(column.stream_version)).where(
        column.namespace == namespace, column.stream == stream
    )
    return conn.execute(query).scalar() or 0


def _stored_by_id(conn: Connection, event_ids: list[str]) -> dict[str, StoredEvent]:
    found: dict[str, StoredEvent] = {}
    for start in range(0, len(event_ids), _ID_CHUNK):
        chunk = event_ids[start : start + _ID_CHUNK]
        query = select(*_ROW).where(schema.events.c.event_id.in_(chunk))
        found.update((row.event_id, _stored(row)) for row in conn.execute(query))
    return found


def _replayed(
    namespace: str, stream: str, batch: list[NewEvent], stored: dict[str, StoredEvent]
) -> list[StoredEvent]:
    """The stored rows of a retried batch, or ``StorageConflictError`` if it is not a retry."""
    if len(stored) != len(batch):
        raise StorageConflictError(
            f"{len(stored)} of the {len(batch)} event ids of this batch are already stored; "
            "a retry must resend exactly a stored batch"
        )
    for new in batch:
        old = stored[new.event_id]
        if (old.namespace, old.stream, old.event_type, old.schema_version, old.payload) != (
            namespace,
            stream,
            new.event_type,
            new.schema_version,
            new.payload,
        ):
            raise StorageConflictError(
                f"event id {new.event_id!r} is already stored with different content "
                f"(namespace {old.namespace!r}, stream {old.stream!r}, type {old.event_type!r})"
            )
    return [stored[new.event_id] for new in batch]


def _advance_head(conn: Connection, rows: list[StoredEvent], previous_count: int | None) -> None:
    last = rows[-1]
    values = {"last_position": last.global_position, "last_hash": last.hash}
    if previous_count is None:
        conn.execute(
            schema.heads.insert().values(namespace=last.namespace, event_count=len(rows), **values)
        )
        return
    conn.execute(
        schema.heads.update()
        .where(schema.heads.c.namespace == last.namespace)
        .values(event_count=previous_count + len(rows), **values)
    )


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


def _head_mismatch(walk: ChainCheck, head: Row[Any] | None) -> int | None:
    if head is None:
        return walk.last_position or None
    if (head.last_position, head.last_hash, head.event_count) == (
        walk.last_position,
        walk.last_hash,
        walk.count,
    ):
        return None
    return max(head.last_position, walk.last_position)


def _columns(row: StoredEvent) -> dict[str, Any]:
    return {column.name: getattr(row, column.name) for column in schema.events.columns}


def _stored(row: Row[Any]) -> StoredEvent:
    return StoredEvent(*row)  # type: ignore[call-arg]  # the columns of _ROW, in field order


def _detail(exc: SQLAlchemyError) -> str:
    return str(getattr(exc, "orig", None) or exc).strip()


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_name(what: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, not {value!r}")
    _check_storable(what, value)


def _check_storable(what: str, value: str) -> None:
    if "\x00" in value:
        raise InvalidInputError(f"{what} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode text: {exc.reason}") from exc


def _check_batch(events: Sequence[NewEvent]) -> list[NewEvent]:
    if isinstance(events, str | bytes) or not isinstance(events, Sequence):
        raise InvalidInputError("events must be a sequence of NewEvent")
    batch = list(events)
    seen: set[str] = set()
    for new in batch:
        if not isinstance(new, NewEvent):
            raise InvalidInputError(f"events must be NewEvent instances, not {type(new).__name__}")
        _check_name("event_id", new.event_id)
        _check_name("event_type", new.event_type)
        if not _is_count(new.schema_version) or new.schema_version < 1:
            raise InvalidInputError(
                f"schema_version of {new.event_id!r} must be an int >= 1, "
                f"not {new.schema_version!r}"
            )
        if not isinstance(new.payload, str):
            raise InvalidInputError(f"payload of {new.event_id!r} must be JSON text")
        try:
            orjson.loads(new.payload)
        except orjson.JSONDecodeError as exc:
            raise InvalidInputError(
                f"payload of {new.event_id!r} is not valid JSON: {exc}"
            ) from exc
        if new.event_id in seen:
            raise InvalidInputError(f"event id {new.event_id!r} appears twice in one batch")
        seen.add(new.event_id)
    return batch


def _check_snapshot(snapshot: Snapshot) -> None:
    if not isinstance(snapshot, Snapshot):
        raise InvalidInputError(f"expected a Snapshot, not {type(snapshot).__name__}")
    _check_name("namespace", snapshot.namespace)
    _check_name("key", snapshot.key)
    if not _is_count(snapshot.position) or not _is_count(snapshot.model_version):
        raise InvalidInputError("snapshot position and model_version must be ints >= 0")
    if not isinstance(snapshot.digest, str) or not isinstance(snapshot.created_at, str):
        raise InvalidInputError("snapshot digest and created_at must be strings")
    _check_storable("snapshot digest", snapshot.digest)
    _check_storable("snapshot created_at", snapshot.created_at)
    if not isinstance(snapshot.payload, bytes | bytearray | memoryview):
        raise InvalidInputError("snapshot payload must be bytes")


__all__ = ["SQLITE_BUSY_TIMEOUT_S", "SQLITE_SYNCHRONOUS", "SqlEventStore", "open_event_store"]
