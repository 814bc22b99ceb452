"""Search text: normalisation and the lexical tokens BM25 ranks on.

Tokens are plain strings with repetitions kept (term frequency matters). A Han run yields its
jieba words followed by its overlapping bigrams (a one-character run yields that character as
its bigram, so it appears twice: once from jieba, once as the bigram). Any other text yields
maximal runs of letters and digits (``str.isalnum``); apostrophes, underscores, hyphens and all
other punctuation separate words, so ``Caroline's`` gives ``caroline`` and ``s``, and
``snake_case`` gives ``snake`` and ``case``. Punctuation never becomes a token.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable

import jieba

from stratagate.errors import InvalidInputError

_HAN = "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# A Han character is an assigned letter/digit (``[^\W_]``) in a Han block; unassigned code
# points in those blocks are separators like any other non-word character.
_RUN = re.compile(f"(?P<han>(?:(?=[^\\W_])[{_HAN}])+)|(?P<word>[^\\W_{_HAN}]+)")
_SPACE = re.compile(r"\s+")

_segmenter: jieba.Tokenizer | None = None
_segmenter_lock = threading.Lock()


def _jieba() -> jieba.Tokenizer:
    """The shared jieba tokenizer, built (quietly) on first use."""
    global _segmenter
    with _segmenter_lock:
        if _segmenter is None:
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
    return _SPACE.sub(" ", folded).strip()


def _han_tokens(run: str) -> list[str]:
    words = [word for word in _jieba().lcut(run) if word.strip()]
    if len(run) == 1:
        return [*words, run]
    return words + [run[index : index + 2] for index in range(len(run) - 1)]


def search_tokens(text: str) -> list[str]:
    """Lexical tokens of ``text`` in text order: jieba words and Han bigrams, other words."""
    tokens: list[str] = []
    for match in _RUN.finditer(normalize_search_text(text)):
        han = match.group("han")
        if han is not None:
            tokens.extend(_han_tokens(han))
        else:
            tokens.append(match.group("word"))
    return tokens


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
        tokens.extend(search_tokens(text) * weight)
    return tokens


__all__ = ["normalize_search_text", "search_tokens", "weighted_tokens"]
