"""A receipt id vouches for one turn's content: a retry with the same content is a no-op, the
same id on a different turn is a ``ReceiptConflictError`` (a ``StorageConflictError``), never a
silent drop — in the API, in a batch, and in ``stratagate ingest``, which names the line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stratagate import ReceiptConflictError, StorageConflictError, StrataGate
from tests.support.cli import run


def test_same_id_same_content_is_a_duplicate_other_content_a_conflict(tmp_path: Path) -> None:
    with StrataGate.open(tmp_path / "m.db", "default") as memory:
        assert memory.append_turn("original", "ok", receipt_id="R").turn == 1
        again = memory.append_turn("original", "ok", receipt_id="R", created_at="2030-01-01")
        assert again.duplicate  # a retry: other time, other ids, same content
        revision = memory.revision
        with pytest.raises(ReceiptConflictError, match="'R' already names a different turn"):
            memory.append_turn("different", "ok", receipt_id="R")
        with pytest.raises(StorageConflictError):
            memory.append_turn("original", "ok", receipt_id="R", thread_id="elsewhere")
        with pytest.raises(ReceiptConflictError, match=r"turns\[1\]"):  # the batch: none of it
            memory.append_turns(
                [
                    {"user": "new", "assistant": "ok", "receipt_id": "S"},
                    {"user": "new but other", "assistant": "ok", "receipt_id": "S"},
                ]
            )
        assert memory.revision == revision
        assert [m.content for m in memory.list_open_tail()][:2] == ["original", "ok"]
    with (
        StrataGate.open(tmp_path / "m.db", "default") as memory,  # from a snapshot too
        pytest.raises(ReceiptConflictError),
    ):
        memory.append_turn("different", "ok", receipt_id="R")


def test_ingest_names_the_conflicting_line_and_appends_nothing_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = str(tmp_path / "m.db")
    first = tmp_path / "first.jsonl"
    first.write_bytes(orjson.dumps({"user": "original", "assistant": "ok", "receipt_id": "R"}))
    assert run(capsys, "ingest", str(first), "--database", database)[0] == 0
    second = tmp_path / "second.jsonl"
    lines = [
        {"user": "before", "assistant": "ok", "receipt_id": "A"},
        {"user": "different", "assistant": "ok", "receipt_id": "R"},
        {"user": "after", "assistant": "ok", "receipt_id": "B"},
    ]
    second.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    code, out, err = run(capsys, "ingest", str(second), "--database", database)
    assert code == 4 and out == "" and err.count("\n") == 1, err
    assert "second.jsonl line 2" in err and "receipt id 'R'" in err
    with StrataGate.open(database, "default", read_only=True) as memory:
        texts = [m.content for m in memory.list_open_tail() if m.role == "user"]
    assert texts == ["original", "before"]  # nothing after the bad line
