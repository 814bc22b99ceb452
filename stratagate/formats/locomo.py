"""LoCoMo conversations: load a sample file, turn it into append-turn inputs, read QA answers.

Two file layouts are accepted: the flat one (``speaker_a``, ``session_1``,
``session_1_date_time``, ``events_session_1``, ``qa`` at the top level) and the original
``locomo10`` one (``sample_id``, ``conversation`` {…}, ``event_summary`` {…}, ``qa``).

Pairing rule of ``conversation_turns``: ``speaker_a`` speaks as the user, ``speaker_b`` as the
assistant. Within a session, a user message followed by an assistant message is one turn. A
user message not followed by an assistant message (the next one is also speaker_a's, or the
session ends) gets an assistant side with empty content; an assistant message without a
pending user message (the session opens with speaker_b, or speaker_b speaks twice) gets a user
side with empty content. Turns never span sessions. Real messages keep ``id_prefix + dia_id``
as their id, so evidence ids map back; a padding message's id is its partner's id plus
``#pad``. Message ``i`` of a session (0-based) is stamped session time + ``i`` seconds; a
padding message takes its partner's timestamp.
"""

from __future__ import annotations

import calendar
import os
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from stratagate.errors import InvalidInputError
from stratagate.formats.input_files import InputFileError, read_input_file

PAD_SUFFIX = "#pad"


class LocomoFormatError(InvalidInputError):
    """A LoCoMo file is unreadable or does not have the expected shape."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LocomoMessage(_Frozen):
    """One dialogue message: its ``dia_id`` (``D3:7``), speaker, text and shared photo caption."""

    dia_id: str
    speaker: str
    text: str
    blip_caption: str | None = None


class LocomoSession(_Frozen):
    """One session: 1-based index, its start time (UTC) and messages in order."""

    index: int
    datetime: datetime
    messages: list[LocomoMessage]


class LocomoQuestion(_Frozen):
    """One QA item; category 5 (adversarial) items have no ``answer`` but an adversarial one."""

    question: str
    answer: str | int | None = None
    adversarial_answer: str | None = None
    evidence: list[str]
    category: int


class LocomoSessionEvents(_Frozen):
    """The annotated events of one session (``events_session_N``) by speaker."""

    session_index: int
    date: str | None
    by_speaker: dict[str, list[str]]


class LocomoConversation(_Frozen):
    """A whole LoCoMo sample."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[LocomoSession]
    qa: list[LocomoQuestion]
    events: list[LocomoSessionEvents]


_SESSION_TIME = re.compile(
    r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>am|pm)\s+on\s+(?P<day>\d{1,2})\s+"
    r"(?P<month>[A-Za-z]+),?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {name.lower(): index for index, name in enumerate(calendar.month_name) if name}


def default_data_dir() -> Path:
    """Where the LoCoMo conversations live: ``$STRATAGATE_LOCOMO_DIR``, else ``shared/data/locomo``
    beside the repository, else this project's machines' ``/work/shared/data/locomo``."""
    configured = os.environ.get("STRATAGATE_LOCOMO_DIR")
    if configured:
        return Path(configured)
    candidates = [
        Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo",
        Path("/work/shared/data/locomo"),
    ]
    return next((path for path in candidates if path.is_dir()), candidates[0])


def parse_session_datetime(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → ``2023-05-08T13:56:00+00:00`` (taken to be UTC)."""
    match = _SESSION_TIME.match(text)
    month = _MONTHS.get(match["month"].lower()) if match else None
    if match is None or month is None:
        raise LocomoFormatError(f"unrecognised session time {text!r}")
    hour = int(match["h"]) % 12 + (12 if match["ampm"].lower() == "pm" else 0)
    try:
        return datetime(
            int(match["year"]), month, int(match["day"]), hour, int(match["m"]), tzinfo=UTC
        )
    except ValueError as exc:
        raise LocomoFormatError(f"impossible session time {text!r}") from exc


def _session_numbers(conversation: dict[str, Any]) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        parts = key.split("_")
        if len(parts) == 2 and parts[0] == "session" and parts[1].isdigit() and value:
            numbers.append(int(parts[1]))
    return sorted(numbers)


def _events(raw: dict[str, Any]) -> list[LocomoSessionEvents]:
    found = []
    for key, value in raw.items():
        number = key.removeprefix("events_session_")
        if not key.startswith("events_session_") or not number.isdigit():
            continue
        by_speaker = {k: [str(e) for e in v] for k, v in value.items() if k != "date"}
        found.append(
            LocomoSessionEvents(
                session_index=int(number), date=value.get("date"), by_speaker=by_speaker
            )
        )
    return sorted(found, key=lambda events: events.session_index)


def _message(raw: dict[str, Any]) -> LocomoMessage:
    return LocomoMessage(
        dia_id=raw["dia_id"],
        speaker=raw["speaker"],
        text=raw["text"],
        blip_caption=raw.get("blip_caption") or None,
    )


def parse_conversation(raw: dict[str, Any], *, sample_id: str) -> LocomoConversation:
    """Build a ``LocomoConversation`` from decoded JSON (either layout)."""
    try:
        conversation = raw.get("conversation", raw)
        events_source = raw.get("event_summary", raw)
        sessions = [
            LocomoSession(
                index=number,
                datetime=parse_session_datetime(conversation[f"session_{number}_date_time"]),
                messages=[_message(m) for m in conversation[f"session_{number}"]],
            )
            for number in _session_numbers(conversation)
        ]
        return LocomoConversation(
            sample_id=str(raw.get("sample_id") or sample_id),
            speaker_a=conversation["speaker_a"],
            speaker_b=conversation["speaker_b"],
            sessions=sessions,
            qa=[LocomoQuestion.model_validate(item) for item in raw.get("qa", [])],
            events=_events(events_source),
        )
    except (KeyError, TypeError, AttributeError, ValidationError) as exc:
        raise LocomoFormatError(f"{sample_id}: not a LoCoMo conversation ({exc!r})") from exc


def load_conversation(path: str | Path) -> LocomoConversation:
    """Read one LoCoMo sample file; ``sample_id`` defaults to the file name without extension."""
    source = Path(path)
    try:
        raw = orjson.loads(read_input_file(source, "LoCoMo file"))
    except InputFileError as exc:
        raise LocomoFormatError(str(exc)) from exc
    except orjson.JSONDecodeError as exc:
        raise LocomoFormatError(f"cannot read {source}: {exc}") from exc
    if not isinstance(raw, dict):
        raise LocomoFormatError(f"{source}: expected a JSON object")
    return parse_conversation(raw, sample_id=source.stem)


def message_content(message: LocomoMessage) -> str:
    """The text as a chat message: a shared photo is appended as ``[image: caption]``."""
    if message.blip_caption:
        return f"{message.text} [image: {message.blip_caption}]"
    return message.text


def _side(
    message: LocomoMessage, role: str, at: datetime, prefix: str, *, empty: bool = False
) -> dict[str, Any]:
    return {
        "id": prefix + message.dia_id + (PAD_SUFFIX if empty else ""),
        "role": role,
        "content": "" if empty else message_content(message),
        "name": message.speaker,
        "created_at": at,
    }


def conversation_turns(conv: LocomoConversation, *, id_prefix: str = "") -> list[dict[str, Any]]:
    """Append-turn inputs ``{"user": {...}, "assistant": {...}, "created_at": ...}`` in order."""
    turns: list[dict[str, Any]] = []
    names = {conv.speaker_a: "user", conv.speaker_b: "assistant"}
    other = {conv.speaker_a: conv.speaker_b, conv.speaker_b: conv.speaker_a}
    for session in conv.sessions:
        pending: tuple[LocomoMessage, datetime] | None = None
        for index, message in enumerate(session.messages):
            if message.speaker not in names:
                raise LocomoFormatError(
                    f"{conv.sample_id} {message.dia_id}: unknown speaker {message.speaker!r}"
                )
            at = session.datetime + timedelta(seconds=index)
            if names[message.speaker] == "user":
                if pending is not None:
                    turns.append(_padded_user_turn(pending, other, id_prefix))
                pending = (message, at)
                continue
            if pending is None:
                user = _side(
                    LocomoMessage(dia_id=message.dia_id, speaker=other[message.speaker], text=""),
                    "user", at, id_prefix, empty=True,
                )  # fmt: skip
            else:
                user = _side(pending[0], "user", pending[1], id_prefix)
                pending = None
            turns.append(
                {"user": user, "assistant": _side(message, "assistant", at, id_prefix),
                 "created_at": at}
            )  # fmt: skip
        if pending is not None:
            turns.append(_padded_user_turn(pending, other, id_prefix))
    return turns


def _padded_user_turn(
    pending: tuple[LocomoMessage, datetime], other: dict[str, str], prefix: str
) -> dict[str, Any]:
    message, at = pending
    partner = LocomoMessage(dia_id=message.dia_id, speaker=other[message.speaker], text="")
    return {
        "user": _side(message, "user", at, prefix),
        "assistant": _side(partner, "assistant", at, prefix, empty=True),
        "created_at": at,
    }


# ---------------------------------------------------------------- reading QA answers

_ANSWER_MONTH = (
    r"\b(?P<mon>jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*)"
)
_WEEKDAY_NAMES = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "a": 1}
_DAY_FIRST = re.compile(
    rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s*{_ANSWER_MONTH}[\s,.]*(?P<year>\d{{4}})"
)
_MONTH_FIRST = re.compile(
    rf"{_ANSWER_MONTH}\s*(?P<day>\d{{1,2}})(?:st|nd|rd|th)?[\s,.]+(?P<year>\d{{4}})"
)
_MONTH_YEAR = re.compile(rf"{_ANSWER_MONTH}[\s,.]*(?P<year>\d{{4}})")
_YEAR_ONLY = re.compile(r"(?<!\d)(?P<year>(?:19|20)\d{2})(?!\d)")
_SEASON = re.compile(r"summer|winter|spring|autumn|fall")


def _month_number(token: str) -> int | None:
    prefix = token[:3].lower()
    for name, number in _MONTHS.items():
        if name.startswith(prefix):
            return number
    return None


def _anchor(text: str) -> tuple[date, str] | None:
    """The first full date in ``text`` and what precedes it."""
    for pattern in (_DAY_FIRST, _MONTH_FIRST):
        match = pattern.search(text)
        if match:
            month = _month_number(match["mon"])
            if month is None:
                continue
            try:
                return date(int(match["year"]), month, int(match["day"])), text[: match.start()]
            except ValueError:
                continue
    return None


def _weekend_before(day: date, count: int) -> tuple[date, date]:
    sunday = day - timedelta(days=(day.weekday() + 1) % 7 or 7)
    sunday -= timedelta(weeks=count - 1)
    return sunday - timedelta(days=1), sunday + timedelta(days=1)


def _relative_interval(head: str, anchor: date) -> tuple[date, date] | None:
    if not head.strip():
        return anchor, anchor + timedelta(days=1)
    for index, name in enumerate(_WEEKDAY_NAMES):
        if re.search(rf"\b{name}\s+before", head):
            back = (anchor.weekday() - index) % 7 or 7
            day = anchor - timedelta(days=back)
            return day, day + timedelta(days=1)
    count_match = re.search(r"\b(\d+|one|two|three|four|a)\s+(weekends?|weeks?)\s+before", head)
    count = 1
    if count_match:
        raw = count_match.group(1)
        count = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    if re.search(r"weekend\s+before|weekends\s+before", head):
        return _weekend_before(anchor, count)
    if "weekend after" in head:
        saturday = anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7)
        return saturday, saturday + timedelta(days=2)
    if "weekend of" in head:
        saturday = anchor - timedelta(days=anchor.weekday()) + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    if re.search(r"weeks?\s+before", head):
        start = anchor - timedelta(weeks=count)
        return start, start + timedelta(days=7)
    if "week of" in head:
        monday = anchor - timedelta(days=anchor.weekday())
        return monday, monday + timedelta(days=7)
    return None


def parse_answer_interval(answer: str | int | None) -> tuple[datetime, datetime] | None:
    """The half-open UTC interval a temporal QA answer names, or ``None`` when it names none.

    Understood: a day ("7 May 2023", "July 2, 2023", "15April, 2022"), a month ("June 2023",
    "early August, 2023" → the month), a year ("2022", "In 2013"), a season of a year (June-
    August for summer), "the <weekday> before D" (the latest such day strictly before D), "the
    week before D" ([D-7, D)), "N weeks before D", "the week of D" (its Monday-Sunday week),
    "the weekend before/after/of D", "N weekends before D", "first weekend of <month>",
    "last week of <month>". Durations ("4 years"), vague ("a few years ago"), "since …" and
    dates without a year answer ``None``.
    """
    if answer is None:
        return None
    text = re.sub(r"[`'\"]", "", str(answer)).strip().lower()
    text = re.sub(r"(\d)(?!(?:st|nd|rd|th)\b)([a-z])", r"\1 \2", text)
    if not text or text.startswith("since") or "ago" in text:
        return None
    found = _answer_dates(text)
    if found is None:
        return None
    start, end = found
    return (
        datetime(start.year, start.month, start.day, tzinfo=UTC),
        datetime(end.year, end.month, end.day, tzinfo=UTC),
    )


def _answer_dates(text: str) -> tuple[date, date] | None:
    anchored = _anchor(text)
    if anchored is not None:
        return _relative_interval(anchored[1], anchored[0])
    month_year = _MONTH_YEAR.search(text)
    month = _month_number(month_year["mon"]) if month_year else None
    if month_year and month:
        year = int(month_year["year"])
        first = date(year, month, 1)
        after = date(year + month // 12, month % 12 + 1, 1)
        if "first weekend" in text:
            saturday = first + timedelta(days=(5 - first.weekday()) % 7)
            return saturday, saturday + timedelta(days=2)
        if "last week" in text:
            return after - timedelta(days=7), after
        return first, after
    year_match = _YEAR_ONLY.search(text)
    if year_match is None or re.search(r"\d+\s+(?:years?|weeks?|months?|days?)", text):
        return None
    year = int(year_match["year"])
    season = _SEASON.search(text)
    if season is None:
        return date(year, 1, 1), date(year + 1, 1, 1)
    month = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}[season.group()]
    end_year, end_month = (year + 1, 3) if month == 12 else (year, month + 3)
    return date(year, month, 1), date(end_year, end_month, 1)


__all__ = [
    "PAD_SUFFIX",
    "LocomoConversation",
    "LocomoFormatError",
    "LocomoMessage",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoSessionEvents",
    "conversation_turns",
    "default_data_dir",
    "load_conversation",
    "message_content",
    "parse_answer_interval",
    "parse_conversation",
    "parse_session_datetime",
]
