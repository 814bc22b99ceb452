"""Input rules decided before anything is appended: turns, card provenance, import documents."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.provenance import card_values, cited_messages, namespace_event_ids
from stratagate.core.turn_input import check_thread_id, turn_messages
from stratagate.errors import InvalidInputError
from stratagate.formats.external_memory import (
    FORMAT,
    candidate,
    check_decision,
    item_hash,
    parse_document,
)
from stratagate.memory import StrataGate
from stratagate.models import EventCard, EventCardInput, EventTemporal, RawMessage
from stratagate.options import MemoryOptions

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def new_id() -> Any:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter)}"


def turn(user: Any, assistant: Any, **kwargs: Any) -> list[RawMessage]:
    options = {
        "at": AT,
        "thread_id": None,
        "user_tool_calls": None,
        "assistant_tool_calls": None,
        "new_id": new_id(),
    }
    return turn_messages(user, assistant, **{**options, **kwargs})


def test_a_turn_is_a_user_and_an_assistant_side() -> None:
    messages = turn("hi", "")
    assert [(m.role, m.content) for m in messages] == [("user", "hi"), ("assistant", "")]
    assert all(m.created_at == AT for m in messages)


def test_sides_may_carry_system_and_tool_messages_and_tool_calls() -> None:
    messages = turn(
        [{"role": "system", "content": "be brief"}, "run the tests"],
        [{"role": "tool", "content": '{"name": "pytest", "result": "3 passed"}'}, "All green."],
        assistant_tool_calls=[{"name": "pytest", "arguments": {"k": "x"}, "result": "3 passed"}],
    )
    assert [m.role for m in messages] == ["system", "user", "tool", "assistant"]
    assert messages[-1].tool_calls[0].name == "pytest"


@pytest.mark.parametrize(
    ("user", "assistant", "match"),
    [
        (None, "x", "None is not a message"),
        ("x", [], "at least one message"),
        ({"role": "assistant", "content": "x"}, "y", "not allowed"),
        ([{"role": "system", "content": "s"}], "y", "needs one user message"),
        ({"content": None}, "y", "content is None"),
        (3, "y", "expected a string"),
    ],
)
def test_bad_turns_are_refused(user: Any, assistant: Any, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        turn(user, assistant)


def test_thread_ids() -> None:
    assert check_thread_id(None) is None and check_thread_id("a") == "a"
    for bad in ("", "  ", 3, "import:x"):
        with pytest.raises(InvalidInputError):
            check_thread_id(bad)


def test_card_provenance_falls_back_to_every_target_message() -> None:
    block = [RawMessage(id=f"m{i}", role="user", content="x", created_at=AT) for i in range(3)]
    assert cited_messages(["m1", "zz", "m1"], block, strict=False) == ["m1"]
    assert cited_messages(["zz"], block, strict=False) == ["m0", "m1", "m2"]
    with pytest.raises(InvalidInputError, match="zz"):
        cited_messages(["m1", "zz"], block, strict=True)


def test_card_values_set_mention_time_weight_floor_and_source() -> None:
    block = [RawMessage(id="m0", role="user", content="x", created_at=AT)]
    proposal = EventCardInput(
        title="t", summary="s", source_block_id="elsewhere", criticality="identity"
    )
    values = card_values(
        proposal,
        block_id="blk",
        block_messages=block,
        existing_ids=set(),
        at=AT,
        turn=7,
        new_id=new_id(),
        strict=False,
    )
    card = EventCard.model_validate(values)
    assert card.source_block_id == "blk"
    assert card.temporal.mentioned_at == "2026-03-02T09:00:00.000000Z"
    assert card.weight.last_adopted_turn == 7 and card.weight.floor_weight == 0.9


def test_options_are_validated() -> None:
    for bad in (
        {"block_turn_size": 0},
        {"block_decay_lambda": -1.0},
        {"runtime": "threads"},
        {"extractor": "gpt"},
        {"colour": "red"},
    ):
        with pytest.raises(InvalidInputError):
            MemoryOptions.from_kwargs(**bad)


def doc(**changes: Any) -> dict[str, Any]:
    return {"format": FORMAT, "source": "other ai", "items": [{"text": "Prefers tea."}], **changes}


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (doc(format="stratagate.external-memory.v1"), "format must be"),
        (doc(items=[]), "items"),
        (doc(items=[{"text": "   "}]), "blank"),
        (doc(items=[{"kind": "fact"}]), "text"),
        (doc(items=[{"text": "x", "time": {"start": "last week"}}]), "ISO-8601"),
        (doc(source=""), "source"),
        (doc(extra=1), "extra"),
    ],
)
def test_malformed_documents_name_their_problem(document: Any, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        parse_document(document)


def test_items_keep_unknown_dates_unknown_and_hash_by_content() -> None:
    parsed = parse_document(
        doc(
            items=[
                {
                    "text": " Prefers  TEA. ",
                    "kind": "preference",
                    "time": {"original_text": "a while ago"},
                }
            ]
        )
    )
    item = parsed.items[0]
    proposal = candidate(item, block_id="blk", message_id="m1")
    temporal = proposal.temporal
    assert (temporal.happened_start, temporal.happened_end, temporal.basis) == (
        None,
        None,
        "unknown",
    )
    assert temporal.original_text == "a while ago" and proposal.criticality == "preference"
    same = parse_document(
        doc(
            items=[
                {
                    "text": "prefers tea.",
                    "kind": "Preference",
                    "time": {"original_text": "a while ago"},
                }
            ]
        )
    )
    assert item_hash(item) == item_hash(same.items[0])
    dated = candidate(
        parse_document(doc(items=[{"text": "x", "time": {"start": "2025-03"}}])).items[0],
        block_id="b",
        message_id="m",
    )
    assert (dated.temporal.precision, dated.temporal.basis) == ("month", "explicit")


def test_decisions_must_target_a_shown_match() -> None:
    match = EventCard(
        id="evt_1", title="t", summary="s", source_block_id="b", created_at=AT, updated_at=AT
    )
    assert (
        check_decision({"action": "merge", "target_event_id": "evt_1"}, [match]).action == "merge"
    )
    assert check_decision({"action": "add"}, []).action == "add"
    with pytest.raises(InvalidInputError, match="not one of the matches"):
        check_decision({"action": "supersede", "target_event_id": "evt_2"}, [match])
    with pytest.raises(InvalidInputError):
        check_decision({"action": "delete"}, [match])


@pytest.mark.parametrize(
    "search", ["search_events", "search_elements", "search_raw_memory", "recall_context"]
)
@pytest.mark.parametrize("query", ["\udcff", "ok \ud800 then", "x" * 4001])
def test_a_query_that_is_not_text_or_too_long_is_an_input_error(search: str, query: str) -> None:
    with StrataGate.in_memory() as memory:
        revision = memory.revision
        with pytest.raises(InvalidInputError, match="query"):
            getattr(memory, search)(query)
        assert memory.revision == revision


@given(
    labels=st.lists(
        st.one_of(st.none(), st.sampled_from(["blk_1-e1", "blk_1-e2", "mine", "evt_kept"])),
        min_size=1,
        max_size=6,
        unique_by=lambda label: label or object(),
    ),
    data=st.data(),
)
def test_model_ids_become_event_ids_and_their_links_follow(labels: list[Any], data: Any) -> None:
    known = [label for label in labels if label is not None]
    proposals = [
        EventCardInput(
            id=label,
            title="t",
            summary="s",
            source_block_id="blk_1",
            source_message_ids=["m"],
            temporal=EventTemporal(
                supersedes_event_ids=data.draw(st.lists(st.sampled_from(known), max_size=2))
                if known
                else []
            ),
        )
        for label in labels
    ]
    counter = iter(range(100))
    out = namespace_event_ids(proposals, lambda: f"evt_new{next(counter)}")
    renamed = {p.id: o.id for p, o in zip(proposals, out, strict=True) if p.id is not None}
    assert all(o.id is None or o.id.startswith("evt_") for o in out)
    assert renamed.get("evt_kept", "evt_kept") == "evt_kept"
    assert len(set(renamed.values())) == len(renamed)
    for before, after in zip(proposals, out, strict=True):
        assert before.temporal is not None and after.temporal is not None
        assert after.temporal.supersedes_event_ids == [
            renamed.get(i, i) for i in before.temporal.supersedes_event_ids
        ]
