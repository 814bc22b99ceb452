"""BM25 (checked against a rank-bm25 oracle) and reciprocal-rank fusion."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from stratagate.core.ranking import (
    RankedHit,
    bm25_idf,
    bm25_rank,
    bm25_term_score,
    item_id,
    rrf_rank,
)
from stratagate.core.search_text import search_tokens, weighted_tokens
from stratagate.errors import InvalidInputError


@dataclass(frozen=True)
class Doc:
    id: str
    text: str


def text_of(doc: Doc) -> str:
    return doc.text


class SpecBM25(BM25Okapi):
    """rank-bm25's Okapi scorer with the spec's idf, ln(1 + (N - df + 0.5) / (df + 0.5))."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def test_idf_and_term_score_arithmetic() -> None:
    assert bm25_idf(1, 3) == pytest.approx(math.log(1 + 2.5 / 1.5))
    assert bm25_idf(3, 3) > 0
    assert bm25_term_score(0, 1, 3, 5, 5.0) == 0.0
    expected = bm25_idf(1, 3) * (2 * 2.2) / (2 + 1.2 * (1 - 0.75 + 0.75 * 10 / 5))
    assert bm25_term_score(2, 1, 3, 10, 5.0) == pytest.approx(expected)


def test_bm25_returns_only_real_matches_best_first() -> None:
    docs = [
        Doc("e1", "We switched the project from npm to pnpm."),
        Doc("e2", "Caroline gave a speech at school."),
        Doc("e3", "pnpm pnpm pnpm: installs are fast with pnpm."),
    ]
    hits = bm25_rank(docs, "why pnpm?", text_of)
    assert [hit.item.id for hit in hits] == ["e3", "e1"]
    assert all(hit.score > 0 for hit in hits)
    assert hits[0].score > hits[1].score
    assert bm25_rank(docs, "quantum", text_of) == []


def test_empty_or_tokenless_query_returns_nothing() -> None:
    docs = [Doc("a", "anything at all")]
    assert bm25_rank(docs, "", text_of) == []
    assert bm25_rank(docs, "?! ，。", text_of) == []
    assert bm25_rank([], "anything", text_of) == []


def test_ties_go_to_the_smaller_id_and_limit_cuts() -> None:
    docs = [Doc("b", "same words"), Doc("c", "same words"), Doc("a", "same words")]
    hits = bm25_rank(docs, "words", text_of)
    assert [hit.item.id for hit in hits] == ["a", "b", "c"]
    assert [hit.item.id for hit in bm25_rank(docs, "words", text_of, limit=2)] == ["a", "b"]
    with pytest.raises(InvalidInputError):
        bm25_rank(docs, "words", text_of, limit=-1)


def test_every_query_token_occurrence_counts() -> None:
    docs = [Doc("a", "pnpm install"), Doc("b", "npm install")]
    once = bm25_rank(docs, "pnpm", text_of)[0].score
    twice = bm25_rank(docs, "pnpm PNPM", text_of)[0].score
    assert twice == pytest.approx(2 * once)


def test_field_weights_and_dict_items() -> None:
    items = [
        {"id": "x", "title": "speech", "body": "school"},
        {"id": "y", "title": "school", "body": "speech"},
    ]
    hits = bm25_rank(items, "speech", lambda item: [(item["title"], 3), (item["body"], 1)])
    assert [hit.item["id"] for hit in hits] == ["x", "y"]


def test_chinese_query_matches_through_bigrams() -> None:
    docs = [Doc("zh", "卡洛琳上周在学校做了演讲"), Doc("en", "Caroline gave a speech")]
    assert [hit.item.id for hit in bm25_rank(docs, "学校演讲", text_of)] == ["zh"]


def test_items_need_a_string_id() -> None:
    assert item_id({"id": "k"}) == "k"
    assert item_id(Doc("d", "")) == "d"
    with pytest.raises(InvalidInputError):
        item_id({"name": "no id"})
    with pytest.raises(InvalidInputError):
        bm25_rank([{"id": 3, "t": "a"}], "a", lambda item: item["t"])


WORDS = st.sampled_from(
    ["pnpm", "npm", "school", "speech", "caroline", "2023", "学校", "演讲", "卡洛琳", "上周", "的"]
)
DOC_TEXT = st.lists(WORDS, max_size=8).map(" ".join)
QUERY = st.lists(WORDS | st.sampled_from(["missing", "没有"]), min_size=1, max_size=5).map(" ".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(DOC_TEXT, DOC_TEXT), min_size=1, max_size=8).filter(
        lambda fields: any(a or b for a, b in fields)
    ),
    QUERY,
)
def test_bm25_scores_equal_the_rank_bm25_oracle(fields: list[tuple[str, str]], query: str) -> None:
    items = [{"id": f"d{index:02}", "title": a, "body": b} for index, (a, b) in enumerate(fields)]

    def document(item: dict[str, str]) -> list[tuple[str, int]]:
        return [(item["title"], 2), (item["body"], 1)]

    oracle = SpecBM25([weighted_tokens(document(item)) for item in items], k1=1.2, b=0.75)
    expected = oracle.get_scores(search_tokens(query))
    got = {hit.item["id"]: hit.score for hit in bm25_rank(items, query, document)}
    for item, want in zip(items, expected, strict=True):
        assert math.isclose(got.get(item["id"], 0.0), want, rel_tol=1e-9, abs_tol=1e-12)
    scores = list(got.values())
    assert scores == sorted(scores, reverse=True)


# --- RRF -----------------------------------------------------------------------------------


def test_rrf_scores_by_reciprocal_rank() -> None:
    a, b, c = Doc("a", ""), Doc("b", ""), Doc("c", "")
    hits = rrf_rank([[a, b], [b, c]])
    assert [hit.item.id for hit in hits] == ["b", "a", "c"]
    assert hits[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert hits[1].score == pytest.approx(1 / 61)
    assert hits[2].score == pytest.approx(1 / 62)
    assert rrf_rank([[a, b]], k=0)[0].score == 1.0


def test_rrf_counts_an_id_once_per_list_at_its_best_rank() -> None:
    a, b = Doc("a", ""), Doc("b", "")
    hits = rrf_rank([[a, b, a]])
    assert {hit.item.id: hit.score for hit in hits} == {"a": 1 / 61, "b": 1 / 62}


def test_rrf_ties_go_to_best_rank_then_id() -> None:
    a, w, z = Doc("a", ""), Doc("w", ""), Doc("z", "")
    # k=0: w and z score 1/1, a scores 1/2 + 1/2; all tie, a has the worst best rank (2).
    hits = rrf_rank([[z, a], [w, a]], k=0)
    assert [(hit.item.id, hit.score) for hit in hits] == [("w", 1.0), ("z", 1.0), ("a", 1.0)]
    b, c, d = Doc("b", ""), Doc("c", ""), Doc("d", "")
    # equal rank multisets (and so equal scores and best ranks): the id decides.
    hits = rrf_rank([[d, b, c, a], [a, c, b, d]])
    assert [hit.item.id for hit in hits] == ["a", "d", "b", "c"]


def test_rrf_keeps_the_first_item_seen_and_limits() -> None:
    first, second = Doc("a", "first"), Doc("a", "second")
    hits = rrf_rank([[first], [Doc("b", ""), second]], limit=1)
    assert hits == [RankedHit(first, pytest.approx(1 / 61 + 1 / 62))]
    assert rrf_rank([]) == []
    with pytest.raises(InvalidInputError):
        rrf_rank([[first]], k=-1)


IDS = st.sampled_from("abcdefghij")
RANKINGS = st.lists(st.lists(IDS, max_size=8), max_size=5)


@pytest.mark.slow
@given(RANKINGS, st.data())
def test_rrf_does_not_depend_on_the_order_of_the_lists(
    rankings: list[list[str]], data: st.DataObject
) -> None:
    as_items = [[{"id": name} for name in ranking] for ranking in rankings]
    shuffled = data.draw(st.permutations(as_items))

    def fused(lists: list[list[dict[str, str]]]) -> list[tuple[str, float]]:
        return [(hit.item["id"], hit.score) for hit in rrf_rank(lists)]

    assert fused(shuffled) == fused(as_items)
