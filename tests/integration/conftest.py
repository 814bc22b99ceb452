"""Event-store backends for the integration tests: in-memory SQLite, a SQLite file, PostgreSQL.

PostgreSQL tests skip only when the server is unreachable, and fail instead when
``STRATAGATE_REQUIRE_POSTGRES=1``. Each PostgreSQL test gets a fresh schema (selected through
``options=-csearch_path=…`` in the URL) that is dropped afterwards, so runs sharing the server
never see each other's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from stratagate.store import open_store
from stratagate.store.sql import SqlEventStore, open_event_store

BACKENDS = ["python", "memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""``python``: the plain-Python store of ``in_memory`` memories; ``memory``: in-memory SQLite."""


@dataclass(frozen=True)
class Backend:
    """Where a test's store lives: ``database`` is what ``open_event_store`` is given."""

    name: str
    database: str


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """One of the three backends; the same tests run against each."""
    if request.param == "python":
        return Backend("python", "memory://")
    if request.param == "memory":
        return Backend("memory", ":memory:")
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "log.db"))
    return Backend("postgres", request.getfixturevalue("postgres_schema_url"))


@pytest.fixture
def file_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A backend several OS processes can share: a SQLite file or a PostgreSQL schema."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "log.db"))
    return Backend("postgres", request.getfixturevalue("postgres_schema_url"))


@pytest.fixture
def sql_only(backend: Backend) -> None:
    """For tests of what only a SQL database has (layouts, triggers, tampering in SQL)."""
    if backend.name == "python":
        pytest.skip("a SQL-database behaviour; the plain-Python store has no SQL")


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    """Stores opened during a test, closed at its end."""
    stores: list[Any] = []
    yield stores
    for store in reversed(stores):
        store.close()


@pytest.fixture
def store(backend: Backend, opened: list[Any]) -> Any:
    """A fresh, empty store on the test's backend."""
    opened.append(open_store(backend.database))
    return opened[-1]


@pytest.fixture
def reopen(
    backend: Backend, store: SqlEventStore, opened: list[SqlEventStore]
) -> Callable[..., SqlEventStore]:
    """Open the test's database again, as a second process would (in-memory: same engine)."""

    def _reopen(**options: object) -> SqlEventStore:
        if backend.name == "python":
            if options:
                pytest.skip("the plain-Python store has no open options")
            return store
        if backend.name == "memory":
            reopened = SqlEventStore(store.engine, **options)  # type: ignore[arg-type]
        else:
            reopened = open_event_store(backend.database, **options)  # type: ignore[arg-type]
        opened.append(reopened)
        return reopened

    return _reopen


@pytest.fixture
def raw_sql(store: SqlEventStore, sql_only: None) -> Callable[..., None]:
    """Run SQL on the store's database behind its back (to tamper with rows)."""

    def _run(statement: str, **params: object) -> None:
        with store.engine.begin() as conn:
            conn.execute(text(statement), params)

    return _run
