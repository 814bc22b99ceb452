"""A new SQLite database is its owner's alone: the file and its -wal and -shm are created 0600
whatever the umask; an existing file keeps the mode its owner gave it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagate import StrataGate
from tests.support.cli import quiet_main, write_turns


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # the usual default: files world-readable
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_database_and_its_wal_files_are_private(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "nested" / "memory.db"
    memory = StrataGate.open(database, "default")
    try:
        memory.append_turn("a secret", "kept")
        files = sorted(tmp_path.joinpath("nested").iterdir())
        assert [p.name for p in files] == [
            "memory.db",
            "memory.db-shm",
            "memory.db-wal",
            "memory.db.writers",  # the writers' queue (an empty lock file)
        ]
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        memory.close()
    assert mode(database) == 0o600


def test_ingest_creates_a_private_database(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "cli.db"
    assert (
        quiet_main("ingest", str(write_turns(tmp_path / "t.jsonl")), "--database", str(database))
        == 0
    )
    assert mode(database) == 0o600


def test_an_existing_database_keeps_its_mode(tmp_path: Path, open_umask: None) -> None:
    database = tmp_path / "shared.db"
    StrataGate.open(database, "default").close()
    database.chmod(0o640)  # its owner shares it with a group on purpose
    with StrataGate.open(database, "default") as memory:
        memory.append_turn("still", "shared")
    assert mode(database) == 0o640
