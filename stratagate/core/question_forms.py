"""Forms of questions and messages that change how raw search ranks them.

A *hypothetical question* asks for an inference ("Would Caroline be considered religious?",
"What might John's degree be in?"): its evidence is what the person says about themselves
("I'm a ...", "I love ...", "my ..."; a *self-description*), not a turn worded like the
question. A message that *mostly asks* says little about its speaker (its answer is the
reply); a message that *reports* something its speaker did ("I went ...", "last week") is
where what a person did is told; a message *about the listener* ("your recipe looks great")
speaks of the other person's things.

Pure functions over the words; written from the grammar of English conversation, not from
any evaluation question (docs/EVALUATION.md, round 6, says how they were measured).
"""

from __future__ import annotations

import re

from stratagate.core.search_text import normalize_search_text

_HYPOTHETICAL = re.compile(r"\b(?:would|might|likely|could|probably|possibly)\b")
"""Words of a question asking for an inference rather than a stated fact."""

_SELF_DESCRIPTION = re.compile(
    r"\b(?:i\s+am|i'm|i\s+was|i've\s+(?:always\s+)?been|i\s+(?:really\s+)?(?:love|like|enjoy"
    r"|believe|care|want|hope|feel|value)|my)\b"
)
"""First-person wording in which a speaker describes themselves: "I am", "I'm", "I love",
"I believe", "my ..."."""


def _words(question: str) -> str:
    return normalize_search_text(question).replace("\u2019", "'")


def is_hypothetical_question(question: str) -> bool:
    """Whether the question asks for an inference: it holds "would", "might", "likely",
    "could", "probably" or "possibly"."""
    return _HYPOTHETICAL.search(_words(question)) is not None


def is_self_description(text: str) -> bool:
    """Whether a message describes its speaker in the first person ("I'm a teacher", "I love
    hiking", "my family")."""
    return _SELF_DESCRIPTION.search(_words(text)) is not None


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_REPORT = re.compile(
    r"\b(?:yesterday|last\s+(?:week|weekend|month|year|night|friday|saturday|sunday|monday"
    r"|tuesday|wednesday|thursday)|recently|just\s+(?:got|went|finished|started|joined|did|had"
    r"|took|made|won|bought|signed|tried)|i\s+(?:went|got|took|made|joined|started|finished"
    r"|won|bought|visited|tried|did|had|saw|watched|read|wrote|painted|ran|met))\b"
)


def asking_share(text: str) -> float:
    """The share of a message's words in its questions (sentences ending in ``?``)."""
    total = asked = 0
    for sentence in _SENTENCE.findall(_words(text)):
        n = len(sentence.split())
        total += n
        if sentence.rstrip().endswith("?"):
            asked += n
    return asked / total if total else 0.0


def is_report(text: str) -> bool:
    """Whether a message reports something its speaker did ("I went ...", "yesterday", "last
    week", "just joined")."""
    return _REPORT.search(_words(text)) is not None


_FIRST = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|us)\b")
_SECOND = re.compile(r"\b(?:you|your|you're|you've|you'd|you'll|yours|yourself)\b")


def is_about_listener(text: str) -> bool:
    """Whether a message speaks of its listener more than of its speaker ("your recipe looks
    great, you must ...")."""
    words = _words(text)
    return len(_SECOND.findall(words)) > len(_FIRST.findall(words))


__all__ = [
    "asking_share",
    "is_about_listener",
    "is_hypothetical_question",
    "is_report",
    "is_self_description",
]
