"""Anchors: a head kept outside the database finds what the chain alone cannot — a tail cut
with its heads record fixed, a rewrite re-hashed from the edit on — and with a key, an anchor
file edited to match the forgery."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from stratagate import InvalidInputError, StrataGate, VerifyReport
from stratagate.anchors import KEY_VARIABLE, Anchor
from stratagate.store.chain import row_hash
from stratagate.store.records import GENESIS_HASH, StoredEvent
from tests.support.cli import quiet_main

TURNS = [(f"note {i}: we chose option {i}.", "ok") for i in range(8)]


def fill(database: Path) -> Anchor:
    """Eight turns; the anchor taken after the first four."""
    with StrataGate.open(database, "default", block_turn_size=2) as memory:
        for user, assistant in TURNS[:4]:
            memory.append_turn(user, assistant)
        anchor = memory.checkpoint()
        for user, assistant in TURNS[4:]:
            memory.append_turn(user, assistant)
    return anchor


def forge(database: Path, statement: str, *params: object) -> None:
    """Edit the log, then re-chain every row and the heads record and drop the snapshots."""
    conn = sqlite3.connect(database)
    conn.execute(statement, params)
    columns = ", ".join(StoredEvent.__dataclass_fields__)
    rows = [
        StoredEvent(*row)
        for row in conn.execute(f"SELECT {columns} FROM stratagate_events ORDER BY global_position")
    ]
    prev = GENESIS_HASH
    for row in rows:
        digest = row_hash(prev, row)
        conn.execute(
            "UPDATE stratagate_events SET prev_hash = ?, hash = ? WHERE global_position = ?",
            (prev, digest, row.global_position),
        )
        prev = digest
    conn.execute(
        "UPDATE stratagate_heads SET last_position = ?, last_hash = ?, event_count = ?",
        (rows[-1].global_position, prev, len(rows)),
    )
    conn.execute("DELETE FROM stratagate_snapshots")
    conn.commit()
    conn.close()


def verify(database: Path, anchor: Any = None) -> VerifyReport:
    with StrataGate.open(database, "default", read_only=True) as memory:
        return memory.verify(anchor=anchor)


def test_an_anchor_is_small_json_and_an_extended_log_passes(tmp_path: Path) -> None:
    database = tmp_path / "memory.db"
    anchor = fill(database)
    data = orjson.loads(anchor.model_dump_json())
    assert set(data) == {
        "format", "namespace", "position", "head_hash", "event_count", "created_at", "seal"
    }  # fmt: skip
    assert data["seal"] is None and len(data["head_hash"]) == 64
    assert verify(database, anchor).ok
    path = tmp_path / "anchor.json"
    assert quiet_main("checkpoint", "--database", str(database), "--output", str(path)) == 0
    assert quiet_main("verify", "--database", str(database), "--anchor", str(path)) == 0
    assert Anchor.model_validate_json(path.read_text()).position > anchor.position


def test_a_cut_tail_with_a_fixed_head_is_found_only_with_the_anchor(tmp_path: Path) -> None:
    database = tmp_path / "memory.db"
    anchor = fill(database)
    forge(database, "DELETE FROM stratagate_events WHERE global_position >= ?", anchor.position - 2)
    assert verify(database).ok
    report = verify(database, anchor)
    assert not report.ok and report.first_bad_position == anchor.position - 2
    path = tmp_path / "anchor.json"
    path.write_text(anchor.model_dump_json())
    assert quiet_main("verify", "--database", str(database), "--anchor", str(path)) == 1


def test_a_rewrite_rehashed_is_found_only_with_the_anchor(tmp_path: Path) -> None:
    database = tmp_path / "memory.db"
    anchor = fill(database)
    forge(
        database,
        # a clear field (content is sealed): who spoke, as a forger would rename them
        "UPDATE stratagate_events SET payload = replace(payload, '\"name\":null', "
        "'\"name\":\"forger\"') WHERE event_type = 'TurnAppended'",
    )
    assert verify(database).ok
    report = verify(database, anchor)
    assert not report.ok and report.first_bad_position == anchor.position
    assert "rewritten" in report.detail


def test_a_sealed_anchor_cannot_be_edited_without_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, "a secret kept off the database host")
    database = tmp_path / "memory.db"
    anchor = fill(database)
    assert anchor.seal is not None and verify(database, anchor).ok
    forge(
        database,
        # a clear field (content is sealed): who spoke, as a forger would rename them
        "UPDATE stratagate_events SET payload = replace(payload, '\"name\":null', "
        "'\"name\":\"forger\"') WHERE event_type = 'TurnAppended'",
    )
    # the forger edits the kept anchor to the new hash too, but cannot re-seal it
    conn = sqlite3.connect(database)
    [(new_hash,)] = conn.execute(
        "SELECT hash FROM stratagate_events WHERE global_position = ?", (anchor.position,)
    ).fetchall()
    conn.close()
    edited = anchor.model_copy(update={"head_hash": new_hash})
    report = verify(database, edited)
    assert not report.ok and "seal" in report.detail
    monkeypatch.delenv(KEY_VARIABLE)
    report = verify(database, edited)  # without the key the anchor passes, but the
    assert not report.ok and "logged checkpoint" in report.detail  # logged one still tells


def test_bad_anchors_are_input_errors(tmp_path: Path) -> None:
    database = tmp_path / "memory.db"
    anchor = fill(database)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert quiet_main("verify", "--database", str(database), "--anchor", str(garbage)) == 2
    assert quiet_main("verify", "--database", str(database), "--anchor", str(tmp_path / "no")) == 2
    other = anchor.model_copy(update={"namespace": "someone-else"})
    with pytest.raises(InvalidInputError):
        verify(database, other)
    with pytest.raises(InvalidInputError):
        verify(database, {"position": 3})


def test_a_logged_sealed_checkpoint_finds_a_rehash_without_any_anchor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the key, ``checkpoint()`` also logs the sealed head: a forger who rewrites and
    re-hashes the log must fix that event too, and cannot re-seal it without the key."""
    monkeypatch.setenv(KEY_VARIABLE, "a secret kept off the database host")
    database = tmp_path / "memory.db"
    anchor = fill(database)
    with StrataGate.open(database, "default", read_only=True) as memory:
        sealed = [r for r in memory.history() if r.type == "LogCheckpointed"]
        assert memory.verify().ok
    assert [r.data["position"] for r in sealed] == [anchor.position]
    forge(
        database,
        # a clear field (content is sealed): who spoke, as a forger would rename them
        "UPDATE stratagate_events SET payload = replace(payload, '\"name\":null', "
        "'\"name\":\"forger\"') WHERE event_type = 'TurnAppended'",
    )
    report = verify(database)  # no anchor at hand: the logged checkpoint tells
    assert not report.ok and report.first_bad_position == anchor.position
    assert "logged checkpoint" in report.detail
    # the forger also points the logged checkpoint at the new hash, then re-hashes again
    conn = sqlite3.connect(database)
    [(new_hash,)] = conn.execute(
        "SELECT hash FROM stratagate_events WHERE global_position = ?", (anchor.position,)
    ).fetchall()
    conn.close()
    forge(
        database,
        "UPDATE stratagate_events SET payload = replace(payload, ?, ?) "
        "WHERE event_type = 'LogCheckpointed'",
        anchor.head_hash,
        new_hash,
    )
    report = verify(database)
    assert not report.ok and "seal" in report.detail  # no key, no valid seal
