"""Reading turn files: JSONL with receipt ids and line-numbered errors, LoCoMo in its shapes."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from stratagate.formats.locomo import default_data_dir
from stratagate.formats.turn_files import TurnFileError, parse_turn_text, read_turn_file

LOCOMO = default_data_dir() / "conv-26.json"


def jsonl(*items: object) -> bytes:
    return b"\n".join(orjson.dumps(item) for item in items)


def test_jsonl_receipts_default_to_file_and_line() -> None:
    data = jsonl(
        {"user": "a", "assistant": "b", "receipt_id": "r-1", "thread_id": "t"},
        {"user": "c", "assistant": "d", "created_at": "2026-03-02T01:00:00Z"},
    )
    parsed = parse_turn_text(b"\n" + data, name="notes.jsonl", stem="notes")
    assert parsed.kind == "jsonl"
    first, second = parsed.turns
    assert (first.receipt_id, first.thread_id, first.origin) == ("r-1", "t", "notes.jsonl line 2")
    assert (second.receipt_id, second.origin) == ("notes.jsonl:3", "notes.jsonl line 3")
    assert second.append_kwargs()["created_at"] == "2026-03-02T01:00:00Z"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"user": "a",', "line 2: not valid JSON"),
        (b'["a", "b"]', "line 2: expected a JSON object, got list"),
        (b'{"user": "a"}', "line 2: missing assistant"),
        (b'{"user": "a", "assistant": "b", "thread": "t"}', "line 2: unknown field(s) thread"),
        (b'{"user": "a", "assistant": "b", "receipt_id": 7}', "line 2: receipt_id must be"),
    ],
)
def test_a_malformed_line_is_named(line: bytes, message: str) -> None:
    data = jsonl({"user": "ok", "assistant": "ok"}) + b"\n" + line
    with pytest.raises(TurnFileError, match="^" + re.escape(f"f.jsonl {message}")):
        parse_turn_text(data, name="f.jsonl", stem="f")


def test_empty_and_non_utf8_files_are_refused() -> None:
    with pytest.raises(TurnFileError, match="no turns"):
        parse_turn_text(b"\n \n", name="e.jsonl", stem="e")
    with pytest.raises(TurnFileError, match="not UTF-8"):
        parse_turn_text(b"\xff\xfe{", name="e.jsonl", stem="e")


def test_locomo_flat_wrapped_and_listed_shapes_agree() -> None:
    raw = orjson.loads(LOCOMO.read_bytes())
    flat = parse_turn_text(LOCOMO.read_bytes(), name="conv-26.json", stem="conv-26")
    conversation = {k: v for k, v in raw.items() if k.startswith(("speaker_", "session_"))}
    wrapped = {"sample_id": "conv-26", "conversation": conversation, "qa": raw["qa"]}
    from_wrapped = parse_turn_text(orjson.dumps(wrapped), name="w.json", stem="w")
    listed = parse_turn_text(orjson.dumps([wrapped, wrapped]), name="all.json", stem="all")
    assert flat.kind == from_wrapped.kind == listed.kind == "locomo"
    assert [t.receipt_id for t in flat.turns] == [t.receipt_id for t in from_wrapped.turns]
    assert flat.turns[0].receipt_id == "conv-26:D1:1" == flat.turns[0].user["id"]
    assert flat.turns[0].thread_id == "conv-26" and flat.turns[0].origin == "conv-26 D1:1"
    assert len(listed.turns) == 2 * len(flat.turns)


def test_read_turn_file_limits_and_forces_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    side = {"role": "user", "content": "hi", "thread_id": "old"}
    path.write_bytes(jsonl(*({"user": side, "assistant": "yo", "thread_id": "old"},) * 3))
    read = read_turn_file(path, thread_id="new", limit=2)
    assert [t.receipt_id for t in read.turns] == ["t.jsonl:1", "t.jsonl:2"]
    assert {t.thread_id for t in read.turns} == {"new"}
    assert {t.user["thread_id"] for t in read.turns} == {"new"}
    with pytest.raises(TurnFileError, match="cannot read"):
        read_turn_file(tmp_path / "missing.jsonl")
