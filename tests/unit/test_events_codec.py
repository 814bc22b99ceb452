"""Every domain event round-trips through the canonical encoding; old versions upcast on read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.facts import FactAdded, NewElement, ProjectionPlan
from stratagate.errors import StorageError
from stratagate.events import EVENT_TYPES, DomainEvent, decode_payload, encode
from stratagate.events.codec import UPCASTERS, canonical_json
from stratagate.models import (
    BlockSummary,
    ElementFact,
    EventCard,
    RawMessage,
    RetrievalAssessment,
    UsageReceipt,
)

AT = datetime(2026, 3, 2, 9, 30, 15, 123456, tzinfo=UTC)


def message(content: str = "hello", msg_id: str = "msg_1") -> RawMessage:
    return RawMessage(id=msg_id, role="user", content=content, created_at=AT, name="Lin")


def card(title: str = "decision") -> EventCard:
    return EventCard(
        id="evt_1",
        title=title,
        summary="we chose pnpm",
        source_block_id="blk_1",
        source_message_ids=["msg_1"],
        created_at=AT,
        updated_at=AT,
    )


def examples(text: str) -> dict[str, dict[str, Any]]:
    """Field values for one instance of every event type (text varies under hypothesis)."""
    summary = BlockSummary(l0_title=text or "t", l1_summary=text, l2_keypoints=[text])
    fact = ElementFact(
        id="fact_1",
        key="uses",
        mode="state",
        value=text,
        source_event_ids=["evt_1"],
        created_at=AT,
        updated_at=AT,
    )
    plan = ProjectionPlan(
        elements_created=[NewElement(id="elem_1", name="app", type="project")],
        facts_added=[FactAdded(element_id="elem_1", fact=fact)],
    )
    assessment = RetrievalAssessment(verdict="partial", fit=text, next_strategy="search_raw_memory")
    return {
        "TurnAppended": {
            "turn": 1,
            "thread_id": None,
            "thread_turn": 1,
            "messages": [message(text)],
        },
        "SealStarted": {"thread_id": "t", "start_turn": 1, "end_turn": 2, "attempt": 1},
        "BlockSealed": {
            "block_id": "blk_1",
            "thread_id": None,
            "position": 1,
            "start_turn": 1,
            "end_turn": 2,
            "summary": summary,
            "summarizer": "offline",
            "l3_condensed": text,
            "l4_readable": text,
            "l5_raw": [message(text)],
        },
        "SealFailed": {"thread_id": None, "start_turn": 1, "end_turn": 2, "error": text},
        "BlockLifted": {"block_id": "blk_1", "level": 3, "anchor_position": 4, "source": "user"},
        "SettingsChanged": {"block_turn_size": 12, "block_decay_lambda": 0.3},
        "ExtractionStarted": {"block_id": "blk_1", "attempt": 1},
        "ExtractionSucceeded": {"block_id": "blk_1", "reason": text, "events": [card(text or "x")]},
        "ExtractionSkipped": {"block_id": "blk_1", "reason": text},
        "ExtractionFailed": {"block_id": "blk_1", "error": text},
        "ExtractionInterrupted": {"block_id": "blk_1"},
        "EventAdded": {"event": card(text or "x"), "origin": "manual"},
        "EventSuperseded": {"event_id": "evt_1", "superseded_by": "evt_2"},
        "ExternalImportRecorded": {
            "batch_id": "import_1",
            "format": "stratagate.external-memory.v2",
            "source": text,
            "block_id": "blk_9",
            "messages": [message(text or "x")],
            "summary": summary,
            "l3_condensed": text,
            "l4_readable": text,
            "item_hashes": ["ab" * 32],
        },
        "EventMerged": {
            "event_id": "evt_1",
            "source_message_id": "msg_1",
            "import_batch_id": "import_1",
        },
        "ExternalImportUndone": {"batch_id": "import_1"},
        "ProjectionQueued": {"job_id": "proj_1", "source_event_ids": ["evt_1"]},
        "ProjectionClaimed": {"job_id": "proj_1", "attempt": 1},
        "ProjectionCompleted": {"job_id": "proj_1", "reason": text, "plan": plan},
        "ProjectionFailed": {"job_id": "proj_1", "error": text},
        "ProjectionInterrupted": {"job_id": "proj_1"},
        "RetrievalBatchRecorded": {
            "batch_id": "batch_1",
            "kind": "events",
            "query": text,
            "options": {"limit": 6},
            "refs": ["evt_1"],
            "event_ids": ["evt_1"],
        },
        "AssessmentRecorded": {
            "assessment_id": "a_1",
            "batch_id": "batch_1",
            "assessment": assessment,
        },
        "MemoryUseRecorded": {"receipt": UsageReceipt(id="r1", event_ids=["evt_1"], created_at=AT)},
        "EventPinned": {"event_id": "evt_1"},
        "EventUnpinned": {"event_id": "evt_1"},
        "EventForgotten": {"event_id": "evt_1"},
        "EventRestored": {"event_id": "evt_1"},
        "EventArchived": {"event_id": "evt_1"},
    }


def build(name: str, text: str = "hello") -> DomainEvent:
    return EVENT_TYPES[name](**examples(text)[name], at=AT)


def test_every_event_type_has_an_example() -> None:
    assert set(examples("x")) == set(EVENT_TYPES)


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_round_trip_is_exact(name: str) -> None:
    event = build(name)
    row = encode(event, "cmd:0")
    assert row.event_type == name and row.schema_version == type(event).schema_version
    assert decode_payload(row.event_type, row.schema_version, row.payload) == event
    assert encode(event, "cmd:0").payload == row.payload  # stable text


@given(text=st.text(max_size=40), name=st.sampled_from(sorted(EVENT_TYPES)))
def test_round_trip_of_any_text(text: str, name: str) -> None:
    event = build(name, text)
    row = encode(event, "e")
    assert decode_payload(row.event_type, row.schema_version, row.payload) == event


def test_canonical_text_sorts_keys_and_writes_utc() -> None:
    payload = encode(build("TurnAppended"), "e").payload
    data = orjson.loads(payload)
    assert list(data) == sorted(data)
    assert data["at"] == "2026-03-02T09:30:15.123456Z"
    assert payload == canonical_json(data)


def test_a_v1_block_lifted_row_is_upcast() -> None:
    legacy = '{"anchor_position":3,"at":"2024-05-01T10:00:00Z","block_id":"blk_7","level":4,"type":"BlockLifted"}'
    event = decode_payload("BlockLifted", 1, legacy)
    assert event.source is None and event.level == 4 and event.block_id == "blk_7"
    assert ("BlockLifted", 1) in UPCASTERS


def test_unknown_type_and_future_version_are_refused() -> None:
    with pytest.raises(StorageError, match="unknown event type"):
        decode_payload("Nope", 1, "{}")
    with pytest.raises(StorageError, match="newer"):
        decode_payload("BlockLifted", 3, encode(build("BlockLifted"), "e").payload)
    with pytest.raises(StorageError, match="does not validate"):
        decode_payload("EventPinned", 1, '{"type":"EventPinned","at":"2026-01-01T00:00:00Z"}')
