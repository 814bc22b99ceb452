"""The stored shapes that domain events embed: messages, summaries, cards, facts, receipts.

These are the log's own models, copied field by field from the public API models they mirror
(never imported from them), so that editing an API model cannot silently change what is
stored or how old rows decode. A stored shape changes only with a ``schema_version`` bump of
the events embedding it and an upcaster; the frozen payload fixtures under
``tests/fixtures/events`` fail otherwise.

``convert(Target, value)`` turns one shape into the other (stored → API when a read model folds
an event, API → stored when a role builds one): a validation by attributes, so a field the two
sides no longer share fails loudly instead of being dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from stratagate.timeutil import ensure_utc

M = TypeVar("M", bound=BaseModel)

StoredDatetime = Annotated[datetime, AfterValidator(ensure_utc)]
"""An aware UTC instant (naive = UTC), stored as ISO-8601 text with ``Z``."""
StoredRole = Literal["user", "assistant", "system", "tool"]
StoredLevel = Annotated[int, Field(ge=0, le=5)]
StoredLiftSource = Literal["user", "agent"]
StoredEventStatus = Literal["active", "superseded", "forgotten", "archived"]
StoredCriticality = Literal["routine", "preference", "identity", "safety"]
StoredPrecision = Literal["instant", "day", "month", "year", "range", "unknown"]
StoredBasis = Literal["explicit", "relative", "inferred", "unknown"]
StoredTemporalStatus = Literal["occurred", "planned", "cancelled", "ongoing", "unknown"]
StoredElementType = Literal["person", "project", "organization", "tool", "place"]
StoredFactMode = Literal["state", "set", "relation"]
StoredFactStatus = Literal["active", "superseded", "disputed"]
StoredVerdict = Literal["sufficient", "partial", "wrong"]
StoredStrategy = Literal[
    "answer",
    "search_events",
    "expand_event",
    "search_elements",
    "expand_element",
    "search_raw_memory",
    "expand_block",
]
StoredRejectReason = Literal["invalid_ref", "duplicate", "not_in_batch", "limit_exceeded"]


def canonical(value: Any) -> Any:
    """JSON-like data with every mapping's keys in sorted order, as the stored text has them:
    an event built in memory then equals its decoded copy, key order included."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    return value


Canonical = Annotated[Any, AfterValidator(canonical)]
"""Free-form JSON data, kept in canonical key order."""


class Data(BaseModel):
    """Base of the stored shapes: frozen, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolTraceData(Data):
    name: str
    arguments: Annotated[dict[str, Any] | None, AfterValidator(canonical)] = None
    result: Canonical = None


class MessageData(Data):
    """One raw message (L5) as stored."""

    id: str = Field(min_length=1)
    role: StoredRole
    content: str
    created_at: StoredDatetime
    thread_id: str | None = None
    tool_calls: list[ToolTraceData] | None = None
    name: str | None = None


class SummaryData(Data):
    """A block's model-written views (L0–L2) and its extraction decision, as stored."""

    l0_title: str
    l0_tags: list[str] = Field(default_factory=list)
    l1_summary: str
    l2_keypoints: list[str] = Field(default_factory=list)
    should_extract: bool = True


class TemporalData(Data):
    mentioned_at: str | None = None
    happened_start: str | None = None
    happened_end: str | None = None
    original_text: str | None = None
    precision: StoredPrecision | None = None
    basis: StoredBasis | None = None
    status: StoredTemporalStatus | None = None
    participants: list[str] = Field(default_factory=list)
    event_type: str | None = None
    supersedes_event_ids: list[str] = Field(default_factory=list)
    conflicts_with_event_ids: list[str] = Field(default_factory=list)


class WeightData(Data):
    mention_count: int = Field(default=1, ge=1)
    last_adopted_turn: int = Field(default=0, ge=0)
    last_retrieved_at: StoredDatetime | None = None
    pinned: bool = False
    floor_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    forced_cap: float | None = Field(default=None, ge=0.0, le=1.0)


class CardData(Data):
    """An event card as stored when it was created."""

    id: str
    title: str = Field(min_length=1)
    summary: str
    narrative: str | None = None
    tags: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)
    source_block_id: str = Field(min_length=1)
    source_message_ids: list[str] = Field(default_factory=list)
    temporal: TemporalData | None = None
    scope: str = "user"
    criticality: StoredCriticality = "routine"
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    status: StoredEventStatus = "active"
    superseded_by: str | None = None
    weight: WeightData = Field(default_factory=WeightData)
    created_at: StoredDatetime
    updated_at: StoredDatetime


class RejectedRefData(Data):
    input_index: int
    ref: str
    reason: StoredRejectReason
    detail: str


class AssessmentData(Data):
    """A normalised evidence-gate assessment as stored."""

    verdict: StoredVerdict
    evidence_refs: list[str] = Field(default_factory=list)
    rejected_evidence_refs: list[RejectedRefData] = Field(default_factory=list)
    fit: str = ""
    missing: str = ""
    next_strategy: StoredStrategy
    batch_id: str | None = None


class AuditData(Data):
    session_id: str | None = None
    turn: int | None = None
    batch_id: str | None = None
    assessment: AssessmentData | None = None
    evidence_refs: list[str] = Field(default_factory=list)


class ReceiptData(Data):
    """A usage receipt as stored."""

    id: str
    event_ids: list[str] = Field(default_factory=list)
    element_ids: list[str] = Field(default_factory=list)
    audit: AuditData | None = None
    reinforced_event_ids: list[str] = Field(default_factory=list)
    reinforced_element_ids: list[str] = Field(default_factory=list)
    turn: int = 0
    created_at: StoredDatetime


class FactData(Data):
    """One element fact with its validity interval, as stored."""

    id: str
    key: str
    mode: StoredFactMode
    value: str | list[str]
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    source_event_ids: list[str]
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    status: StoredFactStatus = "active"
    created_at: StoredDatetime
    updated_at: StoredDatetime


class NewElementData(Data):
    id: str
    name: str
    type: StoredElementType
    aliases: list[str] = Field(default_factory=list)


class AliasAddedData(Data):
    element_id: str
    alias: str


class FactAddedData(Data):
    element_id: str
    fact: FactData


class FactClosedData(Data):
    element_id: str
    fact_id: str
    valid_to: StoredDatetime | None
    replaced_by: str


class DroppedChangeData(Data):
    index: int
    reason: str
    element_name: str
    key: str


class PlanData(Data):
    """What one completed projection applied, in order, as stored."""

    elements_created: list[NewElementData] = Field(default_factory=list)
    aliases_added: list[AliasAddedData] = Field(default_factory=list)
    facts_closed: list[FactClosedData] = Field(default_factory=list)
    facts_added: list[FactAddedData] = Field(default_factory=list)
    dropped: list[DroppedChangeData] = Field(default_factory=list)


def convert(target: type[M], value: object) -> M:
    """``value`` (a model of the same fields) as ``target``, validated by attributes."""
    return target.model_validate(value, from_attributes=True)


def convert_all(target: type[M], values: Iterable[object]) -> list[M]:
    """Each of ``values`` as ``target``."""
    return [target.model_validate(value, from_attributes=True) for value in values]


__all__ = [
    "AliasAddedData",
    "AssessmentData",
    "AuditData",
    "CardData",
    "Data",
    "DroppedChangeData",
    "FactAddedData",
    "FactClosedData",
    "FactData",
    "MessageData",
    "NewElementData",
    "PlanData",
    "ReceiptData",
    "RejectedRefData",
    "SummaryData",
    "TemporalData",
    "ToolTraceData",
    "WeightData",
    "convert",
    "convert_all",
]
