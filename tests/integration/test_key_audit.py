"""Issue 21, findings 1-3: the key table and the snapshots under verify and open.

1. Destroying a thread's key material (NULL in ``stratagate_keys``) without an ``…Erased``
   event, or deleting a used key row, was ``verify: ok`` while every message read ``[erased]``.
2. A log damaged *under* the newest snapshot opened for writing and took appends.
3. A missing ``snapshot:*`` key row made verify raise and every open fail: a snapshot is a
   cache, losing its key must cost a replay.

Real SQLite files, content sealed (the default), edited with plain SQL behind the store's back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from stratagate import StrataGate
from stratagate.errors import LogIntegrityError

NS = "default"


def edit(database: Path, statement: str, *params: object) -> None:
    with sqlite3.connect(database) as conn:
        conn.execute(statement, params)


def rows(database: Path, statement: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(database) as conn:
        return conn.execute(statement, params).fetchall()


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """Two threads of sealed turns, closed (so a snapshot is written)."""
    path = tmp_path / "memory.db"
    with StrataGate.open(path, NS, block_turn_size=2) as memory:
        for i in range(4):
            memory.append_turn(f"alpha secret {i}", f"noted {i}", thread_id="alpha")
            memory.append_turn(f"beta plan {i}", f"ok {i}", thread_id="beta")
    assert rows(path, "SELECT count(*) FROM stratagate_snapshots")[0][0] >= 1
    return path


def first_use(database: Path, key_id: str) -> int:
    found = rows(
        database,
        "SELECT min(global_position) FROM stratagate_events WHERE payload LIKE ?",
        f'%"{key_id}"%',
    )[0][0]
    assert isinstance(found, int)
    return found


def verify(database: Path) -> object:
    with StrataGate.open(database, NS, read_only=True) as memory:
        return memory.verify()


# -- finding 1: a forged erasure -------------------------------------------------------------


def test_key_material_destroyed_without_an_erasure_event_is_found(database: Path) -> None:
    edit(database, "DELETE FROM stratagate_snapshots")
    edit(
        database,
        "UPDATE stratagate_keys SET material = NULL, destroyed_at = '2026-01-01T00:00:00.000000Z' "
        "WHERE key_id = 'thread:alpha@1'",
    )
    report = verify(database)
    assert not report.ok, report  # type: ignore[attr-defined]
    assert report.first_bad_position == first_use(database, "thread:alpha@1")  # type: ignore[attr-defined]
    assert "thread:alpha@1" in report.detail and "erasure" in report.detail  # type: ignore[attr-defined]


def test_a_deleted_key_row_that_the_log_uses_is_found(database: Path) -> None:
    edit(database, "DELETE FROM stratagate_snapshots")
    edit(database, "DELETE FROM stratagate_keys WHERE key_id = 'thread:beta@1'")
    report = verify(database)
    assert not report.ok and "thread:beta@1" in report.detail, report  # type: ignore[attr-defined]
    assert report.first_bad_position == first_use(database, "thread:beta@1")  # type: ignore[attr-defined]


def test_changed_key_material_is_found(database: Path) -> None:
    edit(database, "DELETE FROM stratagate_snapshots")
    edit(
        database,
        "UPDATE stratagate_keys SET material = zeroblob(32) WHERE key_id = 'thread:alpha@1'",
    )
    report = verify(database)
    assert not report.ok and report.first_bad_position == first_use(database, "thread:alpha@1")  # type: ignore[attr-defined]


def test_a_real_erasure_verifies(database: Path) -> None:
    with StrataGate.open(database, NS) as memory:
        memory.erase_thread("alpha", reason="asked")
    assert verify(database).ok  # type: ignore[attr-defined]


# -- finding 3: a lost snapshot key ----------------------------------------------------------


def test_a_lost_snapshot_key_costs_a_replay_and_is_reported(database: Path) -> None:
    edit(database, "DELETE FROM stratagate_keys WHERE key_id LIKE 'snapshot:%'")
    report = verify(database)  # never raises
    assert not report.ok and "snapshot" in report.detail, report  # type: ignore[attr-defined]
    with StrataGate.open(database, NS, read_only=True) as memory:
        assert memory.turn == 8
    with StrataGate.open(database, NS) as memory:  # writable: replays, then works
        assert memory.turn == 8
        memory.append_turn("gamma", "fine", thread_id="gamma")
    assert verify(database).ok  # type: ignore[attr-defined]  # the new snapshot has a key


# -- finding 2: damage under the snapshot ----------------------------------------------------


def test_damage_under_the_snapshot_refuses_a_writable_open(database: Path) -> None:
    snapshot_at = rows(database, "SELECT max(position) FROM stratagate_snapshots")[0][0]
    assert isinstance(snapshot_at, int) and snapshot_at > 3
    edit(
        database,
        "UPDATE stratagate_events SET recorded_at = '2020-01-01T00:00:00.000000Z' "
        "WHERE global_position = 3",
    )
    count = rows(database, "SELECT count(*) FROM stratagate_events")[0][0]
    with pytest.raises(LogIntegrityError) as raised:
        StrataGate.open(database, NS).close()
    assert raised.value.position == 3
    assert rows(database, "SELECT count(*) FROM stratagate_events")[0][0] == count
