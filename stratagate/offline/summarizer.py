"""The offline summarizer: L0 title and tags, L1 summary, L2 key points, without a model.

Salience is lexical: a sentence scores one point per block tag it contains, two more when it
carries a memory signal (decision, preference, plan, change, identity, happening) and one more
for a time expression or a number. Everything is bounded (a block is read up to the offline
reading budget) and deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stratagate.models import BlockSummary, RawMessage, parse_input
from stratagate.offline.budget import within_budget
from stratagate.offline.cues import kinds
from stratagate.offline.temporal import find_time_expressions
from stratagate.offline.text import content_words, split_sentences, top_words, truncate

EMPTY_TITLE = "Empty block"
_DIGIT = re.compile(r"\d")
_IMAGE = re.compile(r"^\[image:", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    speaker: str
    role: str
    message_index: int
    order: int
    signal: bool
    dated: bool
    numeric: bool
    content: frozenset[str]

    def score(self, tags: frozenset[str]) -> int:
        return len(self.content & tags) + 2 * self.signal + int(self.dated or self.numeric)


def _sentences(messages: list[RawMessage]) -> list[_Sentence]:
    found: list[_Sentence] = []
    for index, message in enumerate(messages):
        if message.role == "tool" or not message.content.strip():
            continue
        for text in split_sentences(message.content):
            if _IMAGE.match(text):
                continue
            found.append(
                _Sentence(
                    text=text,
                    speaker=message.name or message.role,
                    role=message.role,
                    message_index=index,
                    order=len(found),
                    signal=bool(kinds(text)),
                    dated=bool(find_time_expressions(text, message.created_at)),
                    numeric=_DIGIT.search(text) is not None,
                    content=frozenset(content_words(text)),
                )
            )
    return found


def _order(sentence: _Sentence) -> int:
    return sentence.order


def _best(sentences: list[_Sentence], tags: frozenset[str]) -> list[_Sentence]:
    """Sentences by salience, highest first; ties keep conversation order."""
    return sorted(sentences, key=lambda s: (-s.score(tags), s.order))


def summarize(
    messages: list[RawMessage], *, max_tags: int = 8, max_keypoints: int = 8
) -> BlockSummary:
    """L0-L2 views of ``messages`` and a conservative ``should_extract`` (any signal → True),
    from the block's first ``READ_BUDGET_CHARS`` characters."""
    sentences = _sentences(within_budget(messages))
    substantive = [s for s in sentences if len(s.content) >= 2]
    tag_list = top_words((s.text for s in sentences), max_tags)
    tags = frozenset(tag_list)
    if not substantive:
        title = " · ".join(tag_list[:3]).capitalize() if tag_list else EMPTY_TITLE
        return BlockSummary(
            l0_title=title, l0_tags=tag_list, l1_summary=title, l2_keypoints=[],
            should_extract=False,
        )  # fmt: skip
    ranked = _best(substantive, tags)
    user_ranked = [s for s in ranked if s.role == "user"] or ranked
    title = truncate(user_ranked[0].text.rstrip(" .!?。！？"), 60)
    lead = ranked[0]
    second = next((s for s in ranked[1:] if s.message_index != lead.message_index), None)
    summary = " ".join(
        f"{s.speaker}: {truncate(s.text, 140)}"
        for s in sorted([lead, *([second] if second else [])], key=lambda s: s.order)
    )
    keyed = [s for s in ranked if s.signal or s.dated or s.numeric][:max_keypoints]
    keypoints = [f"{s.speaker}: {truncate(s.text, 180)}" for s in sorted(keyed, key=_order)]
    return BlockSummary(
        l0_title=title,
        l0_tags=tag_list,
        l1_summary=summary,
        l2_keypoints=keypoints,
        should_extract=any(s.signal or s.dated or s.numeric for s in sentences),
    )


@dataclass(frozen=True, slots=True)
class OfflineSummarizer:
    """The ``summarizer`` callback: ``summarize`` with fixed bounds (picklable)."""

    max_tags: int = 8
    max_keypoints: int = 8

    def __call__(self, messages: list[RawMessage]) -> BlockSummary:
        parsed = [parse_input(RawMessage, message, what="message") for message in messages]
        return summarize(parsed, max_tags=self.max_tags, max_keypoints=self.max_keypoints)


__all__ = ["EMPTY_TITLE", "OfflineSummarizer", "summarize"]
