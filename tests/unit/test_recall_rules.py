"""The recall blend: relevance decides, weight orders near-equals, current cards come first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stratagate.read.recall import WEIGHT_FLOOR, blended_score, rank_candidates, spread_sources
from stratagate.results import RecallEntry

relevances = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
weights = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def entry(i: int, relevance: float, weight: float) -> RecallEntry:
    return RecallEntry(
        kind="event", id=f"e{i}", text=f"event {i}", tokens=0, relevance=relevance, weight=weight
    )


candidates = st.lists(st.tuples(relevances, weights), min_size=1, max_size=12).map(
    lambda pairs: [entry(i, r, w) for i, (r, w) in enumerate(pairs)]
)


@given(relevances, weights, weights)
def test_weight_takes_away_at_most_the_floor_and_more_weight_never_hurts(
    relevance: float, low: float, high: float
) -> None:
    low, high = sorted((low, high))
    assert WEIGHT_FLOOR * relevance <= blended_score(relevance, low) <= relevance
    assert blended_score(relevance, low) <= blended_score(relevance, high)


@given(candidates)
def test_a_clearly_more_relevant_entry_is_never_ranked_below_a_weightier_one(
    entries: list[RecallEntry],
) -> None:
    ranked = rank_candidates(entries, {})
    place = {e.id: i for i, e in enumerate(ranked)}
    for a in entries:
        for b in entries:
            if a.relevance * WEIGHT_FLOOR > b.relevance:
                assert place[a.id] < place[b.id]
    assert sorted(place) == sorted(e.id for e in entries)


@given(candidates, st.data())
def test_the_current_card_inherits_relevance_and_comes_before_the_one_it_replaces(
    entries: list[RecallEntry], data: st.DataObject
) -> None:
    if len(entries) < 2:
        return
    old, new = data.draw(
        st.lists(st.sampled_from(entries), min_size=2, max_size=2, unique_by=lambda e: e.id)
    )
    ranked = rank_candidates(entries, {old.id: new.id})
    ids = [e.id for e in ranked]
    assert ids.index(new.id) < ids.index(old.id)
    shown = {e.id: e for e in ranked}
    assert shown[new.id].relevance == max(old.relevance, new.relevance)
    assert (shown[old.id].superseded_by, shown[new.id].replaces) == (new.id, [old.id])


def test_a_decayed_best_match_beats_a_fresh_match_of_half_its_relevance() -> None:
    best, fresh = entry(1, 0.0328, 3.6e-13), entry(2, 0.0164, 1.0)
    assert [e.id for e in rank_candidates([fresh, best], {})] == ["e1", "e2"]
    near = entry(3, 0.0325, 0.30)  # within the floor of the best: weight decides
    assert [e.id for e in rank_candidates([best, near], {})] == ["e3", "e1"]


def test_sentences_of_a_message_already_shown_wait_behind_other_messages() -> None:
    ranked = [entry(1, 0.9, 1.0), entry(2, 0.8, 1.0), entry(3, 0.7, 1.0), entry(4, 0.6, 1.0)]
    sources = {"e1": ["m1"], "e2": ["m1"], "e3": ["m2"], "e4": []}
    assert [e.id for e in spread_sources(ranked, sources)] == ["e1", "e3", "e4", "e2"]
    current = ranked[1].model_copy(update={"replaces": ["e9"]})  # a current card keeps its place
    assert [e.id for e in spread_sources([ranked[0], current], sources)] == ["e1", "e2"]


def _is_spread(spread: list[RecallEntry], sources: dict[str, list[str]], k: int) -> bool:
    """The first ``k`` each add a new source (or have none); the rest only repeat them."""
    seen: set[str] = set()
    for e in spread[:k]:
        cited = set(sources.get(e.id, ()))
        if cited and cited <= seen:
            return False
        seen |= cited
    return all(set(sources.get(e.id, ())) <= seen and sources.get(e.id) for e in spread[k:])


@given(candidates, st.lists(st.sets(st.sampled_from("abcd"), max_size=2), max_size=12))
def test_spreading_sources_only_moves_repeats_back_in_order(
    entries: list[RecallEntry], cited: list[set[str]]
) -> None:
    sources = {e.id: sorted(c) for e, c in zip(entries, cited, strict=False)}
    spread = spread_sources(entries, sources)
    assert sorted(e.id for e in spread) == sorted(e.id for e in entries)
    order = {e.id: i for i, e in enumerate(entries)}
    splits = [
        k
        for k in range(len(spread) + 1)
        if _is_spread(spread, sources, k)
        and [order[e.id] for e in spread[:k]] == sorted(order[e.id] for e in spread[:k])
        and [order[e.id] for e in spread[k:]] == sorted(order[e.id] for e in spread[k:])
    ]
    assert splits
