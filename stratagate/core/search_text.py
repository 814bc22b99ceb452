"""Search text: normalisation and the lexical tokens BM25 ranks on.

Tokens are plain strings with repetitions kept (term frequency matters). A Han run yields its
jieba words followed by its overlapping bigrams (a one-character run yields that character as
its bigram, so it appears twice: once from jieba, once as the bigram). Any other text yields
maximal runs of letters and digits (``str.isalnum``); apostrophes, underscores, hyphens and all
other punctuation separate words, so ``Caroline's`` gives ``caroline`` and ``s``, and
``snake_case`` gives ``snake`` and ``case``. Punctuation never becomes a token.

Search tokens are the words lightly stemmed (``stem``): English words of ASCII letters lose a
plural, ``-ing``/``-ed`` and a final ``e``, so ``painted``, ``painting`` and ``paints`` all give
``paint``. Documents and queries go through the same function, so BM25 over search tokens stays
one formula; ``word_tokens`` gives the unstemmed words (name matching uses them).

Queries drop stop words (``query_tokens``): English function words, auxiliaries, pronouns and
question words, matched on the unstemmed word. Documents keep them, so document lengths and
BM25 stay untouched; only the query side is filtered.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

from stratagate.errors import InvalidInputError

if TYPE_CHECKING:
    import jieba

_HAN = "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# A Han character is an assigned letter/digit (``[^\W_]``) in a Han block; unassigned code
# points in those blocks are separators like any other non-word character.
_RUN = re.compile(f"(?P<han>(?:(?=[^\\W_])[{_HAN}])+)|(?P<word>[^\\W_{_HAN}]+)")
_HAN_ANY = re.compile(f"[{_HAN}]")
_WORD = re.compile(r"[^\W_]+")
_ASCII_SEPARATORS = bytes(
    byte if chr(byte).isascii() and chr(byte).isalnum() else ord(" ") for byte in range(256)
)
"""A ``bytes.translate`` table turning every ASCII character that is not a letter or digit
(what ``_WORD`` splits on) into a space: in ASCII text, ``_WORD.findall`` is ``split`` after
it, some ten times faster."""

_STOP_WORD_TEXT = """
a an the and or but nor of to in on at for with from by as into onto about over under after
before than then so if is are was were be been being am do does did doing done have has had
having i me my mine we us our ours you your yours he him his she her hers it its they them
their theirs this that these those there here what which who whom whose when where why how
would could should will shall can may might must not no some any all also just very too more
most much many s t d ll m re ve up out
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
"""Query words that carry no topic (``'s`` and ``n't`` leave ``s`` and ``t`` behind)."""

STEM_CACHE = 1 << 17
HAN_CACHE = 1 << 14
"""Memo sizes: stemming and Han segmentation are pure, and words repeat (Zipf)."""

_segmenter: jieba.Tokenizer | None = None
_segmenter_lock = threading.Lock()


def _jieba() -> jieba.Tokenizer:
    """The shared jieba tokenizer, built (quietly) on first use: jieba is imported only then,
    so a process that never meets Han text does not pay for its import."""
    global _segmenter
    with _segmenter_lock:
        if _segmenter is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            tokenizer.initialize()
            _segmenter = tokenizer
        return _segmenter


def normalize_search_text(text: str) -> str:
    """NFKC, case folding and collapsed whitespace: the form every search comparison uses."""
    if not isinstance(text, str):
        raise InvalidInputError(f"search text must be a string, got {type(text).__name__}")
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split())  # as a regex ``\s+`` → " " and a strip would, 50× faster


@functools.lru_cache(maxsize=HAN_CACHE)
def _han_tokens(run: str) -> tuple[str, ...]:
    words = [word for word in _jieba().lcut(run) if word.strip()]
    if len(run) == 1:
        return (*words, run)
    return (*words, *(run[index : index + 2] for index in range(len(run) - 1)))


@functools.lru_cache(maxsize=STEM_CACHE)
def stem(word: str) -> str:
    """Light suffix stripping of a lower-case ASCII letter word (anything else is unchanged).

    In order: ``-ies`` → ``-y`` (longer than 4); a final ``s`` is dropped (longer than 3, not
    after ``s``, ``u`` or ``i``); then ``-ing`` (longer than 5) or ``-ed`` (longer than 4) is
    dropped and a doubled final consonant other than ``l``, ``s``, ``z`` undoubled; last a final
    ``e`` is dropped (longer than 3). ``classes`` → ``class``, ``running`` → ``run``,
    ``loved`` / ``loving`` / ``love`` → ``lov``.
    """
    if not (word.isascii() and word.isalpha()):
        return word
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    suffix = "ing" if len(word) > 5 and word.endswith("ing") else ""
    if not suffix and len(word) > 4 and word.endswith("ed"):
        suffix = "ed"
    if suffix:
        word = word[: -len(suffix)]
        if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiouylsz":
            word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def word_tokens(text: str) -> list[str]:
    """Unstemmed tokens of ``text`` in text order: jieba words and Han bigrams, other words."""
    normalized = normalize_search_text(text)
    if normalized.isascii():  # the common case: separators to spaces and a split, no regex
        return normalized.encode().translate(_ASCII_SEPARATORS).decode().split()
    if _HAN_ANY.search(normalized) is None:  # no Han run to segment
        return _WORD.findall(normalized)
    tokens: list[str] = []
    for match in _RUN.finditer(normalized):
        han = match.group("han")
        if han is not None:
            tokens.extend(_han_tokens(han))
        else:
            tokens.append(match.group("word"))
    return tokens


def search_tokens(text: str) -> list[str]:
    """The lexical tokens BM25 ranks on: ``word_tokens`` with every word passed through ``stem``."""
    return [stem(token) for token in word_tokens(text)]


def query_tokens(query: str) -> list[str]:
    """Search tokens of a query minus stop words; all of them when nothing else is left."""
    words = word_tokens(query)
    kept = [stem(word) for word in words if word not in STOP_WORDS]
    return kept or [stem(word) for word in words]


def weighted_tokens(fields: Iterable[tuple[str, int]]) -> list[str]:
    """Tokens of each ``(text, weight)`` field repeated ``weight`` times (weight 0 drops it)."""
    tokens: list[str] = []
    for field in fields:
        try:
            text, weight = field
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"a field must be a (text, weight) pair: {field!r}") from exc
        if not isinstance(text, str):
            raise InvalidInputError(f"field text must be a string, got {type(text).__name__}")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise InvalidInputError(f"field weight must be an int >= 0, got {weight!r}")
        if text and weight:  # most of a card's fields are empty: nothing to tokenize
            tokens.extend(search_tokens(text) * weight)
    return tokens


__all__ = [
    "STOP_WORDS",
    "normalize_search_text",
    "query_tokens",
    "search_tokens",
    "stem",
    "weighted_tokens",
    "word_tokens",
]
