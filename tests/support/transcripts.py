"""Claude Code transcripts as the host writes them (one JSON object per line), for the hook
tests and benchmark: prompts, replies with text, thinking and tool blocks, tool results,
sidechain, meta and summary lines."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

_ids = itertools.count(1)


def new_uuid(prefix: str = "u") -> str:
    return f"{prefix}-{next(_ids):06d}"


@dataclass
class Transcript:
    """A session's transcript being written line by line (``lines`` are the objects)."""

    session_id: str
    cwd: str = "/work/project"
    lines: list[dict[str, Any]] = field(default_factory=list)
    minute: int = 0

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        self.minute += 1
        parent = self.lines[-1].get("uuid") if self.lines else None
        line = {
            "type": kind,
            "uuid": new_uuid(kind[0]),
            "parentUuid": parent,
            "sessionId": self.session_id,
            "timestamp": f"2026-05-01T{9 + self.minute // 60:02d}:{self.minute % 60:02d}:00.000Z",
            "cwd": self.cwd,
            "isSidechain": False,
            "userType": "external",
            "message": message,
            **extra,
        }
        self.lines.append(line)
        return line

    def prompt(self, text: str | list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return self._line("user", {"role": "user", "content": text}, **extra)

    def reply(
        self, *blocks: dict[str, Any] | str, stop_reason: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        message = {"role": "assistant", "content": content, "stop_reason": stop_reason}
        return self._line("assistant", message, **extra)

    def tool_use(self, tool_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.reply({"type": "tool_use", "id": tool_id, "name": name, "input": arguments})

    def tool_result(self, tool_id: str, content: Any, *, is_error: bool = False) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        if is_error:
            block["is_error"] = True
        return self._line("user", {"role": "user", "content": [block]})

    def summary(self, text: str) -> dict[str, Any]:
        line = {"type": "summary", "summary": text, "leafUuid": new_uuid("l")}
        self.lines.append(line)
        return line

    def system(self, text: str) -> dict[str, Any]:
        line = {"type": "system", "subtype": "informational", "content": text, "uuid": new_uuid()}
        self.lines.append(line)
        return line

    def turn(self, prompt: str, answer: str) -> None:
        """A plain finished turn: a prompt and a one-line reply that ends it."""
        self.prompt(prompt)
        self.reply(answer, stop_reason="end_turn")

    def data(self) -> bytes:
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.data())
        return path


def event(name: str, transcript: Path | str | None, session_id: str, **fields: Any) -> bytes:
    """The hook event JSON the host writes on the command's stdin."""
    value: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": None if transcript is None else str(transcript),
        "cwd": fields.pop("cwd", "/work/project"),
        "hook_event_name": name,
        "permission_mode": "default",
        **fields,
    }
    return orjson.dumps(value)


__all__ = ["Transcript", "event", "new_uuid"]
