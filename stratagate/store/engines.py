"""SQLAlchemy engines for the event store: a SQLite file (WAL, private, busy-waiting writers),
a read-only or immutable SQLite file for audits, a private in-memory SQLite, or PostgreSQL
through psycopg 3.

``engine_for(database)`` picks the backend from its argument; ``stratagate.store.sql`` builds
the store on the engine. Everything here is connection setup: no table is read or written.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from stratagate.errors import InvalidInputError, StorageError

SQLITE_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite writer waits for another process's write lock before failing."""

SQLITE_SYNCHRONOUS = "FULL"
"""WAL + ``synchronous=FULL``: the WAL is fsynced at every commit, so a committed append
survives a process crash *and* a power loss or OS crash. (``NORMAL`` would survive a process
crash but could lose the last commits on power loss; the log is the only source of truth, so
we pay the fsync.)"""

POSTGRES_CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a PostgreSQL server before ``open_event_store`` gives up."""

WRITE_OPTION = "stratagate_write"
"""Execution option of a connection whose transaction will write (SQLite begins it IMMEDIATE)."""
_MEMORY_NAMES = {"", ":memory:"}


def engine_for(
    database: str | os.PathLike[str], *, create: bool, read_only: bool = False
) -> Engine:
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
        return _sqlite_file_engine(Path(name), create=create, read_only=read_only)
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
        return _sqlite_file_engine(Path(url.database or ""), create=create, read_only=read_only)
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


def make_private_dirs(directory: Path) -> None:
    """Make ``directory`` and its missing parents 0700 whatever the umask (``mkdir(parents=)``
    gives the parents the umask's mode: 0777 under umask 000); existing ones are left as
    they are."""
    missing: list[Path] = []
    current = directory
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for part in reversed(missing):
        try:
            part.mkdir(mode=0o700)
        except FileExistsError:
            continue  # made meanwhile by another process
        os.chmod(part, 0o700)  # the umask was applied to mkdir's mode: undo it


def _sqlite_file_engine(path: Path, *, create: bool, read_only: bool = False) -> Engine:
    if not str(path):
        raise StorageError("a SQLite database needs a file path")
    if create:
        try:
            make_private_dirs(path.parent)
        except OSError as exc:  # a parent is a file, or cannot be made (/proc, permissions)
            raise StorageError(
                f"cannot make the directory of the database {path}: {exc.strerror or exc}"
            ) from exc
        _create_private(path)
    elif not path.is_file():
        raise StorageError(f"no event store at {path} (create=False)")
    if read_only:
        return _sqlite_read_only_engine(path)
    engine = create_engine(URL.create("sqlite", database=str(path)))
    _install_sqlite_hooks(engine, file_backed=True)
    return engine


def _create_private(path: Path) -> None:
    """Create a new database file readable by its owner alone (0600, whatever the umask);
    SQLite gives its ``-wal`` and ``-shm`` files the same mode. An existing file is left as
    it is."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise StorageError(f"cannot create the database {path}: {exc.strerror or exc}") from exc
    os.close(descriptor)


def _sqlite_read_only_engine(path: Path) -> Engine:
    """A SQLite file opened ``mode=ro``: no write lock, no journal change, no file created.

    A WAL database needs its ``-shm`` file to be read. A file with no pending ``-wal`` (none, or empty) that is
    itself read-only (mode 0444) or sits in a read-only directory (say a mounted backup) cannot
    be being written, so it is opened ``immutable``: SQLite then creates no ``-shm`` beside it.
    """
    resolved = path.resolve()
    if not resolved.is_file():
        raise StorageError(f"no event store at {path} (read-only)")
    frozen = not resolved.stat().st_mode & 0o222 or not os.access(resolved.parent, os.W_OK)
    wal = Path(f"{resolved}-wal")
    pending = wal.exists() and wal.stat().st_size > 0
    query = "immutable=1" if frozen and not pending else "mode=ro"
    uri = f"file:{quote(str(resolved))}?{query}"
    engine = create_engine(
        "sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
    )
    _install_sqlite_hooks(engine, file_backed=False)
    return engine


def _enter_wal(cursor: sqlite3.Cursor) -> None:
    """Put the file in WAL mode. Switching a new file takes an exclusive lock, and SQLite
    answers SQLITE_BUSY at once, without its busy handler, to a connection that asks while
    another one (a thread or process opening the same new file) is switching it: retry until
    the busy timeout."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


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
        cursor.execute("PRAGMA secure_delete = ON")  # erased keys and snapshots are overwritten
        if file_backed:
            _enter_wal(cursor)
            cursor.execute(f"PRAGMA synchronous = {SQLITE_SYNCHRONOUS}")
            # no checkpoint inside a commit: the store checkpoints beside its writers
            # (``stratagate.store.checkpoints``)
            cursor.execute("PRAGMA wal_autocheckpoint = 0")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        writes = conn.get_execution_options().get(WRITE_OPTION, False)
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


def set_sqlite_synchronous(conn: Connection, level: str) -> None:
    """Set a SQLite connection's ``synchronous`` level outside any transaction."""
    raw = conn.connection.dbapi_connection
    assert raw is not None
    raw.execute(f"PRAGMA synchronous = {level}")


def is_shared_memory(engine: Engine) -> bool:
    """Whether ``engine`` is one in-memory SQLite connection shared by every caller."""
    return isinstance(engine.pool, StaticPool)


__all__ = [
    "POSTGRES_CONNECT_TIMEOUT_S",
    "SQLITE_BUSY_TIMEOUT_S",
    "SQLITE_SYNCHRONOUS",
    "WRITE_OPTION",
    "engine_for",
    "is_shared_memory",
    "set_sqlite_synchronous",
]
