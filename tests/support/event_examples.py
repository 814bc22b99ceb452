"""One example of every domain event type (fields built from the API models, as roles do).

Used by the codec tests and by ``tests/fixtures/freeze_events.py``, which writes the frozen
payload fixtures once.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from stratagate.core.facts import FactAdded, NewElement, ProjectionPlan
from stratagate.events import EVENT_TYPES, DomainEvent
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
        "SealStarted": {
            "thread_id": "t",
            "start_turn": 1,
            "end_turn": 2,
            "attempt": 1,
            "worker": "host:1:2",
        },
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
        },
        "SealFailed": {"thread_id": None, "start_turn": 1, "end_turn": 2, "error": text},
        "BlockLifted": {"block_id": "blk_1", "level": 3, "anchor_position": 4, "source": "user"},
        "SettingsChanged": {"block_turn_size": 12, "block_decay_lambda": 0.3},
        "ExtractionStarted": {"block_id": "blk_1", "attempt": 1, "worker": "host:1:2"},
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
        "ProjectionClaimed": {"job_id": "proj_1", "attempt": 1, "worker": "host:1:2"},
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
        "LogCheckpointed": {"position": 7, "head_hash": "a" * 64, "seal": "b" * 64},
        "EventUnpinned": {"event_id": "evt_1"},
        "EventForgotten": {"event_id": "evt_1"},
        "EventRestored": {"event_id": "evt_1"},
        "EventArchived": {"event_id": "evt_1"},
        "ThreadErased": {
            "thread_id": "t1",
            "reason": "request 42",
            "by": "ops@host pid 7",
            "keys": ["thread:t1@1", "event:evt_1@1"],
        },
        "EventErased": {
            "event_id": "evt_1",
            "reason": "request 43",
            "by": "ops@host pid 7",
            "keys": ["event:evt_1@1"],
        },
        "NamespaceErased": {"reason": "tenant left", "by": "ops@host pid 7", "keys": []},
    }


def plain(value: Any) -> Any:
    """API models as the plain data a stored payload holds (what the roles convert)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def build(name: str, text: str = "hello") -> DomainEvent:
    fields = {key: plain(value) for key, value in examples(text)[name].items()}
    return EVENT_TYPES[name].model_validate({**fields, "at": AT})
