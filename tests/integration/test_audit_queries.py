"""The log's own queries go through the runtime's auditor: history (by type, by page), the log
summary, namespace listing and purging at the database level — on a real SQLite file, read-only
where they only read."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagate import InvalidInputError, ReadOnlyError, StrataGate


def filled(database: Path, namespace: str = "ns") -> None:
    with StrataGate.open(database, namespace, block_turn_size=2) as memory:
        for n in range(5):
            memory.append_turn(f"question {n}", f"answer {n}")


def test_history_by_type_and_page_through_a_read_only_memory(tmp_path: Path) -> None:
    database = tmp_path / "m.db"
    filled(database)
    with StrataGate.open(database, "ns", read_only=True) as memory:
        turns = memory.history(type="TurnAppended")
        assert [r.data["turn"] for r in turns] == [1, 2, 3, 4, 5]
        page = memory.history(turns[1].position, limit=2, type="TurnAppended")
        assert [r.data["turn"] for r in page] == [3, 4]
        assert {r.type for r in memory.history(limit=3)} <= {"SettingsChanged", "TurnAppended"}
        with pytest.raises(InvalidInputError, match="unknown event type 'Nope'"):
            memory.history(type="Nope")
        summary = memory.log_summary()
        assert summary.present and summary.revision == len(memory.history())
        assert summary.last_position == memory.history()[-1].position == summary.log_position
        with pytest.raises(ReadOnlyError):
            memory.append_turn("no", "writes")


def test_namespaces_are_listed_and_purged_at_the_database_level(tmp_path: Path) -> None:
    database = tmp_path / "m.db"
    filled(database, "a")
    filled(database, "b")
    listed = StrataGate.list_namespaces(database)
    assert [s.namespace for s in listed] == ["a", "b"]
    assert all(s.revision > 0 and s.log_position == listed[-1].last_position for s in listed)
    with StrataGate.open(database, "a") as memory:
        memory.erase_namespace(reason="test")
    rows = StrataGate.purge_namespace(database, "a", reason="test")
    assert rows == listed[0].revision + 1  # the erasure's own event went too
    assert [s.namespace for s in StrataGate.list_namespaces(database)] == ["b"]
    with StrataGate.open(database, "a", read_only=True) as memory:
        assert not memory.log_summary().present
