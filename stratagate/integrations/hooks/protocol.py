"""The Claude Code hook protocol as this package speaks it, and the request the hook command
hands the hook server (stdlib only: the hook command imports it).

The host runs the hook command per event with one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and per event ``prompt``, ``source``,
``trigger``, ``stop_hook_active``). Exit 0 with ``{"hookSpecificOutput": {"hookEventName": …,
"additionalContext": …}}`` on stdout adds context (UserPromptSubmit, SessionStart); exit 2 would
block the user's prompt, so a memory hook never uses it: its errors exit 1 (the host shows the
one stderr line and goes on).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from stratagate.errors import InvalidInputError

EXIT_OK = 0
EXIT_ERROR = 1
"""A non-blocking error: the host shows stderr to the user and goes on."""
PROTOCOL_VERSION = 1
MAX_EVENT_BYTES = 16 * 1024 * 1024

CAPTURE_EVENTS = frozenset({"Stop", "SessionEnd", "PreCompact"})
"""Events after which the agent is not replying: the transcript's turns so far are stored."""
RECALL_EVENT = "UserPromptSubmit"
SESSION_START = "SessionStart"
HANDLED_EVENTS = CAPTURE_EVENTS | {RECALL_EVENT, SESSION_START}


class HookInputError(InvalidInputError):
    """The hook event on stdin is not what the protocol sends."""


class HookEvent(NamedTuple):
    """The fields of one hook event this package uses."""

    name: str
    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    prompt: str | None = None
    source: str | None = None
    trigger: str | None = None
    stop_hook_active: bool = False


def parse_event(data: bytes) -> HookEvent:
    """The hook event in ``data`` (the bytes the host wrote on stdin)."""
    return event_from(load_event(data))


def load_event(data: bytes) -> dict[str, Any]:
    """The JSON object the host wrote on stdin."""
    if len(data) > MAX_EVENT_BYTES:
        raise HookInputError(f"the hook event is larger than {MAX_EVENT_BYTES} bytes")
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError as exc:
        raise HookInputError(f"the hook event is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise HookInputError("the hook event is not a JSON object")
    return value


def event_from(value: object) -> HookEvent:
    """A ``HookEvent`` from the parsed object; a wrongly typed field is an input error."""
    if not isinstance(value, dict):
        raise HookInputError("the hook event is not a JSON object")
    name, session = value.get("hook_event_name"), value.get("session_id")
    if not isinstance(name, str) or not name:
        raise HookInputError("the hook event has no hook_event_name")
    if not isinstance(session, str) or not session.strip() or not session.isprintable():
        raise HookInputError("the hook event has no usable session_id")
    texts = {}
    for key in ("transcript_path", "cwd", "prompt", "source", "trigger"):
        field_value = value.get(key)
        if field_value is not None and not isinstance(field_value, str):
            raise HookInputError(f"the hook event's {key} is not a string")
        texts[key] = field_value
    return HookEvent(
        name=name,
        session_id=session,
        stop_hook_active=value.get("stop_hook_active") is True,
        **texts,
    )


def additional_context(event_name: str, text: str) -> str:
    """The stdout that adds ``text`` to the model's context for this event."""
    output = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
    return json.dumps(output, ensure_ascii=False)


class Request(NamedTuple):
    """What the hook command asks of the hook server: one event and how to treat it."""

    event: dict[str, Any]
    namespace: str
    redact: bool = False
    token_budget: int = 900
    raw_hits: int = 4
    deadline: float = 0.0
    """Wall-clock time (``time.time()``) after which the hook command no longer waits."""
    version: int = PROTOCOL_VERSION

    def encode(self) -> bytes:
        return json.dumps(self._asdict(), ensure_ascii=False).encode("utf-8", "surrogatepass")

    @classmethod
    def decode(cls, data: bytes) -> Request:
        value = json.loads(data.decode("utf-8", "replace"))
        if not isinstance(value, dict) or value.get("version") != PROTOCOL_VERSION:
            raise HookInputError("not a hook request of this protocol version")
        known = {k: v for k, v in value.items() if k in cls._fields}
        return cls(**known)


class Reply(NamedTuple):
    """What the hook command prints and exits with."""

    exit: int = EXIT_OK
    stdout: str = ""
    stderr: str = ""

    def encode(self) -> bytes:
        return json.dumps(self._asdict(), ensure_ascii=False).encode("utf-8", "surrogatepass")

    @classmethod
    def decode(cls, data: bytes) -> Reply:
        value = json.loads(data.decode("utf-8", "replace"))
        if not isinstance(value, dict):
            raise HookInputError("the hook server's reply is not a JSON object")
        code = value.get("exit")
        return cls(
            exit=EXIT_OK if code == EXIT_OK else EXIT_ERROR,
            stdout=str(value.get("stdout") or ""),
            stderr=str(value.get("stderr") or ""),
        )


def one_line(text: str) -> str:
    """``text`` on one line (what a hook prints on stderr)."""
    return " ".join(text.split())


__all__ = [
    "CAPTURE_EVENTS",
    "EXIT_ERROR",
    "EXIT_OK",
    "HANDLED_EVENTS",
    "RECALL_EVENT",
    "SESSION_START",
    "HookEvent",
    "HookInputError",
    "Reply",
    "Request",
    "additional_context",
    "event_from",
    "load_event",
    "one_line",
    "parse_event",
]
