"""Search index rules: the incremental index equals ``bm25_rank``, and the ranking rules on top."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.inverted import InvertedIndex
from stratagate.core.ranking import bm25_rank
from stratagate.core.search_text import (
    normalize_search_text,
    query_tokens,
    search_tokens,
    weighted_tokens,
)

LATIN = ["pottery", "class", "classes", "painted", "painting", "camp", "camping", "the", "a", "is"]
HAN = ["我们", "今天", "北京", "吃饭", "学习", "画画", "露营", "猫", "的"]


@dataclass(frozen=True)
class Doc:
    id: str
    fields: tuple[tuple[str, int], ...]


def _text(words: list[str]) -> str:
    return " ".join(words)


WORDS = st.sampled_from(LATIN + HAN + ["Caroline's", "2023", "Straße"])
TEXTS = st.lists(WORDS, max_size=12).map(_text)
FIELDS = st.lists(st.tuples(TEXTS, st.integers(min_value=0, max_value=4)), min_size=1, max_size=3)


@settings(max_examples=80, deadline=None)
@given(corpus=st.lists(FIELDS, min_size=1, max_size=8), query=TEXTS)
def test_inverted_index_scores_equal_bm25_rank(
    corpus: list[list[tuple[str, int]]], query: str
) -> None:
    docs = [Doc(f"d{i}", tuple(fields)) for i, fields in enumerate(corpus)]
    index = InvertedIndex()
    for doc in docs:
        index.add(doc.id, weighted_tokens(doc.fields))
    expected = {hit.item.id: hit.score for hit in bm25_rank(docs, query, lambda d: d.fields)}
    assert index.scores(search_tokens(query)) == expected


@settings(max_examples=80, deadline=None)
@given(
    corpus=st.lists(TEXTS, min_size=1, max_size=12),
    query=TEXTS,
    depth=st.integers(min_value=1, max_value=6),
    odd_only=st.booleans(),
)
def test_ranked_is_the_top_of_the_matches_it_keeps(
    corpus: list[str], query: str, depth: int, odd_only: bool
) -> None:
    index = InvertedIndex()
    for i, text in enumerate(corpus):
        index.add(f"d{i:02d}", search_tokens(text))
    tokens = search_tokens(query)
    keep = (lambda doc_id: int(doc_id[1:]) % 2 == 1) if odd_only else None
    best, score_of = index.ranked(tokens, keep, depth)
    everything = index.top(tokens)
    kept = [(d, s) for d, s in everything if keep is None or keep(d)]
    assert best == kept[:depth]  # the same scores, ties by id, whatever the cut-off
    scores = index.scores(tokens)
    assert all(score_of(f"d{i:02d}") == scores.get(f"d{i:02d}", 0.0) for i in range(len(corpus)))


@settings(max_examples=40, deadline=None)
@given(
    corpus=st.lists(TEXTS, min_size=2, max_size=8),
    replaced=st.data(),
    query=TEXTS,
)
def test_replacing_and_removing_documents_leaves_a_fresh_index(
    corpus: list[str], replaced: st.DataObject, query: str
) -> None:
    index = InvertedIndex()
    for i, text in enumerate(corpus):
        index.add(f"d{i}", search_tokens(text))
    victim = replaced.draw(st.integers(min_value=0, max_value=len(corpus) - 1))
    new_text = replaced.draw(TEXTS)
    index.add(f"d{victim}", search_tokens(new_text))
    index.remove("d0")
    fresh = InvertedIndex()
    for i, text in enumerate(corpus):
        if i != 0:
            fresh.add(f"d{i}", search_tokens(new_text if i == victim else text))
    assert index.scores(search_tokens(query)) == fresh.scores(search_tokens(query))
    assert index.total_length == fresh.total_length
    restored = InvertedIndex.restore(index.snapshot())
    assert restored.snapshot() == index.snapshot()
    assert restored.scores(search_tokens(query)) == index.scores(search_tokens(query))


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(TEXTS, max_size=8),
    changes=st.lists(st.tuples(st.integers(min_value=0, max_value=9), TEXTS | st.none())),
    query=TEXTS,
)
def test_postings_restored_on_first_read_take_the_changes_made_before(
    corpus: list[str], changes: list[tuple[int, str | None]], query: str
) -> None:
    """Adds, replacements and removals folded before a restored index's postings are read
    leave it as the index restored at once and changed the same way."""
    index = InvertedIndex()
    for i, text in enumerate(corpus):
        index.add(f"d{i}", search_tokens(text))
    documents, postings = index.snapshot_parts()
    read: list[bool] = []

    def stored() -> dict[str, object]:
        read.append(True)
        return postings

    waiting = InvertedIndex.restore(documents, postings=stored)
    at_once = InvertedIndex.restore(index.snapshot())
    for n, text in changes:
        for changed in (waiting, at_once):
            if text is None:
                changed.remove(f"d{n}")
            else:
                changed.add(f"d{n}", search_tokens(text))
        assert len(waiting) == len(at_once) and waiting.total_length == at_once.total_length
    assert not read  # nothing above read the postings
    assert waiting.snapshot() == at_once.snapshot()
    assert read == [True]
    assert waiting.scores(search_tokens(query)) == at_once.scores(search_tokens(query))


def test_query_tokens_drop_stop_words_by_their_unstemmed_form() -> None:
    assert query_tokens("When did Melanie paint a sunrise?") == ["melani", "paint", "sunris"]
    assert query_tokens("Does Caroline's dog like it?") == ["carolin", "dog", "lik"]
    assert query_tokens("我们 and the 北京") == search_tokens("我们 北京")


def test_a_query_of_stop_words_only_keeps_them_all() -> None:
    assert query_tokens("What is it?") == search_tokens("What is it?") == ["what", "is", "it"]
    assert query_tokens("") == []


def test_query_phrases_cover_names_with_punctuation_and_han() -> None:
    from projections.search_index import query_phrases

    phrases = query_phrases("When did Dr. Helen Okafor call? 王磊面试")
    assert {
        "dr. helen okafor",
        "helen okafor",
        "okafor",
        "when did dr. helen okafor call",
    } <= phrases
    assert "王磊" in phrases or "王磊面试" in phrases
    assert "" not in phrases


def test_an_event_search_snapshot_from_before_replies_were_indexed_restores() -> None:
    from projections.search_index import EventSearchIndex

    older = EventSearchIndex().snapshot()
    del older["raw_next"]  # event_search v1 snapshots were written without it
    assert EventSearchIndex.restore(older).snapshot() == EventSearchIndex().snapshot()


@given(
    st.text(
        alphabet=st.sampled_from([*"aB ß\t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200b字ﬁ①"]),
        max_size=40,
    )
)
@settings(max_examples=300)
def test_normalized_search_text_equals_its_regex_form(text: str) -> None:
    folded = unicodedata.normalize("NFKC", text).casefold()
    assert normalize_search_text(text) == re.sub(r"\s+", " ", folded).strip()


def test_matched_terms_counts_distinct_query_tokens_of_accepted_documents() -> None:
    index = InvertedIndex(removable=False)
    index.add("a", ["church", "faith", "faith", "sunday"])
    index.add("b", ["church", "choir"])
    index.add("c", ["faith", "church"])
    index.add("d", ["garden"])
    found = index.matched_terms(["church", "faith", "faith", "zebra"], lambda d: d != "c")
    assert found == {"a": 2, "b": 1}  # "c" rejected, "d" matches nothing, "faith" once
    assert index.matched_terms(["zebra"], lambda d: True) == {}
