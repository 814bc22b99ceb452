"""A Claude Code transcript read as the turns a memory stores (pure: bytes in, turns out).

The host appends one JSON object per line. Lines of ``type`` ``user`` and ``assistant`` carry
the conversation (``message.content`` a string or a list of blocks: ``text``, ``thinking``,
``tool_use``, ``tool_result``, ``image``); every other type (``summary``, ``system``, file
snapshots, …), sidechain lines (a subagent's own conversation), meta lines the host injects and
thinking blocks are skipped. A line that is not a JSON object is skipped and counted; bytes that
are not UTF-8 are read as U+FFFD and counted; a last line without its newline is not read yet
(the host may be writing it).

A **turn** starts at a user prompt and runs to the next prompt: the assistant's text blocks
joined are its reply, each ``tool_use`` paired with its ``tool_result`` is a tool record. It is
complete, and so stored, when the next prompt begins, when its last reply line says it ended
(``stop_reason`` ``end_turn``, ``stop_sequence``, ``max_tokens``, ``refusal``), or when a stop
point (the transcript's length when the agent was known to have stopped: a Stop, SessionEnd or
PreCompact hook) falls after a reply line with no tool call pending. Replies after a turn so
closed (the agent continued without a prompt) are a turn of their own with an empty prompt. A
turn is keyed by the uuid of its first line, so any run over any stretch of the file names it
the same way: the receipt that keeps it from being stored twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

FINAL_STOP_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
"""``stop_reason`` values after which the model says nothing more in that reply."""
INTERRUPTION_PREFIX = "[Request interrupted by user"
"""The text the host writes as a user line when the user interrupts the reply (not a prompt)."""
IMAGE_TEXT = "[image]"
_SURROGATE = re.compile("[\ud800-\udfff]")

LineKind = Literal["prompt", "reply", "results"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tool_use`` block: the call the assistant made."""

    id: str
    name: str
    arguments: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A ``tool_result`` block: what the call returned (its text) and whether it failed."""

    tool_use_id: str
    content: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class Line:
    """One conversation line of the transcript and the byte span it occupies."""

    kind: LineKind
    key: str
    """The line's ``uuid`` (else a digest of its bytes): what names a turn that starts here."""
    start: int
    end: int
    at: str | None
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    outcomes: tuple[ToolOutcome, ...] = ()
    final: bool = False
    """The reply line's ``stop_reason`` says the reply ended."""


@dataclass(frozen=True, slots=True)
class Scan:
    """The conversation lines of a stretch of transcript and what could not be read."""

    lines: tuple[Line, ...]
    end: int
    """The offset after the last complete line (where the next scan starts at the latest)."""
    corrupt: int = 0
    """Lines skipped: not JSON, or not a JSON object."""
    replaced: int = 0
    """Lines whose bytes were not all UTF-8 (read with U+FFFD in their place)."""


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """A tool call with its outcome (``None`` when the transcript holds no result for it)."""

    name: str
    arguments: dict[str, Any] | None
    result: str | None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Turn:
    """One completed turn: the prompt, the reply, the tool records and where it lies."""

    key: str
    prompt: str
    prompt_at: str | None
    reply: str
    reply_at: str | None
    tools: tuple[ToolRecord, ...]
    start: int
    end: int
    continuation: bool = False
    """The agent went on after a closed turn without a new prompt (the prompt is empty)."""


@dataclass(frozen=True, slots=True)
class Paired:
    """The completed turns of a scan and where the next read must start."""

    turns: tuple[Turn, ...]
    resume: int
    """The start of the first line of the turn still open, else the end of the scan."""


def scan(data: bytes, base: int = 0) -> Scan:
    """The conversation lines of ``data``, the transcript's bytes from offset ``base`` on."""
    lines: list[Line] = []
    corrupt = replaced = 0
    position = 0
    while True:
        newline = data.find(b"\n", position)
        if newline < 0:
            break
        raw = data[position:newline]
        start, position = base + position, newline + 1
        if not raw.strip():
            continue
        parsed, was_replaced = _parse(raw)
        replaced += was_replaced
        if not isinstance(parsed, dict):
            corrupt += 1
            continue
        line = conversation_line(parsed, raw, start, base + position)
        if line is not None:
            lines.append(line)
    return Scan(tuple(lines), base + position, corrupt, replaced)


def _parse(raw: bytes) -> tuple[Any, bool]:
    """The JSON value of one line (``None`` if it is not JSON) and whether bytes were replaced.

    orjson reads well-formed lines; the rest are decoded with U+FFFD for bytes that are not
    UTF-8 and read by the standard library, which also accepts escaped lone surrogates (then
    replaced, since no store can hold them)."""
    try:
        return orjson.loads(raw), False
    except orjson.JSONDecodeError:
        pass
    text = raw.decode("utf-8", "replace")
    replaced = "\ufffd" in text and "\ufffd".encode() not in raw
    try:
        return _clean(json.loads(text)), replaced
    except (ValueError, RecursionError):
        return None, replaced


def _clean(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def conversation_line(obj: dict[str, Any], raw: bytes, start: int, end: int) -> Line | None:
    """The conversation line a transcript object is, or ``None`` for everything else."""
    kind = obj.get("type")
    if kind not in ("user", "assistant") or obj.get("isSidechain") is True:
        return None
    if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
        return None
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    key = obj.get("uuid")
    if not isinstance(key, str) or not key:
        key = "sha256:" + hashlib.sha256(raw).hexdigest()[:32]
    at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return None
    if kind == "assistant":
        return _reply(blocks, message.get("stop_reason"), key, start, end, at)
    return _user(blocks, key, start, end, at)


def _reply(
    blocks: list[Any], stop_reason: Any, key: str, start: int, end: int, at: str | None
) -> Line:
    texts, calls = [], []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            arguments = block.get("input")
            calls.append(
                ToolCall(
                    id=str(block.get("id") or ""),
                    name=str(block.get("name") or "tool"),
                    arguments=arguments if isinstance(arguments, dict) else None,
                )
            )
    return Line(
        "reply",
        key,
        start,
        end,
        at,
        text="\n\n".join(t for t in texts if t),
        calls=tuple(calls),
        final=stop_reason in FINAL_STOP_REASONS,
    )


def _user(blocks: list[Any], key: str, start: int, end: int, at: str | None) -> Line | None:
    texts, outcomes = [], []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            texts.append(IMAGE_TEXT)
        elif kind == "tool_result":
            outcomes.append(
                ToolOutcome(
                    tool_use_id=str(block.get("tool_use_id") or ""),
                    content=content_text(block.get("content")),
                    is_error=block.get("is_error") is True,
                )
            )
    if outcomes:
        return Line("results", key, start, end, at, outcomes=tuple(outcomes))
    text = "\n\n".join(t for t in texts if t)
    if text.startswith(INTERRUPTION_PREFIX):
        return None
    return Line("prompt", key, start, end, at, text=text)


def content_text(content: Any) -> str:
    """A tool result's content as text: a string, or its text blocks joined (images named)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append(IMAGE_TEXT)
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)


@dataclass
class _Open:
    """The turn being read: its lines so far."""

    lines: list[Line] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        """A tool call has no result yet, or the turn has no reply line after its last result."""
        last = self.lines[-1]
        return last.kind != "reply" or bool(last.calls)

    def has_reply(self) -> bool:
        return any(line.kind == "reply" for line in self.lines)


def pair(found: Scan, stops: Iterable[int] = ()) -> Paired:
    """The completed turns of a scan that began at a turn boundary, and where to resume.

    ``stops`` are the stop points known for this transcript (see the module docstring)."""
    lines = found.lines
    stop_points = sorted(set(stops))
    turns: list[Turn] = []
    current: _Open | None = None
    for index, line in enumerate(lines):
        if line.kind == "prompt":
            if current is not None:
                turns.append(_turn(current.lines))
            current = _Open([line])
        else:
            current = current or _Open()
            current.lines.append(line)
        following = lines[index + 1].start if index + 1 < len(lines) else None
        if (
            current.has_reply()
            and not current.pending
            and (
                (line.kind == "reply" and line.final) or _stopped(stop_points, line.end, following)
            )
        ):
            turns.append(_turn(current.lines))
            current = None
    return Paired(tuple(turns), found.end if current is None else current.lines[0].start)


def _stopped(stop_points: Sequence[int], after: int, before: int | None) -> bool:
    """Whether a stop point lies between the end of one line and the start of the next."""
    return any(after <= s and (before is None or s <= before) for s in stop_points)


def _turn(lines: Sequence[Line]) -> Turn:
    first = lines[0]
    replies = [line for line in lines if line.kind == "reply"]
    outcomes = {o.tool_use_id: o for line in lines for o in line.outcomes}
    tools = []
    for call in (c for line in replies for c in line.calls):
        outcome = outcomes.pop(call.id, None)
        tools.append(
            ToolRecord(
                name=call.name,
                arguments=call.arguments,
                result=None if outcome is None else outcome.content,
                is_error=outcome is not None and outcome.is_error,
            )
        )
    tools.extend(  # results whose call lies before this turn (a continuation's first lines)
        ToolRecord(name="tool_result", arguments=None, result=o.content, is_error=o.is_error)
        for o in outcomes.values()
    )
    prompt = first.text if first.kind == "prompt" else ""
    return Turn(
        key=first.key,
        prompt=prompt,
        prompt_at=first.at,
        reply="\n\n".join(line.text for line in replies if line.text),
        reply_at=replies[-1].at if replies else None,
        tools=tuple(tools),
        start=first.start,
        end=lines[-1].end,
        continuation=first.kind != "prompt",
    )


def receipt_id(session_id: str, turn_key: str) -> str:
    """The ingestion receipt of a turn: its first line's uuid (unique across sessions, so a
    resumed session that repeats old lines stores nothing twice); a line with no uuid is keyed
    by its bytes within the session."""
    if turn_key.startswith("sha256:"):
        return f"claude-code:{session_id}:{turn_key}"
    return f"claude-code:{turn_key}"


__all__ = [
    "FINAL_STOP_REASONS",
    "Line",
    "Paired",
    "Scan",
    "ToolCall",
    "ToolOutcome",
    "ToolRecord",
    "Turn",
    "content_text",
    "conversation_line",
    "pair",
    "receipt_id",
    "scan",
]
