"""The data models of the public API (pydantic v2), exactly the fields docs/API.md lists.

Models are frozen: what a read returns is a value, not a handle into live state. Inputs accept
the model or a plain ``dict``; ``parse_input`` turns any validation failure into
``InvalidInputError`` with the pydantic error as its cause. Every datetime is aware UTC
(naive input is taken to be UTC).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from stratagate.errors import InvalidInputError
from stratagate.timeutil import ensure_utc, is_iso_time

UtcDatetime = Annotated[datetime, AfterValidator(ensure_utc)]
"""An aware UTC datetime; naive input is taken to be UTC."""


def _check_iso(value: str) -> str:
    text = value.strip()
    if not is_iso_time(text):
        raise ValueError(f"not an ISO-8601 date or timestamp: {value!r}")
    return text


IsoTime = Annotated[str, AfterValidator(_check_iso)]
"""ISO-8601 text; partial dates (``2023``, ``2023-05``, ``2023-05-07``) are allowed."""

Role = Literal["user", "assistant", "system", "tool"]
Level = Annotated[int, Field(ge=0, le=5)]
LiftSource = Literal["user", "agent"]
EventStatus = Literal["active", "superseded", "forgotten", "archived"]
Criticality = Literal["routine", "preference", "identity", "safety"]
Precision = Literal["instant", "day", "month", "year", "range", "unknown"]
Basis = Literal["explicit", "relative", "inferred", "unknown"]
TemporalStatus = Literal["occurred", "planned", "cancelled", "ongoing", "unknown"]
ElementType = Literal["person", "project", "organization", "tool", "place"]
FactMode = Literal["state", "set", "relation"]
FactStatus = Literal["active", "superseded", "disputed"]
ProjectionOperation = Literal["set_state", "add_set_item", "set_relation"]
ExtractionJobStatus = Literal["running", "succeeded", "skipped", "failed"]
ProjectionJobStatus = Literal["pending", "running", "completed", "failed"]
Verdict = Literal["sufficient", "partial", "wrong"]
Strategy = Literal[
    "answer",
    "search_events",
    "expand_event",
    "search_elements",
    "expand_element",
    "search_raw_memory",
    "expand_block",
]
RejectReason = Literal["invalid_ref", "duplicate", "not_in_batch", "limit_exceeded"]

OPERATION_MODES: dict[str, str] = {
    "set_state": "state",
    "add_set_item": "set",
    "set_relation": "relation",
}
"""The fact mode each projection operation implies."""


class Model(BaseModel):
    """Base of every API model: frozen values, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)


def parse_input(model: type[M], value: Any, *, what: str | None = None) -> M:
    """Validate ``value`` (a model instance or a mapping) as ``model``.

    Raises ``InvalidInputError`` (a ``ValueError``) whose ``__cause__`` is the pydantic error.
    """
    if isinstance(value, model):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump()
    label = what or model.__name__
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"{label}: expected a mapping or {model.__name__}, got {type(value).__name__}"
        )
    try:
        return model.model_validate(dict(value))
    except ValidationError as exc:
        raise InvalidInputError(f"{label}: {first_error(exc)}") from exc


def trusted(model: type[M], values: dict[str, Any]) -> M:
    """``model`` holding ``values`` (every field, each already valid: a read model's rows, a
    validated model's fields) as they are, without validation — what ``model_construct``
    makes of them, without its Python walk over the fields (a quarter of its cost). ``values``
    becomes the instance's own ``__dict__``: hand over a fresh dict."""
    if not _plain(model):
        return model.model_construct(**values)
    instance = model.__new__(model)
    _set = object.__setattr__
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(values))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


@functools.cache
def _plain(model: type[BaseModel]) -> bool:
    """Whether ``model`` has no private attributes, post-init hook or extra fields, so that
    ``trusted`` makes exactly what ``model_construct`` does."""
    return (
        not model.__private_attributes__
        and model.__pydantic_post_init__ is None
        and not model.__pydantic_root_model__
        and model.model_config.get("extra") != "allow"
    )


def first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    loc = ".".join(str(part) for part in first.get("loc", ())) or "value"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{loc}: {first.get('msg', 'invalid')}{more}"


class ToolTrace(Model):
    """One tool call recorded with a message: its name, arguments and result."""

    name: str
    arguments: dict[str, Any] | None = None
    result: Any = None


class RawMessage(Model):
    """One source message (L5): never rewritten once appended."""

    id: str = Field(min_length=1)
    role: Role
    content: str
    created_at: UtcDatetime
    thread_id: str | None = None
    tool_calls: list[ToolTrace] | None = None
    name: str | None = None
    """Optional speaker name (as in chat-completion messages), e.g. ``"Caroline"``."""


class BlockSummary(Model):
    """The model-written views of a block (L0-L2) and its conservative extraction decision."""

    l0_title: str
    l0_tags: list[str] = Field(default_factory=list)
    l1_summary: str
    l2_keypoints: list[str] = Field(default_factory=list)
    should_extract: bool = True


class MemoryBlock(Model):
    """A sealed block: six views of ``block_turn_size`` completed turns and its decay pointer."""

    id: str
    thread_id: str | None
    sequence: int = Field(ge=1)
    position: int = Field(ge=1)
    start_turn: int = Field(ge=1)
    end_turn: int = Field(ge=1)
    created_at: UtcDatetime
    should_extract: bool
    l0_title: str
    l0_tags: list[str]
    l1_summary: str
    l2_keypoints: list[str]
    l3_condensed: str
    l4_readable: str
    l5_raw: list[RawMessage]
    pointer_current_level: Level
    pointer_anchor_level: Level
    pointer_anchor_position: int = Field(ge=1)
    last_lifted_at: UtcDatetime | None = None
    last_lift_source: LiftSource | None = None


class EventTemporal(Model):
    """The two time axes of an event (mentioned vs happened) and its temporal relations."""

    mentioned_at: IsoTime | None = None
    happened_start: IsoTime | None = None
    happened_end: IsoTime | None = None
    original_text: str | None = None
    precision: Precision | None = None
    basis: Basis | None = None
    status: TemporalStatus | None = None
    participants: list[str] = Field(default_factory=list)
    event_type: str | None = None
    supersedes_event_ids: list[str] = Field(default_factory=list)
    conflicts_with_event_ids: list[str] = Field(default_factory=list)


class MemoryWeight(Model):
    """Adoption-based weight state of an event or element (turns, not wall-clock time)."""

    mention_count: int = Field(default=1, ge=1)
    last_adopted_turn: int = Field(default=0, ge=0)
    last_retrieved_at: UtcDatetime | None = None
    pinned: bool = False
    floor_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    forced_cap: float | None = Field(default=None, ge=0.0, le=1.0)


class EventCardInput(Model):
    """What an extractor, importer or caller proposes as a new event card."""

    id: str | None = None
    title: str = Field(min_length=1)
    summary: str
    narrative: str | None = None
    tags: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)
    source_block_id: str = Field(min_length=1)
    source_message_ids: list[str] = Field(default_factory=list)
    temporal: EventTemporal | None = None
    scope: str = "user"
    criticality: Criticality = "routine"
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class EventCard(EventCardInput):
    """A stored event card: immutable content plus status, supersession and weight."""

    id: str  # always assigned once stored
    status: EventStatus = "active"
    superseded_by: str | None = None
    weight: MemoryWeight = Field(default_factory=MemoryWeight)
    created_at: UtcDatetime
    updated_at: UtcDatetime


class TimelineEntry(Model):
    """One existing event as the extractor sees it: id, title and time."""

    id: str
    title: str
    temporal: EventTemporal | None = None


class ExtractionContext(Model):
    """What an extractor gets: the target block (the only legal source) and its neighbours."""

    previous: MemoryBlock | None
    target: MemoryBlock
    next: MemoryBlock
    timeline: list[TimelineEntry] = Field(default_factory=list)


class ExtractionResult(Model):
    """An extractor's answer for one target block."""

    should_extract: bool
    reason: str = ""
    events: list[EventCardInput] = Field(default_factory=list)


class ElementFact(Model):
    """One fact of an element with its validity interval and event provenance."""

    id: str
    key: str
    mode: FactMode
    value: str | list[str]
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    source_event_ids: list[str]
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    status: FactStatus = "active"
    created_at: UtcDatetime
    updated_at: UtcDatetime


class ElementCard(Model):
    """A person, project, organization, tool or place: facts over time and its current state."""

    id: str
    name: str
    type: ElementType
    aliases: list[str] = Field(default_factory=list)
    current_state: dict[str, str | list[str]] = Field(default_factory=dict)
    facts: list[ElementFact] = Field(default_factory=list)
    source_event_ids: list[str] = Field(default_factory=list)
    source_message_ids: list[str] = Field(default_factory=list)
    weight: MemoryWeight = Field(default_factory=MemoryWeight)
    created_at: UtcDatetime
    updated_at: UtcDatetime


class ElementRef(Model):
    """Which element a projected change is about: matched by normalised name within a type."""

    name: str = Field(min_length=1)
    type: ElementType
    aliases: list[str] = Field(default_factory=list)


class ElementProjectionChange(Model):
    """One change a projector proposes; applied only if every cited event is in the batch."""

    element: ElementRef
    operation: ProjectionOperation
    key: str = Field(min_length=1)
    mode: FactMode | None = None
    value: str | list[str]
    valid_from: IsoTime | None = None
    valid_to: IsoTime | None = None
    source_event_ids: list[str] = Field(min_length=1)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)

    @field_validator("mode")
    @classmethod
    def _mode_matches_operation(cls, mode: str | None, info: Any) -> str | None:
        operation = info.data.get("operation")
        if mode is not None and operation is not None and OPERATION_MODES[operation] != mode:
            raise ValueError(f"mode {mode!r} does not fit operation {operation!r}")
        return mode

    @property
    def effective_mode(self) -> FactMode:
        """The mode this change writes: given, or implied by the operation."""
        return self.mode or OPERATION_MODES[self.operation]  # type: ignore[return-value]


class ElementProjectionResult(Model):
    """A projector's answer for one claimed batch of events."""

    reason: str = ""
    changes: list[ElementProjectionChange] = Field(default_factory=list)


class ElementProjectionContext(Model):
    """What a projector gets: the claimed job, its events and the elements that exist now."""

    job_id: str
    events: list[EventCard]
    existing_elements: list[ElementCard] = Field(default_factory=list)


class ExtractionJob(Model):
    """The extraction state of one block."""

    block_id: str
    status: ExtractionJobStatus
    attempts: int = Field(ge=0)
    last_error: str | None = None
    reason: str | None = None
    updated_at: UtcDatetime


class ElementProjectionJob(Model):
    """The projection state of one batch of events."""

    id: str
    source_event_ids: list[str]
    status: ProjectionJobStatus
    attempts: int = Field(ge=0)
    element_ids: list[str] = Field(default_factory=list)
    reason: str | None = None
    last_error: str | None = None


class RejectedEvidenceRef(Model):
    """One evidence ref the gate refused, with where it stood in the input and why."""

    input_index: int
    ref: str
    reason: RejectReason
    detail: str


class RetrievalAssessment(Model):
    """The five-field evidence gate verdict after normalisation."""

    verdict: Verdict
    evidence_refs: list[str] = Field(default_factory=list)
    rejected_evidence_refs: list[RejectedEvidenceRef] = Field(default_factory=list)
    fit: str = ""
    missing: str = ""
    next_strategy: Strategy
    batch_id: str | None = None


class TurnInput(Model):
    """One turn for ``append_turns``: the arguments ``append_turn`` takes, as a record."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    user: Any
    assistant: Any
    created_at: datetime | str | None = None
    thread_id: str | None = None
    user_tool_calls: list[Any] | None = None
    assistant_tool_calls: list[Any] | None = None
    receipt_id: str | None = None


class UsageAudit(Model):
    """Why an answer used some memories: the session, turn, batch, verdict and exact refs."""

    session_id: str | None = None
    turn: int | None = None
    batch_id: str | None = None
    assessment: RetrievalAssessment | None = None
    evidence_refs: list[str] = Field(default_factory=list)


class UsageReceipt(Model):
    """A recorded adoption: which memories an answer used, reinforced once per receipt id."""

    id: str
    event_ids: list[str] = Field(default_factory=list)
    element_ids: list[str] = Field(default_factory=list)
    audit: UsageAudit | None = None
    reinforced_event_ids: list[str] = Field(default_factory=list)
    reinforced_element_ids: list[str] = Field(default_factory=list)
    turn: int = 0
    created_at: UtcDatetime


__all__ = [
    "OPERATION_MODES",
    "BlockSummary",
    "ElementCard",
    "ElementFact",
    "ElementProjectionChange",
    "ElementProjectionContext",
    "ElementProjectionJob",
    "ElementProjectionResult",
    "ElementRef",
    "EventCard",
    "EventCardInput",
    "EventTemporal",
    "ExtractionContext",
    "ExtractionJob",
    "ExtractionResult",
    "IsoTime",
    "MemoryBlock",
    "MemoryWeight",
    "Model",
    "RawMessage",
    "RejectedEvidenceRef",
    "RetrievalAssessment",
    "TimelineEntry",
    "ToolTrace",
    "TurnInput",
    "UsageAudit",
    "UsageReceipt",
    "UtcDatetime",
    "first_error",
    "parse_input",
    "trusted",
]
