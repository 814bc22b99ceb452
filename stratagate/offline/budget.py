"""The reading budget of the offline models: how much of a block's text they look at.

Every offline model's work grows with the text it reads, so each reads a block's messages in
order up to ``READ_BUDGET_CHARS`` characters and no further: a block of huge messages costs what
a block of ordinary ones does. The raw messages stay whole in the log and in search; only the
heuristic summary and extraction see the first part of an oversized block.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagate.models import RawMessage

READ_BUDGET_CHARS = 16_000
"""Characters of a block an offline model reads (a 12-turn block of chat is ~3,000)."""


def within_budget(
    messages: Sequence[RawMessage], budget: int = READ_BUDGET_CHARS
) -> list[RawMessage]:
    """``messages`` with their contents cut, in order, so that together they hold at most
    ``budget`` characters (messages past the budget keep their place with no content)."""
    kept: list[RawMessage] = []
    left = budget
    for message in messages:
        if len(message.content) > left:
            message = message.model_copy(update={"content": message.content[:left]})
        left -= len(message.content)
        kept.append(message)
    return kept


__all__ = ["READ_BUDGET_CHARS", "within_budget"]
