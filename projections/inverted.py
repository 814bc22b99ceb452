"""An incremental BM25 inverted index: per-write cost is the document, per-query cost the postings.

Scores use the functional core's BM25 (``bm25_idf`` and the term-frequency factor of
``bm25_tf_part``, written out in the loop below with the same operations in the same order), so
for the same corpus they equal ``bm25_rank`` exactly (a property test holds them together).
Every query-token occurrence contributes, as rank-bm25's ``get_scores`` does.

Layout, for memory: documents get consecutive numbers; a posting is a pair of ``array``s (doc
numbers, term frequencies); lengths are an ``array`` indexed by doc number. Only a removable
index remembers each document's distinct terms (to find its postings again); the raw-message
index never removes, so it does not pay for that.

A restored index may take its postings later (``restore``'s ``postings``): documents, numbers
and lengths are there at once, and the adds and removals folded before the postings are first
read wait in order, then are applied to them as they would have been (``_load_postings``).
"""

from __future__ import annotations

import base64
import heapq
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from stratagate.core.ranking import DEFAULT_B, DEFAULT_K1, bm25_idf

REMOVED = -1


class InvertedIndex:
    """Documents by number, postings term → (doc numbers, tfs), and the running total length."""

    def __init__(self, *, removable: bool = True) -> None:
        self.removable = removable
        self._ids: list[str] = []
        self._numbers: dict[str, int] = {}
        self._lengths = array("i")
        self._terms: dict[int, tuple[str, ...]] | None = {}
        """Each document's distinct terms (removable indexes only; ``None`` until needed after a
        restore)."""
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._stored: Callable[[], Mapping[str, Any]] | None = None
        """A restored index's postings, parsed when first read (``postings``)."""
        self._waiting: list[tuple[int, dict[str, int]] | int] = []
        """While the postings are stored: each document added since (its number and counts) or
        removed since (its number), in fold order."""
        self.total_length = 0

    @property
    def postings(self) -> dict[str, tuple[array[int], array[int]]]:
        """Term → (doc numbers, tfs), with every document added or removed so far."""
        self.read_stored()
        return self._postings

    def read_stored(self) -> None:
        """Parse the stored postings now (if any), applying what waits on them."""
        if self._stored is not None:
            self._load_postings()

    def _load_postings(self) -> None:
        """Parse the stored postings, then apply the adds and removals waiting on them."""
        assert self._stored is not None
        self._postings = _postings(self._stored())
        self._stored = None
        waiting, self._waiting = self._waiting, []
        for change in waiting:
            if isinstance(change, int):
                self._unpost(change)
            else:
                self._post(*change)

    def __len__(self) -> int:
        return len(self._numbers)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._numbers

    def doc_ids(self) -> Iterator[str]:
        """Ids of the indexed documents, in the order they were (last) added."""
        return iter(self._numbers)

    def posting_count(self) -> int:
        """How many (term, document) pairs the index holds."""
        return sum(len(docs) for docs, _ in self.postings.values())

    def add(self, doc_id: str, tokens: Iterable[str]) -> None:
        """Index a document (replacing any earlier version of it)."""
        self.add_counts(doc_id, Counter(tokens))

    def add_counts(self, doc_id: str, counts: Mapping[str, int]) -> None:
        """Index a document given as term → frequency (in first-occurrence order)."""
        if doc_id in self._numbers:
            if not self.removable:
                raise ValueError(
                    f"document {doc_id!r} is already indexed and this index never removes"
                )
            self.remove(doc_id)
        number = len(self._ids)
        self._ids.append(doc_id)
        self._numbers[doc_id] = number
        length = sum(counts.values())
        self._lengths.append(length)
        self.total_length += length
        if self._stored is not None:
            self._waiting.append((number, dict(counts)))
        else:
            self._post(number, counts)

    def _post(self, number: int, counts: Mapping[str, int]) -> None:
        """Add document ``number``'s term counts (first-occurrence order) to the postings."""
        postings = self._postings
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None:
                posting = postings[term] = (array("i"), array("i"))
            docs, tfs = posting
            docs.append(number)
            tfs.append(tf)
        if self.removable and self._terms is not None:
            self._terms[number] = tuple(counts)

    def remove(self, doc_id: str) -> None:
        """Drop a document; unknown ids are ignored."""
        number = self._numbers.pop(doc_id, None)
        if number is None:
            return
        if not self.removable:
            raise ValueError("this index never removes documents")
        self.total_length -= self._lengths[number]
        self._lengths[number] = REMOVED
        if self._stored is not None:
            self._waiting.append(number)
        else:
            self._unpost(number)

    def _unpost(self, number: int) -> None:
        """Take document ``number`` out of the postings."""
        if self._terms is None:
            self._terms = self._terms_by_document()
        postings = self._postings
        for term in self._terms.pop(number, ()):  # a document without terms has none
            docs, tfs = postings[term]
            at = docs.index(number)
            del docs[at]
            del tfs[at]
            if not docs:
                del postings[term]

    def _terms_by_document(self) -> dict[int, tuple[str, ...]]:
        found: dict[int, list[str]] = {}
        for term, (docs, _) in self._postings.items():
            for number in docs:
                found.setdefault(number, []).append(term)
        return {number: tuple(terms) for number, terms in found.items()}

    def _scores(self, query_tokens: Iterable[str], k1: float, b: float) -> dict[int, float]:
        n_docs = len(self._numbers)
        if n_docs == 0:
            return {}
        avg_len = self.total_length / n_docs
        lengths = self._lengths
        scores: dict[int, float] = {}
        get = scores.get
        for term in query_tokens:
            posting = self.postings.get(term)
            if not posting:
                continue
            docs, tfs = posting
            idf = bm25_idf(len(docs), n_docs)
            for number, tf in zip(docs, tfs, strict=True):
                # bm25_tf_part(tf, length, avg_len, k1, b), inlined with identical arithmetic
                norm = k1 * (1 - b + b * lengths[number] / avg_len)
                scores[number] = get(number, 0.0) + idf * (tf * (k1 + 1) / (tf + norm))
        return scores

    def scores(
        self, query_tokens: Iterable[str], *, k1: float = DEFAULT_K1, b: float = DEFAULT_B
    ) -> dict[str, float]:
        """BM25 score of every document sharing at least one token with the query."""
        ids = self._ids
        return {ids[number]: score for number, score in self._scores(query_tokens, k1, b).items()}

    def matched_terms(
        self, query_tokens: Iterable[str], within: Callable[[str], bool]
    ) -> dict[str, int]:
        """How many distinct query tokens each document ``within`` accepts holds (documents
        holding none are left out): what share of a question a document speaks to."""
        ids = self._ids
        found: dict[int, int] = {}
        get = found.get
        for term in dict.fromkeys(query_tokens):
            posting = self.postings.get(term)
            if not posting:
                continue
            for number in posting[0]:
                count = get(number)
                if count is None:  # asked once per document; -1 marks a rejected one
                    count = 0 if within(ids[number]) else -1
                found[number] = count + 1 if count >= 0 else count
        return {ids[number]: count for number, count in found.items() if count > 0}

    def top(
        self, query_tokens: Iterable[str], limit: int | None = None, *, newest_first: bool = False
    ) -> list[tuple[str, float]]:
        """Matching documents by score descending (``limit`` of them), ties by id ascending or,
        with ``newest_first``, the latest indexed first."""
        ids = self._ids
        scored = self._scores(query_tokens, DEFAULT_K1, DEFAULT_B).items()
        if newest_first:
            key = lambda item: (-item[1], -item[0])  # noqa: E731
        else:
            key = lambda item: (-item[1], ids[item[0]])  # noqa: E731
        best = sorted(scored, key=key) if limit is None else heapq.nsmallest(limit, scored, key=key)
        return [(ids[number], score) for number, score in best]

    def ranked(
        self, query_tokens: Iterable[str], keep: Callable[[str], bool] | None, depth: int
    ) -> tuple[list[tuple[str, float]], Callable[[str], float]]:
        """The ``depth`` best matching documents ``keep`` accepts (as ``top``: score descending,
        ties by id), and the BM25 score of any document (0.0 when it matches nothing)."""
        ids = self._ids
        scored = self._scores(query_tokens, DEFAULT_K1, DEFAULT_B)
        items = list(scored.items())
        if keep is not None:
            items = [item for item in items if keep(ids[item[0]])]
        if len(items) > depth > 0:  # only what can reach the top ``depth`` is sorted by id
            floor = heapq.nlargest(depth, (score for _, score in items))[-1]
            items = [item for item in items if item[1] >= floor]
        best = sorted(items, key=lambda item: (-item[1], ids[item[0]]))[:depth]
        numbers = self._numbers

        def score_of(doc_id: str) -> float:
            number = numbers.get(doc_id)
            return 0.0 if number is None else scored.get(number, 0.0)

        return [(ids[number], score) for number, score in best], score_of

    def snapshot(self) -> dict[str, Any]:
        """Document ids in order, their lengths, and the postings (terms sorted) as three arrays:
        each term's posting length, then every posting's doc numbers and tfs one after the
        other; numbers count the documents present; arrays are little-endian int32 in base64
        (three decodes restore them all, not two per term)."""
        documents, postings = self.snapshot_parts()
        return {**documents, **postings}

    def snapshot_parts(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``snapshot``'s data as two parts: the documents (``docs``, ``lengths``) and the
        postings (``terms``, ``sizes``, ``postings_docs``, ``postings_tfs``), which a restore
        can take later."""
        numbers = self._numbers.values()
        lengths, compact = self._lengths, None
        if len(self._ids) != len(self._numbers):  # removals left gaps: renumber
            compact = {number: i for i, number in enumerate(numbers)}
            lengths = array("i", (self._lengths[number] for number in numbers))
        postings = self.postings
        terms = sorted(postings)
        sizes, all_docs, all_tfs = array("i"), array("i"), array("i")
        for term in terms:
            docs, tfs = postings[term]
            if compact is not None:
                docs = array("i", (compact[number] for number in docs))
            sizes.append(len(docs))
            all_docs.extend(docs)
            all_tfs.extend(tfs)
        return {"docs": list(self._numbers), "lengths": _encode(lengths)}, {
            "terms": terms,
            "sizes": _encode(sizes),
            "postings_docs": _encode(all_docs),
            "postings_tfs": _encode(all_tfs),
        }

    @classmethod
    def restore(
        cls,
        data: Mapping[str, Any],
        *,
        removable: bool = True,
        postings: Callable[[], Mapping[str, Any]] | None = None,
    ) -> InvertedIndex:
        """Rebuild an index from a snapshot without re-tokenising anything; with ``postings``
        (a call giving ``snapshot_parts``' second part), ``data`` holds the documents only and
        the postings are parsed when first read."""
        index = cls(removable=removable)
        index._ids = list(data["docs"])
        index._numbers = {doc_id: number for number, doc_id in enumerate(index._ids)}
        index._lengths = _decode(data["lengths"])
        index.total_length = sum(index._lengths)
        index._terms = None  # rebuilt on the first removal
        if postings is None:
            index._postings = _postings(data)
        else:
            index._stored = postings
        return index


def _postings(data: Mapping[str, Any]) -> dict[str, tuple[array[int], array[int]]]:
    """Term → (doc numbers, tfs) from ``snapshot_parts``' postings part."""
    all_docs, all_tfs = _decode(data["postings_docs"]), _decode(data["postings_tfs"])
    postings = {}
    start = 0
    for term, size in zip(data["terms"], _decode(data["sizes"]), strict=True):
        end = start + size
        postings[term] = (all_docs[start:end], all_tfs[start:end])
        start = end
    if start != len(all_docs) or len(all_docs) != len(all_tfs):
        raise ValueError("the postings arrays do not match their sizes")
    return postings


def _encode(values: array[int]) -> str:
    if sys.byteorder == "big":
        values = array("i", values)
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def _decode(text: str) -> array[int]:
    values = array("i", base64.b64decode(text))
    if sys.byteorder == "big":
        values.byteswap()
    return values


__all__ = ["InvertedIndex"]
