"""The deterministic default summary used when no summarizer is configured."""

from __future__ import annotations

from collections.abc import Sequence

from stratagate.models import BlockSummary, RawMessage

TITLE_CHARS = 80
POINT_CHARS = 160


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def default_summary(messages: Sequence[RawMessage]) -> BlockSummary:
    """Title from the first non-empty user message; key points from every user message.

    No model, no guessing: it quotes, it does not paraphrase, and it always allows extraction
    (the extractor decides).
    """
    user_lines = [m.content for m in messages if m.role == "user" and m.content.strip()]
    first = (
        user_lines[0]
        if user_lines
        else next((m.content for m in messages if m.content.strip()), "")
    )
    turns = sum(1 for m in messages if m.role == "user")
    return BlockSummary(
        l0_title=_clip(first, TITLE_CHARS) or "(empty conversation)",
        l0_tags=[],
        l1_summary=f"{turns} turns beginning: {_clip(first, POINT_CHARS)}"
        if first
        else f"{turns} turns",
        l2_keypoints=[_clip(line, POINT_CHARS) for line in user_lines[:12]],
        should_extract=True,
    )


__all__ = ["default_summary"]
