"""An incremental BM25 inverted index: per-write cost is the document, per-query cost the postings.

Scores use the functional core's ``bm25_idf`` and ``bm25_term_score``, so for the same corpus
they equal ``bm25_rank`` (a property test holds them together). Every query-token occurrence
contributes, as rank-bm25's ``get_scores`` does.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from typing import Any

from stratagate.ranking import bm25_idf, bm25_tf_part


class InvertedIndex:
    """Documents as term counts, postings term → {doc id: tf}, and the running total length."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        self.postings: dict[str, dict[str, int]] = {}
        self.total_length = 0

    def __len__(self) -> int:
        return len(self.docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.docs

    def add(self, doc_id: str, tokens: Iterable[str]) -> None:
        """Index a document (replacing any earlier version of it)."""
        if doc_id in self.docs:
            self.remove(doc_id)
        counts = dict(Counter(tokens))
        self.docs[doc_id] = counts
        length = sum(counts.values())
        self.lengths[doc_id] = length
        self.total_length += length
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[doc_id] = tf

    def remove(self, doc_id: str) -> None:
        """Drop a document; unknown ids are ignored."""
        counts = self.docs.pop(doc_id, None)
        if counts is None:
            return
        self.total_length -= self.lengths.pop(doc_id)
        for term in counts:
            posting = self.postings[term]
            del posting[doc_id]
            if not posting:
                del self.postings[term]

    def scores(
        self, query_tokens: Iterable[str], *, k1: float = 1.2, b: float = 0.75
    ) -> dict[str, float]:
        """BM25 score of every document sharing at least one token with the query."""
        n_docs = len(self.docs)
        if n_docs == 0:
            return {}
        avg_len = self.total_length / n_docs
        scores: dict[str, float] = {}
        for term in query_tokens:
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = bm25_idf(len(posting), n_docs)
            for doc_id, tf in posting.items():
                part = idf * bm25_tf_part(tf, self.lengths[doc_id], avg_len, k1, b)
                scores[doc_id] = scores.get(doc_id, 0.0) + part
        return scores

    def top(self, query_tokens: Iterable[str], limit: int | None = None) -> list[tuple[str, float]]:
        """Matching documents by score descending, ties by id ascending."""
        scored = self.scores(query_tokens)
        key = lambda item: (-item[1], item[0])  # noqa: E731
        if limit is None:
            return sorted(scored.items(), key=key)
        return heapq.nsmallest(limit, scored.items(), key=key)

    def snapshot(self) -> list[list[Any]]:
        """``[doc id, [[term, tf], …]]`` in insertion order."""
        return [[doc_id, sorted(counts.items())] for doc_id, counts in self.docs.items()]

    @classmethod
    def restore(cls, data: Iterable[list[Any]]) -> InvertedIndex:
        """Rebuild postings from a snapshot without re-tokenising anything."""
        index = cls()
        for doc_id, pairs in data:
            index.add(doc_id, (term for term, tf in pairs for _ in range(tf)))
        return index


__all__ = ["InvertedIndex"]
