"""Deterministic test callbacks (picklable, so Ray actors can run them)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from stratagate.models import (
    ElementProjectionContext,
    ExtractionContext,
    RawMessage,
)


class TitleSummarizer:
    """Titles a block by its first user message; key points are the user messages."""

    def __call__(self, messages: list[RawMessage]) -> dict[str, Any]:
        users = [m.content for m in messages if m.role == "user"]
        return {
            "l0_title": (users[0] if users else "empty")[:40],
            "l0_tags": ["test"],
            "l1_summary": f"{len(users)} turns",
            "l2_keypoints": users,
            "should_extract": not any("nothing here" in u for u in users),
        }


class KeywordExtractor:
    """One event per target user message containing ``decided`` (cites that message)."""

    def __call__(self, ctx: ExtractionContext) -> dict[str, Any]:
        events = []
        for message in ctx.target.l5_raw:
            if message.role == "user" and "decided" in message.content:
                events.append(
                    {
                        "title": message.content[:60],
                        "summary": message.content,
                        "source_block_id": ctx.target.id,
                        "source_message_ids": [message.id],
                        "temporal": {"participants": ["user"], "event_type": "decision"},
                    }
                )
        return {
            "should_extract": bool(events),
            "reason": "decisions" if events else "none",
            "events": events,
        }


class UsesProjector:
    """``X uses Y`` in an event summary → state fact ``uses`` of project X."""

    def __call__(self, ctx: ElementProjectionContext) -> dict[str, Any]:
        changes = []
        for event in ctx.events:
            words = event.summary.split()
            if "uses" in words[1:-1]:
                i = words.index("uses")
                changes.append(
                    {
                        "element": {"name": words[i - 1], "type": "project"},
                        "operation": "set_state",
                        "key": "uses",
                        "value": words[i + 1].strip("."),
                        "source_event_ids": [event.id],
                    }
                )
        return {"reason": "uses statements", "changes": changes}


class Failing:
    """Raises ``RuntimeError(message)`` whenever called."""

    def __init__(self, message: str = "model is down") -> None:
        self.message = message

    def __call__(self, *_: Any) -> Any:
        raise RuntimeError(self.message)


class HangOn:
    """Wraps a callback: when its input mentions ``needle``, announce it and hang (to be killed)."""

    def __init__(self, inner: Any, needle: str, announce: str) -> None:
        self.inner, self.needle, self.announce = inner, needle, announce

    def __call__(self, argument: Any) -> Any:
        if self.needle in _text_of(argument):
            Path(self.announce).write_text("in callback")
            time.sleep(300)
        return self.inner(argument)


def _text_of(argument: Any) -> str:
    if isinstance(argument, list):
        return " ".join(m.content for m in argument)
    if isinstance(argument, ExtractionContext):
        return " ".join(m.content for m in argument.target.l5_raw)
    if isinstance(argument, ElementProjectionContext):
        return " ".join(e.summary for e in argument.events)
    return str(argument)


class EmptyHanded:
    """An extractor that asks to extract yet returns no events (a model's bad answer)."""

    def __call__(self, ctx: ExtractionContext) -> dict[str, Any]:
        return {"should_extract": True, "reason": "looked important", "events": []}


class CountingIds:
    """A deterministic id factory: ``<prefix>_<n>`` with one counter for every prefix."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self, prefix: str) -> str:
        self.next += 1
        return f"{prefix}_{self.next}"


class SlowOn:
    """Wraps a callback: when its input mentions ``needle``, announce it, wait until
    ``release`` exists (or ``limit`` seconds), then answer as the wrapped callback."""

    def __init__(self, inner: Any, needle: str, announce: str, release: str, limit: float = 60):
        self.inner, self.needle = inner, needle
        self.announce, self.release, self.limit = announce, release, limit

    def __call__(self, argument: Any) -> Any:
        if self.needle in _text_of(argument):
            Path(self.announce).write_text("in callback")
            deadline = time.monotonic() + self.limit
            while not Path(self.release).exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return self.inner(argument)
