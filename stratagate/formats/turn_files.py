"""Turn files for ``stratagate ingest``: JSONL turns or LoCoMo conversations, with receipt ids.

Every turn read from a file carries a receipt id, so ingesting the same file again skips what
is already in. JSONL: the line's ``receipt_id``, else ``<file name>:<line number>``. LoCoMo:
``<sample_id>:<dia_id of the user message>`` (which is also the user message's id).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from stratagate.errors import InvalidInputError
from stratagate.formats.input_files import InputFileError, read_input_file
from stratagate.formats.locomo import conversation_turns, parse_conversation

JSONL_KEYS = frozenset(
    {
        "user",
        "assistant",
        "created_at",
        "thread_id",
        "receipt_id",
        "user_tool_calls",
        "assistant_tool_calls",
    }
)
"""The fields a JSONL turn line may carry (``user`` and ``assistant`` are required)."""


class TurnFileError(InvalidInputError):
    """A turn file is unreadable or malformed; the message names the file and line."""


@dataclass(frozen=True)
class FileTurn:
    """One turn as read from a file, ready for ``append_turn``; ``origin`` says where it was."""

    origin: str
    receipt_id: str
    user: Any
    assistant: Any
    created_at: Any = None
    thread_id: str | None = None
    user_tool_calls: Any = None
    assistant_tool_calls: Any = None

    def append_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``StrataGate.append_turn`` for this turn."""
        return {
            "created_at": self.created_at,
            "thread_id": self.thread_id,
            "user_tool_calls": self.user_tool_calls,
            "assistant_tool_calls": self.assistant_tool_calls,
            "receipt_id": self.receipt_id,
        }


@dataclass(frozen=True)
class TurnFile:
    """The turns of one file and what kind of file it was (``jsonl`` or ``locomo``)."""

    kind: str
    turns: list[FileTurn]


def read_turn_file(
    path: str | Path, *, thread_id: str | None = None, limit: int | None = None
) -> TurnFile:
    """Read a JSONL or LoCoMo file; ``thread_id`` forces every turn's thread, ``limit`` cuts."""
    source = Path(path)
    try:
        data = read_input_file(source, "turn file")
    except InputFileError as exc:
        raise TurnFileError(str(exc)) from exc
    parsed = parse_turn_text(data, name=source.name, stem=source.stem)
    turns = parsed.turns[:limit] if limit is not None else parsed.turns
    if thread_id is not None:
        turns = [_with_thread(turn, thread_id) for turn in turns]
    return TurnFile(kind=parsed.kind, turns=turns)


def parse_turn_text(data: bytes | str, *, name: str, stem: str) -> TurnFile:
    """Detect the format by content: a LoCoMo conversation (or a list of them), else JSONL."""
    whole = _whole_document(data)
    if isinstance(whole, dict) and _is_locomo(whole):
        return TurnFile("locomo", locomo_file_turns([whole], stem=stem))
    if isinstance(whole, list) and whole and all(_is_locomo(item) for item in whole):
        return TurnFile("locomo", locomo_file_turns(whole, stem=stem))
    return TurnFile("jsonl", jsonl_turns(data, name=name))


def jsonl_turns(data: bytes | str, *, name: str) -> list[FileTurn]:
    """One turn per non-blank line; a malformed line raises ``TurnFileError`` naming it."""
    text = _text(data, name)
    turns = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            turns.append(_jsonl_turn(line, name, number))
    if not turns:
        raise TurnFileError(f"{name}: no turns (expected JSONL turn objects or a LoCoMo file)")
    return turns


def _jsonl_turn(line: str, name: str, number: int) -> FileTurn:
    origin = f"{name} line {number}"
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise TurnFileError(f"{origin}: not valid JSON ({exc})") from exc
    if not isinstance(item, dict):
        raise TurnFileError(f"{origin}: expected a JSON object, got {type(item).__name__}")
    unknown = sorted(set(item) - JSONL_KEYS)
    if unknown:
        raise TurnFileError(f"{origin}: unknown field(s) {', '.join(unknown)}")
    missing = [key for key in ("user", "assistant") if item.get(key) is None]
    if missing:
        raise TurnFileError(f"{origin}: missing {' and '.join(missing)}")
    receipt = item.get("receipt_id", f"{name}:{number}")
    if not isinstance(receipt, str) or not receipt.strip():
        raise TurnFileError(f"{origin}: receipt_id must be a non-empty string")
    return FileTurn(
        origin=origin,
        receipt_id=receipt,
        user=item["user"],
        assistant=item["assistant"],
        created_at=item.get("created_at"),
        thread_id=item.get("thread_id"),
        user_tool_calls=item.get("user_tool_calls"),
        assistant_tool_calls=item.get("assistant_tool_calls"),
    )


def locomo_file_turns(samples: list[dict[str, Any]], *, stem: str) -> list[FileTurn]:
    """Every sample's turns in order; each sample is its own thread named by its sample id."""
    turns = []
    for index, raw in enumerate(samples):
        default_id = stem if len(samples) == 1 else f"{stem}-{index + 1}"
        conversation = parse_conversation(raw, sample_id=default_id)
        prefix = f"{conversation.sample_id}:"
        for turn in conversation_turns(conversation, id_prefix=prefix):
            user_id = turn["user"]["id"]
            turns.append(
                FileTurn(
                    origin=f"{conversation.sample_id} {user_id.removeprefix(prefix)}",
                    receipt_id=user_id,
                    user=turn["user"],
                    assistant=turn["assistant"],
                    created_at=turn["created_at"],
                    thread_id=conversation.sample_id,
                )
            )
    return turns


def _with_thread(turn: FileTurn, thread_id: str) -> FileTurn:
    """The turn moved to ``thread_id`` (its messages too, which may name their thread)."""
    return FileTurn(
        origin=turn.origin,
        receipt_id=turn.receipt_id,
        user=_rethread(turn.user, thread_id),
        assistant=_rethread(turn.assistant, thread_id),
        created_at=turn.created_at,
        thread_id=thread_id,
        user_tool_calls=turn.user_tool_calls,
        assistant_tool_calls=turn.assistant_tool_calls,
    )


def _rethread(side: Any, thread_id: str) -> Any:
    if isinstance(side, Mapping) and "thread_id" in side:
        return {**side, "thread_id": thread_id}
    if isinstance(side, list):
        return [_rethread(item, thread_id) for item in side]
    return side


def _is_locomo(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    inner = value.get("conversation")
    return "speaker_a" in value or (isinstance(inner, dict) and "speaker_a" in inner)


def _whole_document(data: bytes | str) -> Any:
    """The file as one JSON document, or ``None`` when it is not one (JSONL has many)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _text(data: bytes | str, name: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TurnFileError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


__all__ = [
    "JSONL_KEYS",
    "FileTurn",
    "TurnFile",
    "TurnFileError",
    "jsonl_turns",
    "locomo_file_turns",
    "parse_turn_text",
    "read_turn_file",
]
