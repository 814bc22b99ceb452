"""The durable event store: one table of hash-chained rows, behind a small protocol.

``records`` is the contract (rows in, rows out, the ``EventStore`` protocol), ``chain`` the
per-namespace hash chain, ``schema`` the tables, ``sql`` the SQLAlchemy implementation for
SQLite and PostgreSQL. Nothing here knows a domain event type.
"""

from stratagate.store.records import GENESIS_HASH, EventStore, NewEvent, Snapshot, StoredEvent

__all__ = ["GENESIS_HASH", "EventStore", "NewEvent", "Snapshot", "StoredEvent"]
