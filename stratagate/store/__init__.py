"""The durable event store: one table of hash-chained rows, behind a small protocol.

``records`` is the contract (rows in, rows out, and one protocol per capability: ``EventLog``,
``LeaseStore``, ``SnapshotStore``, ``KeyStore``, ``PurgeStore``; ``EventStore`` is all of
them), ``keys`` the data keys of encrypted content, ``engines`` the connections, ``chain`` the
per-namespace hash chain, ``leases`` the writer leases and their epochs, ``schema`` the tables,
``statements`` the hot-path SQL, ``sql`` the SQLAlchemy implementation for SQLite and
PostgreSQL, ``in_process`` the plain-Python implementation for ephemeral memories. Nothing here
knows a domain event type.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from stratagate.store.leases import Holder, Lease
from stratagate.store.records import (
    GENESIS_HASH,
    DataKey,
    EncodedEvent,
    EventLog,
    EventStore,
    Fence,
    KeyStore,
    LeaseStore,
    NewEvent,
    PurgeRecord,
    PurgeStore,
    Snapshot,
    SnapshotStore,
    StoredEvent,
)

if TYPE_CHECKING:
    from stratagate.store.sql import SqlEventStore


def open_store(database: str | os.PathLike[str]) -> EventStore:
    """The store ``database`` names: ``memory://`` is a plain-Python store of this process,
    anything else a SQL store (``stratagate.store.sql.open_event_store``)."""
    if isinstance(database, str) and database == "memory://":
        from stratagate.store.in_process import InProcessEventStore

        return InProcessEventStore()
    return open_sql_store(database)


def open_sql_store(
    database: str | os.PathLike[str], *, create: bool = True, read_only: bool = False
) -> SqlEventStore:
    """``stratagate.store.sql.open_event_store``, imported on first use: SQLAlchemy adds about
    26 MiB to a process, which a memory keeping its log in this process (``memory://``) never
    needs."""
    from stratagate.store.sql import open_event_store

    return open_event_store(database, create=create, read_only=read_only)


__all__ = [
    "GENESIS_HASH",
    "DataKey",
    "EncodedEvent",
    "EventLog",
    "EventStore",
    "Fence",
    "Holder",
    "KeyStore",
    "Lease",
    "LeaseStore",
    "NewEvent",
    "PurgeRecord",
    "PurgeStore",
    "Snapshot",
    "SnapshotStore",
    "StoredEvent",
    "open_sql_store",
    "open_store",
]
