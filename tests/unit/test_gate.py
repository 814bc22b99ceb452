"""The evidence gate: protocol checks on a model's five-field assessment."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.gate import FALLBACK_STRATEGY, MAX_EVIDENCE_REFS, normalize_assessment
from stratagate.errors import InvalidInputError

BATCH = ["evt_1", "evt_2", "evt_3", "fact_9"]


def test_sufficient_with_batch_evidence_and_answer_is_kept() -> None:
    result = normalize_assessment(
        {
            "verdict": " Sufficient ",
            "evidenceRefs": ["evt_2", " fact_9 "],
            "fit": "  The event gives the date.  ",
            "missing": "",
            "nextStrategy": "answer",
        },
        BATCH,
        batch_id="batch_7",
    )
    assert result.verdict == "sufficient"
    assert result.evidence_refs == ["evt_2", "fact_9"]
    assert result.rejected_evidence_refs == []
    assert result.fit == "The event gives the date."
    assert result.next_strategy == "answer"
    assert result.batch_id == "batch_7"


def test_snake_case_keys_win_over_camel_case() -> None:
    result = normalize_assessment(
        {"verdict": "partial", "next_strategy": "expand_event", "nextStrategy": "answer"}, BATCH
    )
    assert result.next_strategy == "expand_event"


@pytest.mark.parametrize(
    ("raw", "verdict", "strategy"),
    [
        ({"verdict": "sufficient", "next_strategy": "answer"}, "partial", FALLBACK_STRATEGY),
        (
            {"verdict": "sufficient", "evidence_refs": ["nope"], "next_strategy": "answer"},
            "partial",
            FALLBACK_STRATEGY,
        ),
        (
            {"verdict": "sufficient", "evidence_refs": ["evt_1"], "next_strategy": "expand_event"},
            "partial",
            "expand_event",
        ),
        ({"verdict": "sufficient", "evidence_refs": ["evt_1"]}, "partial", FALLBACK_STRATEGY),
        ({"verdict": "partial", "next_strategy": "answer"}, "partial", FALLBACK_STRATEGY),
        ({"verdict": "wrong", "next_strategy": "searchElements"}, "wrong", "search_elements"),
        ({"verdict": "maybe", "next_strategy": "Expand-Block"}, "partial", "expand_block"),
        ({"verdict": 3, "next_strategy": "think harder"}, "partial", FALLBACK_STRATEGY),
        ({}, "partial", FALLBACK_STRATEGY),
    ],
)
def test_verdict_and_strategy_downgrades(
    raw: dict[str, object], verdict: str, strategy: str
) -> None:
    result = normalize_assessment(raw, BATCH)
    assert (result.verdict, result.next_strategy) == (verdict, strategy)


def test_rejections_keep_input_order_index_and_reason() -> None:
    refs = [123, "evt_1", "", "evt_1", "evt_404", None, "evt_404", "  "]
    result = normalize_assessment({"verdict": "partial", "evidence_refs": refs}, BATCH)
    assert result.evidence_refs == ["evt_1"]
    assert [(r.input_index, r.ref, r.reason) for r in result.rejected_evidence_refs] == [
        (0, "123", "invalid_ref"),
        (2, "", "invalid_ref"),
        (3, "evt_1", "duplicate"),
        (4, "evt_404", "not_in_batch"),
        (5, "None", "invalid_ref"),
        (6, "evt_404", "duplicate"),
        (7, "  ", "invalid_ref"),
    ]
    assert all(r.detail for r in result.rejected_evidence_refs)


def test_more_than_eight_accepted_refs_exceed_the_limit() -> None:
    batch = [f"evt_{i}" for i in range(12)]
    result = normalize_assessment(
        {"verdict": "sufficient", "evidence_refs": batch, "next_strategy": "answer"}, batch
    )
    assert MAX_EVIDENCE_REFS == 8
    assert result.evidence_refs == batch[:8]
    assert [(r.input_index, r.reason) for r in result.rejected_evidence_refs] == [
        (i, "limit_exceeded") for i in range(8, 12)
    ]
    assert result.verdict == "sufficient"


def test_a_single_string_ref_counts_as_one_ref() -> None:
    result = normalize_assessment({"evidence_refs": "evt_3"}, BATCH)
    assert result.evidence_refs == ["evt_3"]


def test_fit_and_missing_are_bounded_to_160_characters() -> None:
    result = normalize_assessment({"fit": "x" * 500, "missing": ["the date", "the place"]}, BATCH)
    assert len(result.fit) == 160
    assert result.fit.startswith("x" * 150)
    assert result.missing == "the date; the place"


def test_bad_inputs_are_rejected() -> None:
    with pytest.raises(InvalidInputError):
        normalize_assessment(["verdict", "sufficient"], BATCH)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        normalize_assessment({}, "evt_1")


REFS = st.lists(
    st.sampled_from(BATCH) | st.sampled_from(["evt_x", "", " "]) | st.integers() | st.none(),
    max_size=12,
)
RAW = st.fixed_dictionaries(
    {
        "verdict": st.sampled_from(["sufficient", "SUFFICIENT", "partial", "wrong", "?"]),
        "evidence_refs": REFS,
        "next_strategy": st.sampled_from(["answer", "Answer", "expand_block", "bogus"]),
    }
)


@given(RAW, st.lists(st.sampled_from(BATCH), max_size=4))
def test_gate_never_passes_sufficient_without_accepted_batch_refs(
    raw: dict[str, object], batch: list[str]
) -> None:
    result = normalize_assessment(raw, batch)
    refs = raw["evidence_refs"]
    assert len(result.evidence_refs) + len(result.rejected_evidence_refs) == len(refs)  # type: ignore[arg-type]
    assert len(result.evidence_refs) <= MAX_EVIDENCE_REFS
    assert set(result.evidence_refs) <= set(batch)
    if result.verdict == "sufficient":
        assert result.evidence_refs
        assert result.next_strategy == "answer"
    else:
        assert result.next_strategy != "answer"
