"""Reading a JSON object out of a model reply: reasoning, fences and prose around it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.adapters.openai_compat import extract_json_object, strip_reasoning
from stratagate.adapters.openai_models import anchor_cards, check_assessment

_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(st.text(max_size=8), _VALUES, max_size=5).filter(
    lambda obj: "</think>" not in json.dumps(obj, ensure_ascii=False)
)
_PROSE = st.text(alphabet=st.characters(blacklist_characters="{}`<>"), max_size=40)


@pytest.mark.slow
@given(
    obj=_OBJECTS,
    before=_PROSE,
    after=_PROSE,
    thinking=st.none() | _OBJECTS,
    fenced=st.booleans(),
)
def test_the_answer_object_survives_wrapping(
    obj: dict[str, Any], before: str, after: str, thinking: dict[str, Any] | None, fenced: bool
) -> None:
    body = json.dumps(obj, ensure_ascii=False, indent=2 if fenced else None)
    reply = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    if thinking is not None:
        reply = f"<think>draft: {json.dumps(thinking)}</think>{reply}"

    assert extract_json_object(reply) == obj


@pytest.mark.parametrize(
    "reply",
    ["", "no json here", "[1, 2, 3]", '{"a": 1', '<think>{"a": 1} never closed'],
)
def test_a_reply_without_an_object_is_rejected(reply: str) -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object(reply)


def test_reasoning_without_an_opening_tag_is_dropped() -> None:
    assert strip_reasoning('weighing {options}</think> {"a": 1}') == '{"a": 1}'
    assert strip_reasoning('<think>one</think><think>two {"b": 2}</think>{"a": 1}') == '{"a": 1}'


def test_cards_are_bound_to_the_target_block() -> None:
    answer = {"events": [{"id": "evt_x", "source_block_id": "blk_other", "title": "t"}, "junk"]}

    anchored = anchor_cards(answer, "blk_target")

    assert anchored["events"] == [{"source_block_id": "blk_target", "title": "t"}, "junk"]
    assert answer["events"][0]["source_block_id"] == "blk_other"  # the input is not mutated


def test_an_assessment_needs_exactly_five_keys() -> None:
    five = dict.fromkeys(["verdict", "evidence_refs", "fit", "missing", "next_strategy"], "")
    assert check_assessment(five) is five
    with pytest.raises(ValueError, match="missing \\['fit'\\]"):
        check_assessment({k: v for k, v in five.items() if k != "fit"})
    with pytest.raises(ValueError, match="unexpected \\['notes'\\]"):
        check_assessment(five | {"notes": "x"})
