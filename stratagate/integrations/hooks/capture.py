"""Storing a transcript's completed turns: read from the cursor, pair, append, move the cursor.

The turns of one run are appended in one commit (``append_turns``), each with the receipt its
first line's uuid gives it, so a repeated or overlapping run stores nothing twice; the cursor
moves only after that commit. Text longer than the memory accepts is clipped with a note (the
transcript keeps it whole), and with ``redact`` credentials are masked before storage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO

from stratagate.core.redaction import redact_text, redact_value
from stratagate.errors import StrataGateError
from stratagate.integrations.hooks.cursors import TAIL_BYTES, Cursor, tail_digest
from stratagate.integrations.hooks.transcript import Turn, pair, receipt_id, scan
from stratagate.memory import StrataGate

MAX_TOOL_CHARS = 4_000
"""The longest tool argument or result text stored (a file the agent read is in the project and
the transcript; the memory keeps what it was and the start of it)."""
LAST_LINE_WINDOW = 1 << 16


class TranscriptError(StrataGateError):
    """The transcript named by the hook event cannot be read."""


@dataclass(frozen=True, slots=True)
class Captured:
    """What one run stored from one transcript."""

    stored: int = 0
    duplicates: int = 0
    corrupt: int = 0
    replaced: int = 0
    waiting: bool = False
    """A turn is still open (its reply is not complete): the next run stores it."""


def clip(text: str, limit: int) -> str:
    """``text``, or its first characters and a note of how long it was: ``limit`` characters
    at most."""
    if len(text) <= limit:
        return text
    note = f" … [clipped: {len(text)} characters in all, the transcript holds the rest]"
    if len(note) >= limit:
        return text[:limit]
    return text[: limit - len(note)] + note


def clip_value(value: Any, limit: int) -> Any:
    """A JSON-like value with every string in it clipped to ``limit`` characters."""
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, Mapping):
        return {k: clip_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip_value(v, limit) for v in value]
    return value


def timestamp(text: str | None) -> datetime | None:
    """A transcript timestamp as a datetime (``None`` when absent or not ISO-8601)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def turn_input(
    turn: Turn, session_id: str, *, redact: bool, max_chars: int, max_tool_chars: int
) -> dict[str, Any]:
    """The ``append_turns`` item of a turn: thread = session, receipt from its first line."""
    show = redact_text if redact else str
    tools = [
        {
            "name": tool.name,
            "arguments": clip_value(
                redact_value(tool.arguments) if redact else tool.arguments, max_tool_chars
            ),
            "result": None
            if tool.result is None
            else (
                {"error": clip(show(tool.result), max_tool_chars)}
                if tool.is_error
                else clip(show(tool.result), max_tool_chars)
            ),
        }
        for tool in turn.tools
    ]
    at = timestamp(turn.prompt_at)
    reply_at = timestamp(turn.reply_at)
    return {
        "user": clip(show(turn.prompt), max_chars),
        "assistant": {
            "role": "assistant",
            "content": clip(show(turn.reply), max_chars),
            **({"created_at": reply_at} if reply_at else {}),
        },
        "created_at": at or reply_at,
        "thread_id": session_id,
        "assistant_tool_calls": tools or None,
        "receipt_id": receipt_id(session_id, turn.key),
    }


@contextmanager
def transcript_file(path: str) -> Iterator[BinaryIO]:
    """The transcript open for reading; what keeps it from being read is a ``TranscriptError``."""
    try:
        with open(path, "rb") as handle:
            yield handle
    except FileNotFoundError as exc:
        raise TranscriptError(f"no transcript at {path}") from exc
    except IsADirectoryError as exc:
        raise TranscriptError(f"the transcript {path} is a directory") from exc
    except OSError as exc:
        raise TranscriptError(f"cannot read the transcript {path}: {exc.strerror or exc}") from exc


def last_line_end(path: str) -> int:
    """The offset after the transcript's last complete line (a stop point), looking back a
    window at a time (a last line may be a long tool result)."""
    with transcript_file(path) as handle:
        end = os.fstat(handle.fileno()).st_size
        while end > 0:
            start = max(0, end - LAST_LINE_WINDOW)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            end = start
    return 0


def read_from(cursor: Cursor) -> tuple[bytes, int, int]:
    """The transcript's bytes from a little before the cursor on, the offset they start at,
    and the offset to read turns from: the cursor's, or 0 when the file was truncated or
    rewritten since the cursor was kept (the bytes before the offset no longer match)."""
    with transcript_file(cursor.transcript) as handle:
        size = os.fstat(handle.fileno()).st_size
        offset = cursor.offset if cursor.offset <= size else 0
        start = max(0, offset - TAIL_BYTES)
        handle.seek(start)
        data = handle.read()
    if offset and tail_digest(data[: offset - start]) != cursor.tail:
        offset = 0
    return data, start, offset


def capture(
    memory: StrataGate,
    cursor: Cursor,
    *,
    stop: int | None,
    redact: bool,
    max_chars: int,
    max_tool_chars: int = MAX_TOOL_CHARS,
) -> tuple[Captured, Cursor]:
    """Store the completed turns after ``cursor`` (``stop``: the stop point this run adds) and
    start the model work in the background; the moved cursor comes back with the result."""
    data, start, offset = read_from(cursor)
    stops = tuple(s for s in cursor.stops if offset == cursor.offset and s > offset)
    if stop is not None and stop > offset:
        stops = (*stops, stop)
    found = scan(data[offset - start :], offset)
    paired = pair(found, stops)
    inputs = [
        turn_input(
            turn,
            cursor.session_id,
            redact=redact,
            max_chars=max_chars,
            max_tool_chars=max_tool_chars,
        )
        for turn in paired.turns
    ]
    result = memory.append_turns(inputs, wait=False) if inputs else None
    resume = paired.resume
    moved = cursor.moved(
        offset=resume,
        stops=tuple(s for s in stops if s > resume),
        tail=tail_digest(data[max(0, resume - TAIL_BYTES) - start : resume - start]),
        waiting=False,
    )
    duplicates = result.duplicates if result is not None else 0
    return (
        Captured(
            stored=len(inputs) - duplicates,
            duplicates=duplicates,
            corrupt=found.corrupt,
            replaced=found.replaced,
            waiting=resume < start + len(data),
        ),
        moved,
    )


__all__ = [
    "MAX_TOOL_CHARS",
    "Captured",
    "TranscriptError",
    "capture",
    "clip",
    "clip_value",
    "last_line_end",
    "read_from",
    "timestamp",
    "turn_input",
]
