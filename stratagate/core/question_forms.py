"""Forms of questions and messages that change how raw search ranks them.

A *hypothetical question* asks for an inference ("Would Caroline be considered religious?",
"What might John's degree be in?"): its evidence is what the person says about themselves
("I'm a ...", "I love ...", "my ..."; a *self-description*), not a turn worded like the
question. A message that *mostly asks* says little about its speaker (its answer is the
reply); a message that *reports* something its speaker did ("I went ...", "last week") is
where what a person did is told; a message *about the listener* ("your recipe looks great")
speaks of the other person's things. A message that *names a thing* (a name, a title, a
number: "we went to see Hamilton") says what a person did, read or saw, where topic talk
("painting is so relaxing") does not.

Pure functions over the words; written from the grammar of English conversation, not from
any evaluation question (docs/EVALUATION.md, round 6, says how they were measured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_REPORT = re.compile(
    r"\b(?:yesterday|last\s+(?:week|weekend|month|year|night|friday|saturday|sunday|monday"
    r"|tuesday|wednesday|thursday)|recently|just\s+(?:got|went|finished|started|joined|did|had"
    r"|took|made|won|bought|signed|tried)|i\s+(?:went|got|took|made|joined|started|finished"
    r"|won|bought|visited|tried|did|had|saw|watched|read|wrote|painted|ran|met))\b"
)
"""Wording of a report of something the speaker did: a recent time, "just <did>", "I <did>"."""
_FIRST = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|us)\b")
_SECOND = re.compile(r"\b(?:you|your|you're|you've|you'd|you'll|yours|yourself)\b")


@dataclass(frozen=True, slots=True)
class MessageForms:
    """What the wording of one message says about it (``message_forms``)."""

    self_description: bool
    """The speaker describes themselves ("I'm a teacher", "I love hiking", "my family")."""
    asking_share: float
    """The share of its words in its questions (sentences ending in ``?``)."""
    report: bool
    """It reports something the speaker did ("I went ...", "yesterday", "just joined")."""
    about_listener: bool
    """It speaks of the listener more than of the speaker ("your recipe looks great, you
    must ...": more "you / your" than "I / my / we")."""
    names_thing: bool
    """It names a concrete thing: a capitalised word inside a sentence (a name or a title,
    not "I" and not a greeted person) or a number (``names_thing``)."""


def message_forms(text: str, people: frozenset[str] = frozenset()) -> MessageForms:
    """The forms of a message, its text normalised once for all of them; ``people`` are the
    names (case-folded) that do not count as naming a thing (the conversation's speakers)."""
    words = _words(text)
    return MessageForms(
        self_description=_SELF_DESCRIPTION.search(words) is not None,
        asking_share=_asking_share(words) if "?" in words else 0.0,
        report=_REPORT.search(words) is not None,
        about_listener=len(_SECOND.findall(words)) > len(_FIRST.findall(words)),
        names_thing=names_thing(text, people),
    )


_NAMED = re.compile(r"(?<=[\w,;:)\"'] )([A-Z][\w'’-]*)\b(?! *[!,?])|\d")
"""A capitalised word that follows a word inside a sentence (not its first word) and is not
followed by "!", "," or "?" (a greeted person: "Thanks Mel!", "hey Jon,"), or a digit."""
_NOT_NAMES = frozenset(
    {
        *("I", "I'm", "I've", "I'd", "I'll", "I’m", "I’ve", "I’d", "I’ll", "OK", "Ok"),
        *("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        *("January", "February", "March", "April", "May", "June", "July", "August"),
        *("September", "October", "November", "December"),
    }
)
"""Capitalised words that name no thing: "I" and its contractions, "OK", the days of the
week and the months (capitalised by convention; they say when, not what)."""


def names_thing(text: str, people: frozenset[str] = frozenset()) -> bool:
    """Whether a message names a concrete thing rather than talking about a topic in general:
    a capitalised word inside a sentence (a person, place, title or brand: "we saw Hamilton",
    "my dog Max") other than "I", or a number ("3 years", "2022"). Topic talk ("painting is
    so relaxing") names none. The names in ``people`` (case-folded) are not things."""
    for match in _NAMED.finditer(text):
        word = match.group(1)
        if word is None or (word not in _NOT_NAMES and word.casefold() not in people):
            return True
    return False


def _asking_share(words: str) -> float:
    total = asked = 0
    for sentence in _SENTENCE.findall(words):
        n = len(sentence.split())
        total += n
        if sentence.rstrip().endswith("?"):
            asked += n
    return asked / total if total else 0.0


__all__ = ["MessageForms", "is_hypothetical_question", "message_forms", "names_thing"]
