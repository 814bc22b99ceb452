"""Validating a turn before anything is appended: messages, roles, ids, times, tool calls.

A turn is one user side and one assistant side. Each side is a string (the usual case), one
message mapping, or a list of them: the user side may carry ``system`` messages before the user
message, the assistant side ``tool`` messages around the assistant's answer. Empty strings are
valid content; ``None`` is not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from stratagate.core.arguments import check_id_text
from stratagate.errors import InvalidInputError
from stratagate.models import RawMessage, ToolTrace, parse_input
from stratagate.timeutil import parse_datetime

SIDE_ROLES = {"user": ("user", "system"), "assistant": ("assistant", "tool")}
IMPORT_THREAD_PREFIX = "import:"


def check_thread_id(thread_id: object) -> str | None:
    """``None`` or a non-empty string that is not reserved for import source blocks."""
    if thread_id is None:
        return None
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise InvalidInputError(
            f"thread_id must be None or a non-empty string, got {type(thread_id).__name__}"
            if not isinstance(thread_id, str)
            else f"thread_id must be None or a non-empty string, got {thread_id!r}"
        )
    check_id_text("thread_id", thread_id)
    if thread_id.startswith(IMPORT_THREAD_PREFIX):
        raise InvalidInputError(f"thread ids starting with {IMPORT_THREAD_PREFIX!r} are reserved")
    return thread_id


def check_time(
    value: datetime | str | None, default: datetime, name: str = "created_at"
) -> datetime:
    """A datetime or ISO text as aware UTC (naive = UTC); ``None`` gives ``default``."""
    if value is None:
        return default
    if not isinstance(value, datetime | str):
        raise InvalidInputError(
            f"{name} must be a datetime or ISO-8601 text, got {type(value).__name__}"
        )
    try:
        return parse_datetime(value)
    except ValueError as exc:
        raise InvalidInputError(f"{name}: not an ISO-8601 timestamp: {value!r}") from exc


def _side(
    side: str,
    value: Any,
    at: datetime,
    thread_id: str | None,
    tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None,
    new_id: Callable[[str], str],
    max_chars: int,
) -> list[RawMessage]:
    if value is None:
        raise InvalidInputError(
            f"{side}: None is not a message (use an empty string for no content)"
        )
    items = value if isinstance(value, list | tuple) else [value]
    if not items:
        raise InvalidInputError(f"{side}: at least one message is needed")
    messages = []
    for item in items:
        if isinstance(item, str):
            data: dict[str, Any] = {"role": side, "content": item}
        elif type(item) is dict or isinstance(item, Mapping | RawMessage):
            data = dict(item) if isinstance(item, Mapping) else item.model_dump()
            data.setdefault("role", side)
        else:
            raise InvalidInputError(
                f"{side}: expected a string or a message mapping, got {type(item).__name__}"
            )
        content = data.get("content")
        if content is None:
            raise InvalidInputError(f"{side}: message content is None (use an empty string)")
        if isinstance(content, str) and len(content) > max_chars:
            raise InvalidInputError(
                f"{side}: message content is {len(content)} characters, more than the "
                f"{max_chars} allowed (option max_message_chars)"
            )
        if data["role"] not in SIDE_ROLES[side]:
            raise InvalidInputError(f"{side}: role {data['role']!r} is not allowed on this side")
        if data.get("thread_id") not in (None, thread_id):
            raise InvalidInputError(f"{side}: message thread_id differs from the turn's thread_id")
        data["thread_id"] = thread_id
        data["created_at"] = check_time(data.get("created_at"), at, f"{side}.created_at")
        data["id"] = data.get("id") or new_id("msg")
        messages.append(parse_input(RawMessage, data, what=f"{side} message"))
    if not any(m.role == side for m in messages):
        raise InvalidInputError(f"{side}: a turn needs one {side} message")
    if tool_calls:
        traces = [parse_input(ToolTrace, t, what=f"{side}_tool_calls") for t in tool_calls]
        index = max(i for i, m in enumerate(messages) if m.role == side)
        target = messages[index]
        messages[index] = target.model_copy(
            update={"tool_calls": [*(target.tool_calls or []), *traces]}
        )
    return messages


def turn_messages(
    user: Any,
    assistant: Any,
    *,
    at: datetime,
    thread_id: str | None,
    user_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None,
    assistant_tool_calls: Sequence[ToolTrace | Mapping[str, Any]] | None,
    new_id: Callable[[str], str],
    max_chars: int = 65_536,
) -> list[RawMessage]:
    """The validated messages of one turn, user side first; a content longer than
    ``max_chars`` characters is an ``InvalidInputError``."""
    return [
        *_side("user", user, at, thread_id, user_tool_calls, new_id, max_chars),
        *_side("assistant", assistant, at, thread_id, assistant_tool_calls, new_id, max_chars),
    ]


__all__ = ["check_thread_id", "check_time", "turn_messages"]
