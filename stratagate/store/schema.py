"""The tables of the event store and the layout version that guards them.

``stratagate_events`` is the log (its columns are the public "Log schema" of docs/API.md).
``stratagate_heads`` holds one row per namespace — last position, last hash, row count —
written in the same transaction as every append, so ``head``/``count``/``namespaces`` and the
next ``prev_hash`` cost one key lookup however long the log is. ``stratagate_leases`` holds the
writer lease of each namespace (epoch and holder, see ``stratagate.store.leases``).
``stratagate_snapshots`` holds disposable read-model checkpoints (on a SQLite file a row names its
payload's file, ``stratagate.store.snapshot_files``). ``stratagate_keys`` holds the
data keys of encrypted content (crypto-shredding) and ``stratagate_purges`` one audit record per
physically purged namespace. ``stratagate_meta`` holds
``layout_version``. On PostgreSQL the sequence ``stratagate_global_position_seq`` hands out
global positions, so writers of different namespaces need not wait for each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    inspect,
    select,
    text,
)

from stratagate.errors import SchemaVersionError, StorageError

LAYOUT_VERSION = 2
"""The table layout this code writes. Bump it and add an entry to ``UPGRADES`` to change it.
2: writer leases, a sequence for global positions on PostgreSQL, data keys and purge records."""

Upgrade = Callable[[Connection], None]
"""One layout step: ``UPGRADES[v]`` turns layout ``v`` into ``v + 1`` in the open transaction."""

POSITION_SEQUENCE = "stratagate_global_position_seq"

_POSITION = BigInteger().with_variant(Integer, "sqlite")  # INTEGER PRIMARY KEY is the rowid

metadata = MetaData()

events = Table(
    "stratagate_events",
    metadata,
    Column("global_position", _POSITION, primary_key=True, autoincrement=False),
    Column("namespace", String, nullable=False),
    Column("stream", String, nullable=False),
    Column("stream_version", Integer, nullable=False),
    Column("event_id", String, nullable=False),
    Column("event_type", String, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("recorded_at", String(32), nullable=False),
    Column("payload", Text, nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    UniqueConstraint("namespace", "stream", "stream_version", name="uq_stratagate_events_stream"),
    UniqueConstraint("event_id", name="uq_stratagate_events_event_id"),
    Index("ix_stratagate_events_namespace_position", "namespace", "global_position"),
)

heads = Table(
    "stratagate_heads",
    metadata,
    Column("namespace", String, primary_key=True),
    Column("last_position", BigInteger, nullable=False),
    Column("last_hash", String(64), nullable=False),
    Column("event_count", BigInteger, nullable=False),
)

leases = Table(
    "stratagate_leases",
    metadata,
    Column("namespace", String, primary_key=True),
    Column("epoch", BigInteger, nullable=False),
    Column("host", String, nullable=False),
    Column("pid", BigInteger, nullable=False),
    Column("started", BigInteger, nullable=False),
    Column("label", String, nullable=False),
    Column("renewed_at", Float, nullable=False),
    Column("ttl_s", Float, nullable=False),
    Column("released", Boolean, nullable=False),
)

snapshots = Table(
    "stratagate_snapshots",
    metadata,
    Column("namespace", String, primary_key=True),
    Column("key", String, primary_key=True),
    Column("position", BigInteger, nullable=False),
    Column("digest", String, nullable=False),
    Column("model_version", Integer, nullable=False),
    Column("payload", LargeBinary, nullable=False),
    Column("created_at", String(32), nullable=False),
)

keys = Table(
    "stratagate_keys",
    metadata,
    Column("namespace", String, primary_key=True),
    Column("key_id", String, primary_key=True),
    Column("material", LargeBinary, nullable=True),
    Column("wrapped", String, nullable=True),
    Column("created_at", String(32), nullable=False),
    Column("destroyed_at", String(32), nullable=True),
)
"""Data keys (crypto-shredding): never in the chained rows, never in snapshots."""

purges = Table(
    "stratagate_purges",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("namespace", String, nullable=False),
    Column("purged_at", String(32), nullable=False),
    Column("rows", BigInteger, nullable=False),
    Column("last_hash", String(64), nullable=False),
    Column("reason", Text, nullable=False),
)
"""One audit record per physically purged namespace."""

meta = Table(
    "stratagate_meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)


def _upgrade_1_to_2(conn: Connection) -> None:
    """Layout 2: the leases, keys and purges tables; on PostgreSQL, the position sequence."""
    leases.create(conn, checkfirst=True)
    keys.create(conn, checkfirst=True)
    purges.create(conn, checkfirst=True)
    _create_position_sequence(conn)


def _create_position_sequence(conn: Connection) -> None:
    if conn.dialect.name != "postgresql":
        return
    last = conn.execute(select(func.max(events.c.global_position))).scalar() or 0
    conn.execute(text(f"CREATE SEQUENCE IF NOT EXISTS {POSITION_SEQUENCE} START WITH {last + 1}"))


UPGRADES: Mapping[int, Upgrade] = {1: _upgrade_1_to_2}
"""Layout steps by the version they start from."""


def ensure_layout(
    conn: Connection,
    *,
    create: bool,
    target: int = LAYOUT_VERSION,
    upgrades: Mapping[int, Upgrade] = UPGRADES,
) -> int:
    """Create, check or upgrade the layout inside the caller's write transaction.

    Returns the layout version found before any change (0 for a fresh database). A newer
    layout raises ``SchemaVersionError`` before anything is touched; an older one is upgraded
    step by step and the new version recorded, all in the caller's single transaction.
    """
    if not inspect(conn).has_table(meta.name):
        if not create:
            raise StorageError("no stratagate event store here (stratagate_meta is missing)")
        metadata.create_all(conn)
        _create_position_sequence(conn)
        conn.execute(meta.insert().values(key="layout_version", value=str(target)))
        return 0
    found = _layout_version(conn)
    if found > target:
        raise SchemaVersionError(
            f"the database has event-store layout {found}, newer than layout {target} of this "
            "stratagate version; upgrade stratagate to open it"
        )
    for version in range(found, target):
        if version not in upgrades:
            raise StorageError(f"no upgrade from event-store layout {version} to {version + 1}")
        upgrades[version](conn)
    if found < target:
        conn.execute(meta.update().where(meta.c.key == "layout_version").values(value=str(target)))
    elif found == LAYOUT_VERSION == 2:
        # layout 2 was not released before its keys and purges tables joined it: a database
        # made at layout 2 by earlier development code gets them here
        keys.create(conn, checkfirst=True)
        purges.create(conn, checkfirst=True)
    return found


def _layout_version(conn: Connection) -> int:
    value = conn.execute(select(meta.c.value).where(meta.c.key == "layout_version")).scalar()
    if value is None or not value.isdigit():
        raise StorageError(f"stratagate_meta holds no valid layout_version (found {value!r})")
    return int(value)


__all__ = [
    "LAYOUT_VERSION",
    "POSITION_SEQUENCE",
    "UPGRADES",
    "Upgrade",
    "ensure_layout",
    "events",
    "heads",
    "keys",
    "leases",
    "meta",
    "metadata",
    "purges",
    "snapshots",
]
