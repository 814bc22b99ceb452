"""Ranking: BM25 over lexical tokens and reciprocal-rank fusion of independent rankings.

``bm25_idf`` and ``bm25_term_score`` are the one BM25 arithmetic: ``bm25_rank`` scores with
them, and so must any index that scores incrementally, so both give identical scores.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from stratagate.core.search_text import search_tokens, weighted_tokens
from stratagate.errors import InvalidInputError

T = TypeVar("T")

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_RRF_K = 60

Document = str | Sequence[tuple[str, int]]
"""What a ranked item offers BM25: one text, or ``(text, weight)`` fields."""


@dataclass(frozen=True, slots=True)
class RankedHit(Generic[T]):
    """One ranked item and its score (higher is better)."""

    item: T
    score: float


def item_id(item: object) -> str:
    """The ``id`` of an item: a string is its own id; else its ``id`` attribute, or its ``"id"``
    key for a mapping."""
    if isinstance(item, str):
        return item
    value = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
    if not isinstance(value, str):
        raise InvalidInputError(f"ranked items need a string id, got {value!r}")
    return value


def bm25_idf(df: int, n_docs: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: positive for every ``0 <= df <= N``."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_term_score(
    tf: int,
    df: int,
    n_docs: int,
    doc_len: int,
    avg_len: float,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> float:
    """The BM25 contribution of one query-token occurrence to one document (0 when ``tf == 0``)."""
    if tf <= 0:
        return 0.0
    return bm25_idf(df, n_docs) * bm25_tf_part(tf, doc_len, avg_len, k1, b)


def bm25_tf_part(
    tf: int, doc_len: int, avg_len: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B
) -> float:
    """The term-frequency factor ``tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen))``.

    Shared with the incremental inverted index, so both compute the same floats.
    """
    norm = k1 * (1 - b + b * doc_len / avg_len)
    return tf * (k1 + 1) / (tf + norm)


def _check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidInputError(f"limit must be None or an int >= 0, got {limit!r}")


def _document_tokens(document: object) -> list[str]:
    if isinstance(document, str):
        return search_tokens(document)
    if isinstance(document, Iterable):
        return weighted_tokens(document)
    raise InvalidInputError(
        f"a document must be a string or (text, weight) pairs, got {type(document).__name__}"
    )


def bm25_rank(
    items: Iterable[T],
    query: str,
    document: Callable[[T], Document],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    limit: int | None = None,
) -> list[RankedHit[T]]:
    """Items with a real match for ``query``, best first (ties by id ascending).

    Every occurrence of a query token contributes (a repeated query word counts twice); the
    average document length is taken over all ``items``.
    """
    _check_limit(limit)
    if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1):
        raise InvalidInputError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}")
    terms = search_tokens(query)
    pool = list(items)
    if not terms or not pool:
        return []
    ids = [item_id(item) for item in pool]
    counts = [Counter(_document_tokens(document(item))) for item in pool]
    lengths = [sum(count.values()) for count in counts]
    avg_len = sum(lengths) / len(pool)
    doc_freq = {term: sum(1 for count in counts if term in count) for term in set(terms)}
    scored: list[tuple[float, str, T]] = []
    for key, item, count, length in zip(ids, pool, counts, lengths, strict=True):
        score = 0.0
        for term in terms:
            score += bm25_term_score(count[term], doc_freq[term], len(pool), length, avg_len, k1, b)
        if score > 0:
            scored.append((score, key, item))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    hits = [RankedHit(item, score) for score, _, item in scored]
    return hits if limit is None else hits[:limit]


def rrf_rank(
    rankings: Iterable[Iterable[T]], k: float = DEFAULT_RRF_K, *, limit: int | None = None
) -> list[RankedHit[T]]:
    """Reciprocal-rank fusion: ``score(id) = sum over lists of 1 / (k + rank)``, rank 1-based.

    An id listed twice in one list counts once, at its best rank. Ties go to the best rank seen
    in any list, then the id. Sums are exact-rounded (``math.fsum``), so the result does not
    depend on the order of ``rankings``; the item returned for an id is the first one seen.
    """
    _check_limit(limit)
    if isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k) or k < 0:
        raise InvalidInputError(f"k must be a finite number >= 0, got {k!r}")
    first_item: dict[str, T] = {}
    parts: dict[str, list[float]] = {}
    best_rank: dict[str, int] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            key = item_id(item)
            if key in seen:
                continue
            seen.add(key)
            first_item.setdefault(key, item)
            parts.setdefault(key, []).append(1 / (k + rank))
            best_rank[key] = min(rank, best_rank.get(key, rank))
    fused = [RankedHit(first_item[key], math.fsum(parts[key])) for key in first_item]
    fused.sort(key=lambda hit: (-hit.score, best_rank[item_id(hit.item)], item_id(hit.item)))
    return fused if limit is None else fused[:limit]


__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "DEFAULT_RRF_K",
    "Document",
    "RankedHit",
    "bm25_idf",
    "bm25_rank",
    "bm25_term_score",
    "item_id",
    "rrf_rank",
]
