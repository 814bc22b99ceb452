"""Capture's file side on real files: stop points past long lines, a cursor that no longer
matches its transcript, and the turn an append receives (clipped, redacted, keyed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.integrations.hooks.capture import (
    TranscriptError,
    clip,
    last_line_end,
    read_from,
    turn_input,
)
from stratagate.integrations.hooks.cursors import Cursor, CursorStore, tail_digest
from stratagate.integrations.hooks.transcript import ToolRecord, Turn


def test_a_stop_point_is_found_behind_a_long_last_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first, long_line, partial = b'{"a": 1}\n', b'{"b": "' + b"x" * 150_000 + b'"}\n', b"y" * 70_000
    path.write_bytes(first + long_line + partial)
    assert last_line_end(str(path)) == len(first + long_line)
    path.write_bytes(b"no newline at all" * 10_000)
    assert last_line_end(str(path)) == 0
    with pytest.raises(TranscriptError, match="no transcript at"):
        last_line_end(str(tmp_path / "missing.jsonl"))
    with pytest.raises(TranscriptError, match="is a directory"):
        last_line_end(str(tmp_path))


def test_a_rewritten_or_truncated_transcript_is_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"line": 1}\n{"line": 2}\n')
    cursor = Cursor("ns", str(path), "s", offset=12, tail=tail_digest(b'{"line": 1}\n'))
    data, start, offset = read_from(cursor)
    assert (start, offset, data[offset - start :]) == (0, 12, b'{"line": 2}\n')
    path.write_bytes(b'{"LINE": 1}\n{"line": 2}\n')  # same length, other bytes
    assert read_from(cursor)[2] == 0
    path.write_bytes(b'{"line"')  # shorter than the offset
    assert read_from(cursor)[2] == 0


def test_cursors_survive_a_reload_and_unreadable_ones_start_over(tmp_path: Path) -> None:
    store = CursorStore(tmp_path / "state", "/data/memory.db")
    kept = Cursor("ns", "/t/a.jsonl", "s1", offset=40, stops=(55,), tail="ab", waiting=True)
    store.save(kept)
    assert store.load("ns", "/t/a.jsonl", "s1") == kept
    assert store.waiting("ns") == [kept] and store.waiting("other") == []
    for file in store.root.glob("*.json"):
        file.write_text("{broken")
    assert store.load("ns", "/t/a.jsonl", "s1") == Cursor("ns", "/t/a.jsonl", "s1")
    assert (store.root.stat().st_mode & 0o777) == 0o700


def test_the_appended_turn_is_clipped_redacted_and_keyed_by_its_first_line() -> None:
    turn = Turn(
        key="u-1",
        prompt="deploy with token=abcd1234efgh5678 " + "x" * 100,
        prompt_at="2026-05-01T09:00:00Z",
        reply="done",
        reply_at="not a time",
        tools=(
            ToolRecord("Bash", {"command": "echo " + "y" * 50}, "z" * 50, is_error=True),
            ToolRecord("Read", {"file_path": "/a"}, None),
        ),
        start=0,
        end=10,
    )
    item = turn_input(turn, "s1", redact=True, max_chars=80, max_tool_chars=30)
    assert item["receipt_id"] == "claude-code:u-1" and item["thread_id"] == "s1"
    assert "abcd1234efgh5678" not in item["user"] and len(item["user"]) == 80
    assert item["user"].endswith("the transcript holds the rest]")
    assert item["assistant"] == {"role": "assistant", "content": "done"}  # no usable time
    bash, read = item["assistant_tool_calls"]
    assert len(bash["arguments"]["command"]) == 30 and len(bash["result"]["error"]) == 30
    assert read == {"name": "Read", "arguments": {"file_path": "/a"}, "result": None}
    verbatim = turn_input(turn, "s1", redact=False, max_chars=10_000, max_tool_chars=10_000)
    assert "token=abcd1234efgh5678" in verbatim["user"]


@given(st.text(max_size=300), st.integers(1, 200))
def test_clipped_text_never_exceeds_the_limit_and_short_text_is_kept(text: str, limit: int) -> None:
    clipped = clip(text, limit)
    assert len(clipped) <= limit
    assert (clipped == text) == (len(text) <= limit)
