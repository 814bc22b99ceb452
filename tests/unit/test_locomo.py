"""The LoCoMo loader: both file layouts, the turn pairing rule, ids, dates and answers."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stratagate.errors import InvalidInputError
from stratagate.formats.locomo import (
    PAD_SUFFIX,
    LocomoFormatError,
    conversation_turns,
    default_data_dir,
    load_conversation,
    parse_answer_interval,
    parse_session_datetime,
)
from stratagate.models import RawMessage

LOCOMO_DIR = default_data_dir()

FLAT = {
    "speaker_a": "Caroline",
    "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
        {"speaker": "Melanie", "dia_id": "D1:2", "text": "Hi Caroline!"},
        {"speaker": "Caroline", "dia_id": "D1:3", "text": "I went to a group yesterday."},
        {"speaker": "Caroline", "dia_id": "D1:4", "text": "Look at this.",
         "blip_caption": "a photo of a flag", "img_url": ["x"]},
        {"speaker": "Melanie", "dia_id": "D1:5", "text": "Lovely!"},
    ],
    "session_2_date_time": "12:09 am on 13 September, 2023",
    "session_2": [
        {"speaker": "Melanie", "dia_id": "D2:1", "text": "Long time no chat!"},
        {"speaker": "Caroline", "dia_id": "D2:2", "text": "Indeed."},
    ],
    "session_3_date_time": "4:10 pm on 26 October, 2023",
    "events_session_1": {"Caroline": ["Caroline attends a support group."], "Melanie": [],
                         "date": "8 May, 2023"},
    "qa": [
        {"question": "When?", "answer": "7 May 2023", "evidence": ["D1:3"], "category": 2},
        {"question": "Year?", "answer": 2022, "evidence": ["D1:4"], "category": 2},
        {"question": "Trick?", "adversarial_answer": "no", "evidence": ["D1:2"], "category": 5},
    ],
}  # fmt: skip


def _write(tmp_path: Path, name: str, payload: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_flat_layout_loads_sessions_questions_and_events(tmp_path: Path) -> None:
    conv = load_conversation(_write(tmp_path, "conv-x.json", FLAT))
    assert conv.sample_id == "conv-x"
    assert (conv.speaker_a, conv.speaker_b) == ("Caroline", "Melanie")
    assert [s.index for s in conv.sessions] == [1, 2]  # session 3 has a date but no messages
    assert conv.sessions[0].datetime == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conv.sessions[1].datetime == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)
    assert conv.sessions[0].messages[3].blip_caption == "a photo of a flag"
    assert [q.answer for q in conv.qa] == ["7 May 2023", 2022, None]
    assert conv.qa[2].adversarial_answer == "no" and conv.qa[2].category == 5
    assert conv.events[0].session_index == 1 and conv.events[0].date == "8 May, 2023"
    assert conv.events[0].by_speaker == {
        "Caroline": ["Caroline attends a support group."], "Melanie": []
    }  # fmt: skip


def test_original_nested_layout_loads_with_its_own_sample_id(tmp_path: Path) -> None:
    conversation = {k: v for k, v in FLAT.items() if not k.startswith(("events_", "qa"))}
    nested = {
        "sample_id": "conv-26",
        "conversation": conversation,
        "event_summary": {"events_session_1": FLAT["events_session_1"]},
        "qa": FLAT["qa"],
    }
    conv = load_conversation(_write(tmp_path, "locomo10.json", nested))
    assert conv.sample_id == "conv-26"
    assert len(conv.sessions) == 2 and len(conv.events) == 1 and len(conv.qa) == 3


def test_turn_pairing_pads_missing_sides_and_keeps_ids(tmp_path: Path) -> None:
    conv = load_conversation(_write(tmp_path, "conv-x.json", FLAT))
    turns = conversation_turns(conv, id_prefix="x:")
    pairs = [(t["user"]["id"], t["assistant"]["id"]) for t in turns]
    assert pairs == [
        ("x:D1:1", "x:D1:2"),
        ("x:D1:3", "x:D1:3" + PAD_SUFFIX),  # speaker_a twice in a row
        ("x:D1:4", "x:D1:5"),
        ("x:D2:1" + PAD_SUFFIX, "x:D2:1"),  # the session opens with speaker_b
        ("x:D2:2", "x:D2:2" + PAD_SUFFIX),  # the session ends on speaker_a
    ]
    assert turns[1]["assistant"]["content"] == "" and turns[1]["assistant"]["role"] == "assistant"
    assert turns[3]["user"]["content"] == "" and turns[3]["user"]["role"] == "user"
    assert turns[2]["user"]["content"] == "Look at this. [image: a photo of a flag]"
    assert turns[0]["user"]["name"] == "Caroline" and turns[0]["assistant"]["name"] == "Melanie"


def test_turn_times_are_session_time_plus_message_index_seconds(tmp_path: Path) -> None:
    conv = load_conversation(_write(tmp_path, "conv-x.json", FLAT))
    turns = conversation_turns(conv)
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert turns[0]["user"]["created_at"] == start
    assert turns[0]["assistant"]["created_at"] == start + timedelta(seconds=1)
    assert turns[0]["created_at"] == start + timedelta(seconds=1)
    assert turns[1]["assistant"]["created_at"] == start + timedelta(seconds=2)
    assert turns[3]["created_at"] == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)
    for turn in turns:
        RawMessage(**turn["user"])
        RawMessage(**turn["assistant"])


def test_every_real_message_of_a_shipped_conversation_appears_once() -> None:
    conv = load_conversation(LOCOMO_DIR / "conv-26.json")
    turns = conversation_turns(conv, id_prefix="conv-26:")
    ids = [t[side]["id"] for t in turns for side in ("user", "assistant")]
    real = [i for i in ids if not i.endswith(PAD_SUFFIX)]
    expected = [f"conv-26:{m.dia_id}" for s in conv.sessions for m in s.messages]
    assert sorted(real) == sorted(expected) and len(real) == len(set(real)) == 419
    times = [t["created_at"] for t in turns]
    assert times == sorted(times)


def test_unreadable_or_malformed_files_raise_a_typed_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(LocomoFormatError) as caught:
        load_conversation(broken)
    assert isinstance(caught.value, InvalidInputError) and caught.value.__cause__ is not None
    with pytest.raises(LocomoFormatError):
        load_conversation(_write(tmp_path, "no-speakers.json", {"session_1": []}))
    with pytest.raises(LocomoFormatError):
        parse_session_datetime("sometime in May")


def test_an_unknown_speaker_is_refused(tmp_path: Path) -> None:
    payload = dict(FLAT)
    payload["session_2"] = [{"speaker": "Mallory", "dia_id": "D2:1", "text": "hi"}]
    conv = load_conversation(_write(tmp_path, "conv-y.json", payload))
    with pytest.raises(LocomoFormatError, match="Mallory"):
        conversation_turns(conv)


@pytest.mark.parametrize(
    ("answer", "start", "end"),
    [
        ("7 May 2023", "2023-05-07", "2023-05-08"),
        (2022, "2022-01-01", "2023-01-01"),
        ("June 2023", "2023-06-01", "2023-07-01"),
        ("The sunday before 25 May 2023", "2023-05-21", "2023-05-22"),
        ("The Friday before 15 July 2023", "2023-07-14", "2023-07-15"),
        ("The Friday before 14 July 2023", "2023-07-07", "2023-07-08"),
        ("The week before 9 June 2023", "2023-06-02", "2023-06-09"),
        ("Two weeks before 11 August 2023", "2023-07-28", "2023-08-04"),
        ("The week of 23 August 2023", "2023-08-21", "2023-08-28"),
        ("The weekend before 17 July 2023", "2023-07-15", "2023-07-17"),
        ("two weekends before 17 July 2023", "2023-07-08", "2023-07-10"),
        ("The weekend after 3June, 2022.", "2022-06-04", "2022-06-06"),
        ("The weekend of 24June, 2022.", "2022-06-25", "2022-06-27"),
        ("first weekend of August 2023", "2023-08-05", "2023-08-07"),
        ("last week of September 2023", "2023-09-24", "2023-10-01"),
        ("The summer of 2022", "2022-06-01", "2022-09-01"),
        ("February 24, 2023", "2023-02-24", "2023-02-25"),
        ("The week before October 13th, 2023.", "2023-10-06", "2023-10-13"),
        ("the week before 21Janury, 2022", "2022-01-14", "2022-01-21"),
        ("The sunday before 3` July 2023", "2023-07-02", "2023-07-03"),
        ("In 2013", "2013-01-01", "2014-01-01"),
    ],
)
def test_answer_intervals(answer: str | int, start: str, end: str) -> None:
    interval = parse_answer_interval(answer)
    assert interval is not None
    assert (interval[0].date().isoformat(), interval[1].date().isoformat()) == (start, end)


@pytest.mark.parametrize(
    "answer", ["4 years", "10 years ago", "A few years ago", "Since 2016", "13 August", "Seattle",
               None, "three weeks"],
)  # fmt: skip
def test_answers_that_name_no_interval(answer: str | None) -> None:
    assert parse_answer_interval(answer) is None
