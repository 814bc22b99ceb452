"""How memory values read on the command line: instants, the two time axes of an event,
validity intervals, one-line gists of logged events, and JSON documents. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from pydantic import BaseModel

from stratagate.cli.constants import CLI_FORMAT, COMMAND
from stratagate.cli.render import clip
from stratagate.models import ElementFact, EventTemporal
from stratagate.timeutil import parse_datetime

NONE = "—"
_GIST_IDS = ("block_id", "event_id", "element_id", "job_id", "batch_id", "receipt_id")
_GIST_COUNTS = ("events", "source_event_ids", "refs", "event_ids", "element_ids")


def instant(value: datetime | str | None) -> str:
    """``2026-03-02 01:42`` (UTC, to the minute); partial ISO dates stay as written."""
    if value is None:
        return NONE
    if isinstance(value, str):
        if "T" not in value:
            return value
        try:
            moment = parse_datetime(value)
        except ValueError:
            return value
        return moment.strftime("%Y-%m-%d %H:%M")
    return value.strftime("%Y-%m-%d %H:%M")


def day(value: datetime | None) -> str:
    """The UTC date of an instant, or an open end."""
    return value.strftime("%Y-%m-%d") if value is not None else NONE


def happened(temporal: EventTemporal | None) -> str:
    """When an event happened: ``2026-03-09 → 2026-03-15 (range, relative, "next week")``."""
    if temporal is None or (temporal.happened_start is None and temporal.happened_end is None):
        return "unknown"
    start, end = temporal.happened_start, temporal.happened_end
    span = instant(start) if end in (None, start) else f"{instant(start)} → {instant(end)}"
    how: list[str] = [p for p in (temporal.precision, temporal.basis) if p]
    if temporal.original_text:
        how.append(f'"{temporal.original_text}"')
    return f"{span} ({', '.join(how)})" if how else span


def mentioned(temporal: EventTemporal | None) -> str:
    """When the event was mentioned in the conversation."""
    return instant(temporal.mentioned_at if temporal else None)


def fact_value(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "; ".join(value)


def validity(fact: ElementFact) -> str:
    """A fact's validity interval: ``2026-03-04 → 2026-03-09``, ``since 2026-03-26``."""
    if fact.valid_from is None and fact.valid_to is None:
        return "always"
    if fact.valid_to is None:
        return f"since {day(fact.valid_from)}"
    return f"{day(fact.valid_from)} → {day(fact.valid_to)}"


def history_gist(data: Mapping[str, Any], width: int) -> str:
    """One line for a logged event: turn and thread, a snippet, the ids it names, list sizes;
    for a payload with none of these, its scalar fields."""
    parts: list[object] = []
    if isinstance(data.get("turn"), int):
        parts.append(f"turn {data['turn']}")
    if isinstance(data.get("thread_id"), str):
        parts.append(f"thread {data['thread_id']}")
    if isinstance(data.get("start_turn"), int) and isinstance(data.get("end_turn"), int):
        parts.append(f"turns {data['start_turn']}-{data['end_turn']}")
    snippet = _snippet(data)
    if snippet:
        parts.append(f'"{clip(snippet, 40)}"')
    parts += [data[key] for key in _GIST_IDS if isinstance(data.get(key), str)]
    parts += [
        f"{len(data[key])} {key.replace('_', ' ')}"
        for key in _GIST_COUNTS
        if isinstance(data.get(key), list)
    ]
    if not parts:
        parts = [
            f"{key}={value}"
            for key, value in sorted(data.items())
            if key not in ("at", "type") and isinstance(value, str | int | float | bool)
        ]
    return clip(" · ".join(str(part) for part in parts), width)


def _snippet(data: Mapping[str, Any]) -> str | None:
    """The most telling text of a payload: a query, a title, a message, a reason or an error."""
    summary = data.get("summary")
    event = data.get("event")
    messages = data.get("messages")
    candidates = [
        data.get("query"),
        summary.get("l0_title") if isinstance(summary, Mapping) else None,
        event.get("title") if isinstance(event, Mapping) else None,
        messages[0].get("content") if messages and isinstance(messages[0], Mapping) else None,
        data.get("reason"),
        data.get("error"),
    ]
    return next((text for text in candidates if isinstance(text, str) and text.strip()), None)


def envelope(result: Any) -> dict[str, Any]:
    """``{"format": "stratagate.cli.v1", "command": …, "result": …}``: one shape for every
    command's ``--json`` output, whatever its result is (an object, a list)."""
    return {"format": CLI_FORMAT, "command": COMMAND.get(), "result": result}


def json_text(value: Any) -> str:
    """One indented JSON document; pydantic models are dumped in JSON mode."""
    return orjson.dumps(value, default=_jsonable, option=orjson.OPT_INDENT_2).decode()


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


__all__ = [
    "NONE",
    "day",
    "envelope",
    "fact_value",
    "happened",
    "history_gist",
    "instant",
    "json_text",
    "mentioned",
    "validity",
]
