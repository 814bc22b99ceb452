"""A SQLite file's snapshot payloads live in files beside it (``<db>.snapshots/``), out of the
turns' write-ahead log: the row names its file by the payload's SHA-256. A file that is missing
or damaged reads as no snapshot (the log is replayed, the state equals the live one, an audit
writes nothing); a replaced snapshot's file goes; erasure and a dropped namespace take the
namespace's files with them. Real SQLite files."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.replay import hydrate, replay
from stratagate import StorageError, StrataGate
from stratagate.store.records import Snapshot
from stratagate.store.snapshot_files import REFERENCE
from stratagate.store.sql import open_event_store

NS = "default"
KEY = "inline"


def fill(database: Path, namespace: str = NS) -> None:
    """Four turns of two threads, closed (a snapshot is written on close)."""
    with StrataGate.open(database, namespace, block_turn_size=2) as memory:
        for i in range(2):
            memory.append_turn(f"alpha secret {i}", f"noted {i}", thread_id="alpha")
            memory.append_turn(f"beta plan {i}", f"ok {i}", thread_id="beta")


def side_files(database: Path) -> list[Path]:
    folder = Path(f"{database}.snapshots")
    return sorted(folder.iterdir()) if folder.is_dir() else []


def stored_payload(database: Path, namespace: str = NS) -> bytes:
    with sqlite3.connect(database) as conn:
        ((payload,),) = conn.execute(
            "SELECT payload FROM stratagate_snapshots WHERE namespace = ? AND key = ?",
            (namespace, KEY),
        ).fetchall()
    return bytes(payload)


def at_rest(database: Path) -> dict[str, bytes]:
    """The database file and its snapshot files, with their bytes (what an audit must leave
    as they were; SQLite's own ``-wal`` and ``-shm`` housekeeping aside)."""
    folder = Path(f"{database}.snapshots")
    paths = [database, *(sorted(folder.rglob("*")) if folder.exists() else [])]
    return {str(p): p.read_bytes() for p in paths if p.is_file()}


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    fill(path)
    return path


def test_the_payload_is_a_private_file_beside_the_database(database: Path) -> None:
    reference = stored_payload(database)
    assert reference.startswith(REFERENCE) and len(reference) < 200  # the row names, not holds
    (found,) = side_files(database)
    assert reference.endswith(found.name.encode())
    assert found.name.endswith(hashlib.sha256(found.read_bytes()).hexdigest())
    assert stat.S_IMODE(found.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(found.stat().st_mode) == 0o600
    with open_event_store(str(database)) as store:
        snapshot = store.load_snapshot(NS, KEY)
        assert snapshot is not None and snapshot.payload == found.read_bytes()
        state, from_snapshot = hydrate(store, NS, KEY)
        assert from_snapshot and state.digests() == replay(store, NS).digests()


def test_a_replaced_snapshot_leaves_one_file(database: Path) -> None:
    (before,) = side_files(database)
    with StrataGate.open(database, NS, block_turn_size=2) as memory:
        memory.append_turn("gamma", "more", thread_id="gamma")
    (after,) = side_files(database)
    assert after != before and stored_payload(database).endswith(after.name.encode())


DAMAGE = ["bit", "truncated", "empty", "missing", "folder", "another"]


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_or_missing_file_is_no_snapshot(database: Path, damage: str) -> None:
    (found,) = side_files(database)
    data = found.read_bytes()
    if damage == "bit":
        found.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    elif damage == "truncated":
        found.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        found.write_bytes(b"")
    elif damage == "missing":
        found.unlink()
    elif damage == "folder":
        os.rename(found.parent, f"{found.parent}.moved")
    else:  # another snapshot's file under this one's name
        other = database.parent / "other.db"
        fill(other, "other")
        found.write_bytes(side_files(other)[0].read_bytes())
    check_no_snapshot(database)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_any_flipped_byte_is_no_snapshot(tmp_path: Path, data: st.DataObject) -> None:
    database = tmp_path / "memory.db"
    if not database.exists():
        fill(database)
    (found,) = side_files(database)
    original = found.read_bytes()
    at = data.draw(st.integers(0, len(original) - 1))
    found.write_bytes(original[:at] + bytes([original[at] ^ 0xFF]) + original[at + 1 :])
    try:
        check_no_snapshot(database)
    finally:
        found.write_bytes(original)


def check_no_snapshot(database: Path) -> None:
    """The snapshot reads as none; a read-only verify passes (a lost cache is not damage)
    and writes nothing; an open replays to the state the log makes."""
    before = at_rest(database)
    with StrataGate.open(database, NS, read_only=True) as memory:
        assert memory.verify().ok
        assert memory.stats().turns == 4
    assert at_rest(database) == before
    with open_event_store(str(database)) as store:
        assert store.load_snapshot(NS, KEY) is None
        state, from_snapshot = hydrate(store, NS, KEY)
        assert not from_snapshot and state.digests() == replay(store, NS).digests()


def test_a_row_holding_its_payload_is_read_as_before(database: Path) -> None:
    """A database written before the snapshot files kept the payload in the row."""
    (found,) = side_files(database)
    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE stratagate_snapshots SET payload = ?", (found.read_bytes(),))
    found.unlink()
    with open_event_store(str(database)) as store:
        state, from_snapshot = hydrate(store, NS, KEY)
        assert from_snapshot and state.digests() == replay(store, NS).digests()


def test_a_snapshot_that_was_not_stored_leaves_no_file(database: Path) -> None:
    with sqlite3.connect(database) as conn:
        conn.execute("DROP TABLE stratagate_snapshots")
    (kept,) = side_files(database)
    with open_event_store(str(database), create=False) as store, pytest.raises(StorageError):
        store.save_snapshot(Snapshot(NS, KEY, 1, "d", 1, b"payload", "2026-01-01"))
    assert side_files(database) == [kept]


def test_erasure_takes_the_namespaces_files(tmp_path: Path) -> None:
    database = tmp_path / "memory.db"
    fill(database)
    fill(database, "other")
    assert len(side_files(database)) == 2
    kept = [
        p
        for p in side_files(database)
        if stored_payload(database, "other").endswith(p.name.encode())
    ]
    with StrataGate.open(database, NS, block_turn_size=2) as memory:
        memory.erase_thread("alpha", reason="asked")
        assert side_files(database) == kept  # before the close writes a snapshot again
    with open_event_store(str(database)) as store:
        store.purge_namespace(NS, reason="dropped", at="2026-01-01T00:00:00.000000Z")
        assert store.load_snapshot(NS, KEY) is None
    assert side_files(database) == kept
