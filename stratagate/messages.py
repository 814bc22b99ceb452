"""Every operation on a namespace as one frozen, typed message: commands change the log,
queries read the read models or the log itself.

A message is validated once, where it is built (in the façade); the handler that answers it
trusts its fields. ``Message[R]`` names what the caller gets back, so
``runtime.send(GetEvent(...))`` is an ``EventCard`` to a type checker: the handler's answer,
or, for a command with follow-up work, the outcome ``stratagate.actors.pipeline`` makes of it.
Which handler answers which message is read from the handlers' own ``@handles`` marks
(``stratagate.actors.registry``). Invalid fields raise ``InvalidInputError`` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from stratagate.anchors import Anchor
from stratagate.core.arguments import MAX_ID_CHARS
from stratagate.core.filters import (
    ElementFilters,
    EventFilters,
    Limit,
    Moment,
    QueryText,
    RawFilters,
)
from stratagate.errors import InvalidInputError
from stratagate.formats.external_memory import Decision, ExternalMemoryDocument, ImportPlan
from stratagate.models import (
    ElementCard,
    ElementProjectionContext,
    ElementProjectionJob,
    ElementProjectionResult,
    EventCard,
    EventCardInput,
    ExtractionJob,
    MemoryBlock,
    RawMessage,
    RetrievalAssessment,
    UsageAudit,
    UsageReceipt,
    UtcDatetime,
    first_error,
)
from stratagate.read.view import MemoryView
from stratagate.results import (
    AppendTurnResult,
    AppendTurnsResult,
    BlockContextEntry,
    ElementHit,
    ErasureReport,
    EventHit,
    ExpandedEvent,
    HistoryRecord,
    HitList,
    ImportResult,
    LogExportReport,
    LogSummary,
    NamespaceStats,
    RawHit,
    RecallContext,
    ResumePendingResult,
    VerifyReport,
)

R = TypeVar("R")

MAX_BUDGET = 1_000_000
"""The largest token budget or entry count ``recall_context`` accepts."""


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_BUDGET:
        raise ValueError(f"must be an integer from 0 to {MAX_BUDGET}, got {value!r}")
    return value


def _text_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        shown = repr(value)[:80] if isinstance(value, str) else type(value).__name__
        raise ValueError(f"must be a non-empty string, got {shown}")
    if len(value) > MAX_ID_CHARS or "\x00" in value:
        raise ValueError(f"must be at most {MAX_ID_CHARS} characters, without NUL")
    return value


MAX_REASON_CHARS = 1_000
"""The longest reason an erasure records (a reason is a ticket or a sentence, not content)."""


def _reason(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"reason must be a non-empty string, got {value!r}")
    if len(value) > MAX_REASON_CHARS:
        raise ValueError(f"reason is {len(value)} characters, more than {MAX_REASON_CHARS}")
    return value


MAX_POSITION = 2**63 - 1
"""The largest global position a log can hold (its column is a signed 64-bit integer)."""


def _position(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_POSITION:
        raise ValueError(f"must be an integer from 0 to {MAX_POSITION}, got {value!r}")
    return value


Count = Annotated[int, BeforeValidator(_count)]
Position = Annotated[int, BeforeValidator(_position)]
Id = Annotated[str, BeforeValidator(_text_id)]
Reason = Annotated[str, BeforeValidator(_reason)]
Governance = Literal["pin", "unpin", "forget", "restore", "archive"]


class Message(BaseModel, Generic[R]):
    """One operation on a namespace; ``R`` is what handling it returns."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInputError(f"{type(self).__name__}: {first_error(exc)}") from exc


class Command(Message[R]):
    """Decides and appends domain events (a write)."""


class Query(Message[R]):
    """Answers from the read models; appends nothing (searches log their batch through the
    weight keeper, which is how a batch becomes citable by the evidence gate)."""


# -- ingest (sealer) -------------------------------------------------------------------------


class TurnAck(BaseModel):
    """The sealer's answer once a turn is durable (or recognised as a duplicate)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int | None
    duplicate: bool = False


class ApplySettings(Command[bool]):
    """Log the opener's explicit block size / decay lambda when they differ from the record."""


Processing = Literal["wait", "background", "defer"]
"""What follows a turn once it is durable: the derived work now (``wait``), on its own
(``background``: ``drain`` waits for it), or not yet (``defer``: the next turn or
``resume_pending_work`` does it)."""


class AppendTurn(Command[AppendTurnResult]):
    """Make one validated turn durable (ids and times already decided by the façade), then
    seal, extract and project what is ready as ``processing`` says."""

    command_id: str
    thread_id: str | None
    receipt_id: str | None
    messages: list[RawMessage] = Field(min_length=1)
    at: UtcDatetime
    processing: Processing = "wait"


class AppendTurns(Command[AppendTurnsResult]):
    """Make many turns durable in as few commits as possible; each is acknowledged only once
    it is durable, and each receipt id is honoured as if appended alone. What follows is
    the batch's ``processing`` (its turns' own is not read)."""

    turns: list[AppendTurn] = Field(min_length=1)
    processing: Processing = "wait"


class ResumePending(Command[ResumePendingResult]):
    """Retry failed or interrupted seals, extractions and projections, then finish what is
    ready (no role answers it: it is follow-up work alone)."""

    retry_skipped: bool = False


class SealReady(Command[list[MemoryBlock]]):
    """Seal every open tail that holds a full block (failed seals only when retrying)."""

    retry_failed: bool = False


class LiftBlock(Command[BlockContextEntry]):
    """Re-anchor a block's decay pointer at a level and its thread's latest position."""

    block_id: Id
    target: int | str | None = "next"
    source: Literal["user", "agent"] = "agent"


# -- extraction (extractor) ------------------------------------------------------------------


class ExtractReady(Command[list[EventCard]]):
    """Run every extraction job whose target block is ready (its next block is sealed)."""

    retry_failed: bool = False
    retry_skipped: bool = False


class AddEvents(Command[list[EventCard]]):
    """Add callers' cards, each citing an existing block; projection jobs follow."""

    events: list[EventCardInput] = Field(min_length=1)


class ImportMemory(Command[ImportResult]):
    """Import an external-memory document: plan it, let ``decide`` (run in the caller's
    process, before anything is appended) answer each candidate, append the batch, project."""

    document: ExternalMemoryDocument
    top_k: Annotated[int, Field(ge=1, le=50, strict=True)] = 5
    decide: Callable[[EventCardInput, list[EventCard]], Any] | None = None


class ImportExternal(Command[ImportResult]):
    """Append a decided import plan as one atomic batch."""

    plan: ImportPlan
    decisions: list[Decision]


class UndoImport(Command[bool]):
    """Take an import batch's events out of retrieval (False when already undone)."""

    batch_id: Id


# -- projection (projector) ------------------------------------------------------------------


class QueueProjections(Command[list[str]]):
    """Queue one projection job per group of durable events not yet queued."""


class RunProjections(Command[list[ElementCard]]):
    """Queue, then claim → call → complete every pending job (when a projector is set)."""

    retry_failed: bool = False


class ClaimProjection(Command[ElementProjectionContext | None]):
    """Claim the oldest pending job (or, when asked, the oldest failed one)."""

    include_failed: bool = False


class CompleteProjection(Command[list[ElementCard]]):
    """Apply a result to a claimed job; answers the element cards it applied."""

    job_id: Id
    result: ElementProjectionResult


class FailProjection(Command[ElementProjectionJob]):
    """Record a claimed job as failed (retryable)."""

    job_id: Id
    error: str


# -- weights (weight keeper) -----------------------------------------------------------------


class RecordBatch(Command[str]):
    """Log a retrieval batch (its query, options and hit refs); returns the batch id."""

    kind: Literal["events", "elements", "raw", "context"]
    query: str
    options: dict[str, Any]
    refs: list[str]
    event_ids: list[str] = Field(default_factory=list)
    element_ids: list[str] = Field(default_factory=list)


class Assess(Command[RetrievalAssessment]):
    """Normalise an assessment against a logged batch (``batch_id``) or explicit refs."""

    raw: dict[str, Any]
    batch_id: str | None = None
    refs: list[str] | None = None


class RecordUse(Command[UsageReceipt]):
    """Record which memories an answer used (reinforces once per receipt id)."""

    event_ids: list[str] = Field(default_factory=list)
    element_ids: list[str] = Field(default_factory=list)
    receipt_id: str | None = None
    audit: UsageAudit | None = None


class Govern(Command[EventCard]):
    """Pin, unpin, forget, restore or archive an event; answers the card as it now is."""

    action: Governance
    event_id: Id


class LogCheckpoint(Command[None]):
    """Log a signed anchor of the namespace's head (``LogCheckpointed``)."""

    position: int
    head_hash: str
    signature: str


class EraseThread(Command[ErasureReport]):
    """Erase a thread's content: destroy its data keys (and its blocks', cards', facts')."""

    thread_id: str | None
    reason: Reason


class EraseEvent(Command[ErasureReport]):
    """Erase one event card's text and the facts drawn from it."""

    event_id: Id
    reason: Reason


class EraseNamespace(Command[ErasureReport]):
    """Erase every content field of the namespace: destroy all its data keys."""

    reason: Reason


# -- queries (reader) ------------------------------------------------------------------------


class ViewRead(Query[R]):
    """A plain read of the read models: answered by the ``MemoryView`` method ``read`` names,
    called with the message's fields as keyword arguments (so a time-travel view answers the
    same read the same way)."""

    read: ClassVar[str]

    def arguments(self) -> dict[str, Any]:
        """The fields, by name, as the view method takes them."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class CurrentTurn(ViewRead[int]):
    """Turns appended to the namespace (all threads)."""

    read = "current_turn"


class GetBlock(ViewRead[MemoryBlock]):
    read = "get_block"
    block_id: str


class ListBlocks(ViewRead[list[MemoryBlock]]):
    read = "list_blocks"
    thread_id: str | None = None


class ListOpenTail(ViewRead[list[RawMessage]]):
    read = "list_open_tail"
    thread_id: str | None = None


class GetBlockContext(ViewRead[list[BlockContextEntry]]):
    read = "get_block_context"
    thread_id: str | None = None


class GetEvent(ViewRead[EventCard]):
    read = "get_event"
    event_id: str


class ListEvents(ViewRead[list[EventCard]]):
    """Every event card in creation order, whatever its status."""

    read = "list_events"


class EventWeight(ViewRead[float]):
    read = "event_weight"
    event_id: str


class ExpandEvent(ViewRead[ExpandedEvent]):
    read = "expand_event"
    event_id: str


class GetElement(ViewRead[ElementCard]):
    read = "expand_element"
    element_id: str
    at: Moment = None


class ListElements(ViewRead[list[ElementCard]]):
    read = "list_elements"


class ListExtractionJobs(ViewRead[list[ExtractionJob]]):
    read = "list_extraction_jobs"


class ListProjectionJobs(ViewRead[list[ElementProjectionJob]]):
    read = "list_element_projection_jobs"


class ListUsageReceipts(ViewRead[list[UsageReceipt]]):
    read = "list_usage_receipts"


class HasReceipt(ViewRead[bool]):
    read = "has_ingestion_receipt"
    receipt_id: str


class Refresh(Query[int]):
    """Fold what other handles appended since this one last looked; answers how many events."""


class GetStats(Query[NamespaceStats]):
    """Counts of everything in the namespace, its revision and when its last event was
    recorded."""


class SearchEvents(Query[HitList[EventHit]]):
    """Hybrid event search (BM25 + structured rankings, RRF); the batch is logged."""

    query: QueryText
    limit: Limit = 6
    filters: EventFilters = EventFilters()


class SearchElements(Query[HitList[ElementHit]]):
    """Fact-level element search; the batch is logged."""

    query: QueryText
    limit: Limit = 8
    filters: ElementFilters = ElementFilters()


class SearchRaw(Query[HitList[RawHit]]):
    """Ranked source messages with their neighbours; the batch is logged."""

    query: QueryText
    limit: Limit = 6
    filters: RawFilters = RawFilters()


class Recall(Query[RecallContext]):
    """Automatic activation within a token budget; logged as a ``context`` batch."""

    query: QueryText
    thread_id: str | None = None
    max_events: Count = 4
    max_elements: Count = 4
    token_budget: Count = 900


class PlanImport(Query[ImportPlan]):
    """Skip exact duplicates and pair each new item with its most similar events."""

    document: ExternalMemoryDocument
    top_k: Annotated[int, Field(ge=1, le=50, strict=True)] = 5


# -- the log (answered by each runtime itself, from its own store connection) -----------------


class Revision(Query[int]):
    """How many domain events the namespace has logged."""


class History(Query[list[HistoryRecord]]):
    """Logged domain events after a global position, in order (of one type, at most ``limit``)."""

    since: Position = 0
    limit: Annotated[int | None, Field(ge=1, strict=True)] = None
    event_type: str | None = None


class SummarizeLog(Query[LogSummary]):
    """What the log holds of the namespace: presence, revision, last positions."""


class Verify(Query[VerifyReport]):
    """Check the chain (and that the log still extends ``anchor``) and rebuild every read
    model from the log, comparing it with the live ones."""

    anchor: Anchor | None = None


class ExportLog(Query[LogExportReport]):
    """Write the namespace's log and keys to a ``stratagate.log.v1`` file (reads only)."""

    path: str = Field(min_length=1)


class StateAt(Query[MemoryView]):
    """A read-only view of the namespace as of a global position (nothing is logged);
    ``search=False``: without the search index, from past states kept across calls."""

    position: Position
    search: bool = True


class TakeAnchor(Query[Anchor]):
    """An anchor of the namespace's head now; a signed one is then logged too (``LogCheckpoint``,
    unless the memory is read-only)."""


def search_options(message: SearchEvents | SearchElements | SearchRaw | Recall) -> dict[str, Any]:
    """A search's options as logged with its batch: every set field but the query, JSON-able,
    its filters among them (one flat mapping, as batches have always recorded them)."""
    options = message.model_dump(mode="json", exclude={"query", "filters"}, exclude_none=True)
    filters = getattr(message, "filters", None)
    return options if filters is None else {**options, **filters.logged()}


__all__ = [
    "MAX_POSITION",
    "AddEvents",
    "AppendTurn",
    "AppendTurns",
    "ApplySettings",
    "Assess",
    "ClaimProjection",
    "Command",
    "CompleteProjection",
    "CurrentTurn",
    "EraseEvent",
    "EraseNamespace",
    "EraseThread",
    "EventWeight",
    "ExpandEvent",
    "ExportLog",
    "ExtractReady",
    "FailProjection",
    "GetBlock",
    "GetBlockContext",
    "GetElement",
    "GetEvent",
    "GetStats",
    "Govern",
    "HasReceipt",
    "History",
    "ImportExternal",
    "ImportMemory",
    "LiftBlock",
    "ListBlocks",
    "ListElements",
    "ListEvents",
    "ListExtractionJobs",
    "ListOpenTail",
    "ListProjectionJobs",
    "ListUsageReceipts",
    "LogCheckpoint",
    "Message",
    "PlanImport",
    "Processing",
    "Query",
    "QueueProjections",
    "Recall",
    "RecordBatch",
    "RecordUse",
    "Refresh",
    "ResumePending",
    "Revision",
    "RunProjections",
    "SealReady",
    "SearchElements",
    "SearchEvents",
    "SearchRaw",
    "StateAt",
    "SummarizeLog",
    "TakeAnchor",
    "TurnAck",
    "UndoImport",
    "Verify",
    "ViewRead",
]
