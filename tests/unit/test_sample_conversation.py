"""The bundled sample conversation is well-formed input for `append_turn` and the README job."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from importlib.resources import files
from itertools import pairwise
from typing import Any

import pytest

from stratagate.timeutil import parse_datetime

SAMPLE = files("stratagate") / "sample" / "project_conversation.jsonl"
KEYS = {"user", "assistant", "created_at", "thread_id", "receipt_id"}
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]{3,}")


@pytest.fixture(scope="module")
def raw_text() -> str:
    return SAMPLE.read_bytes().decode("utf-8")


@pytest.fixture(scope="module")
def turns(raw_text: str) -> list[dict[str, Any]]:
    lines = raw_text.splitlines()
    assert lines, "the sample is empty"
    parsed = []
    for number, line in enumerate(lines, start=1):
        assert line.strip(), f"line {number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"line {number} is not a JSON object"
        parsed.append(row)
    return parsed


def test_every_line_has_exactly_the_turn_keys_as_strings(turns: list[dict[str, Any]]) -> None:
    for number, row in enumerate(turns, start=1):
        assert set(row) == KEYS, f"line {number} keys {sorted(row)}"
        for key in KEYS:
            assert isinstance(row[key], str), f"line {number} {key} is {row[key]!r}"
        assert row["thread_id"] and row["receipt_id"], f"line {number} has an empty id"


def test_timestamps_are_utc_and_strictly_increasing(turns: list[dict[str, Any]]) -> None:
    times = [parse_datetime(row["created_at"]) for row in turns]
    assert all(row["created_at"].endswith("Z") for row in turns)
    for number, (earlier, later) in enumerate(pairwise(times), start=2):
        assert later > earlier, f"line {number} is not later than line {number - 1}"


def test_span_covers_at_least_four_weeks(turns: list[dict[str, Any]]) -> None:
    times = [parse_datetime(row["created_at"]) for row in turns]
    assert max(times) - min(times) >= timedelta(days=28)


def test_receipt_ids_are_unique(turns: list[dict[str, Any]]) -> None:
    ids = [row["receipt_id"] for row in turns]
    assert len(ids) == len(set(ids))


def test_enough_turns_for_six_blocks(turns: list[dict[str, Any]]) -> None:
    assert len(turns) >= 72


def test_user_writes_in_chinese_and_in_english(turns: list[dict[str, Any]]) -> None:
    users = [row["user"] for row in turns]
    assert any(HAN.search(text) for text in users), "no Chinese user turn"
    assert any(LATIN.search(text) and not HAN.search(text) for text in users), "no English turn"


def test_file_stores_han_text_unescaped(raw_text: str) -> None:
    assert HAN.search(raw_text), "Han text missing or written as \\u escapes"
