"""What the memory object's methods return: results, hits, views and audit reports."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, TypeVar

from pydantic import Field

from stratagate.models import (
    ElementCard,
    ElementFact,
    EventCard,
    MemoryBlock,
    Model,
    RawMessage,
    UtcDatetime,
)

T = TypeVar("T")


class HitList(list[T]):
    """A list of hits that remembers the retrieval batch it was logged as (``batch_id``)."""

    def __init__(self, hits: Iterable[T] = (), batch_id: str | None = None) -> None:
        super().__init__(hits)
        self.batch_id = batch_id

    def __reduce__(self) -> tuple[Any, ...]:
        return (HitList, (list(self), self.batch_id))

    def __repr__(self) -> str:
        return f"HitList(batch_id={self.batch_id!r}, {list.__repr__(self)})"


class AppendTurnResult(Model):
    """What one ``append_turn`` did: the block it sealed and what was derived from it."""

    turn: int | None = None
    """The namespace-wide turn number assigned (``None`` for a duplicate receipt)."""
    duplicate: bool = False
    sealed_block: MemoryBlock | None = None
    extracted_events: list[EventCard] = Field(default_factory=list)
    projected_elements: list[ElementCard] = Field(default_factory=list)


class AppendTurnsResult(Model):
    """What one ``append_turns`` did: each turn's number and what was derived from them."""

    turns: list[int | None] = Field(default_factory=list)
    """The namespace-wide turn number of each input turn, in order (``None``: a duplicate)."""
    duplicates: int = 0
    sealed_blocks: list[MemoryBlock] = Field(default_factory=list)
    extracted_events: list[EventCard] = Field(default_factory=list)
    projected_elements: list[ElementCard] = Field(default_factory=list)


class ResumePendingResult(Model):
    """What ``resume_pending_work`` redid."""

    sealed_blocks: list[MemoryBlock] = Field(default_factory=list)
    extracted_events: list[EventCard] = Field(default_factory=list)
    projected_elements: list[ElementCard] = Field(default_factory=list)


class EventHit(Model):
    """One event search hit."""

    id: str
    event: EventCard
    score: float
    weight: float


class ElementHit(Model):
    """One fact-level element search hit: the fact, its element and validity, with provenance."""

    id: str
    element_id: str
    name: str
    type: str
    fact: ElementFact
    score: float


class RawHit(Model):
    """One raw-memory hit: a source message with its neighbours and where it lives."""

    id: str
    block_id: str | None
    """``None`` while the message is still in the open tail."""
    thread_id: str | None
    turn_range: tuple[int, int]
    message: RawMessage
    nearby: list[RawMessage]
    score: float


class BlockContextEntry(Model):
    """One block (or the open tail) of a thread shown at its decayed level."""

    id: str
    thread_id: str | None
    turn_range: tuple[int, int]
    level: int
    label: str
    content: str


class ExpandedEvent(Model):
    """An event card with the exact source messages it cites."""

    event: EventCard
    source_block: MemoryBlock
    source_messages: list[RawMessage]
    erased: bool = False
    """The card was erased (it and its facts read ``[erased]``); its source messages are its
    thread's and stay until that thread (or the namespace) is erased."""


class RecallEntry(Model):
    """One long-term memory chosen for automatic activation."""

    kind: str
    id: str
    text: str
    tokens: int
    relevance: float
    """The search score (a current card that replaces a candidate inherits the candidate's)."""
    weight: float
    status: str = "active"
    """The event's status (``active``/``superseded``) or the fact's (``active``/``superseded``/
    ``disputed``)."""
    superseded_by: str | None = None
    """The id of the current event or fact that replaced this one."""
    replaces: list[str] = Field(default_factory=list)
    """Ids of candidates this current event or fact replaced."""


class RecallContext(Model):
    """What ``recall_context`` packs for a model call (nothing is reinforced)."""

    query: str
    batch_id: str | None
    events: list[RecallEntry] = Field(default_factory=list)
    elements: list[RecallEntry] = Field(default_factory=list)
    messages: list[RecallEntry] = Field(default_factory=list)
    """Source messages that match the query (each best raw hit, then the message after it)."""
    blocks: list[BlockContextEntry] = Field(default_factory=list)
    tokens: int
    token_budget: int
    text: str


class HistoryRecord(Model):
    """One logged domain event as auditors read it."""

    position: int
    namespace: str
    stream: str
    stream_version: int
    type: str
    schema_version: int
    recorded_at: str
    data: dict[str, Any]


class LogSummary(Model):
    """What the log holds of a namespace, read without folding anything (cheap, and possible
    on a damaged log)."""

    namespace: str
    present: bool
    """Whether anything of the namespace is stored: a row, a heads record or a snapshot."""
    revision: int
    """How many domain events the namespace has logged."""
    last_position: int
    """The global position of the namespace's last row (0 when it has none)."""
    log_position: int
    """The global position of the last row of any namespace in the database."""


class VerifyReport(Model):
    """The outcome of ``verify()``: the chain and every read model checked against the log."""

    ok: bool
    first_bad_position: int | None = None
    chain_ok: bool
    replay_ok: bool
    events_checked: int
    mismatched_models: list[str] = Field(default_factory=list)
    detail: str = ""


class LogExportReport(Model):
    """What ``export_log`` wrote: the file, the namespace's head and how its keys travel."""

    path: str
    namespace: str
    events: int
    head_position: int
    head_hash: str
    """The chain hash of the last row: equal to the head hash of a ``checkpoint()`` now."""
    keys: int
    erased_keys: int
    """Keys destroyed by an erasure: exported as tombstones, their content stays erased."""
    wrapped_by: str | None
    """The fingerprint of the master key the file's live keys are wrapped under; ``None``
    when they are bare (then the file alone reveals the namespace's content)."""


class LogImportReport(Model):
    """What ``StrataGate.import_log`` wrote: where the log went and whether it is an exact copy."""

    namespace: str
    source_namespace: str
    events: int
    keys: int
    head_position: int
    head_hash: str
    source_head_hash: str
    positions_kept: bool
    """True: the rows kept their positions and hashes (``head_hash == source_head_hash``, so
    the original's anchors verify against the copy); False: they were chained anew at new
    positions (another namespace name, or positions the database had handed out already)."""


class ImportResult(Model):
    """What one external-memory import did, by action."""

    batch_id: str | None
    """``None`` when every item was an exact duplicate (nothing was appended)."""
    source_block_id: str | None
    added: list[str] = Field(default_factory=list)
    merged: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    ignored: list[str] = Field(default_factory=list)
    skipped_duplicates: int = 0


class NamespaceStats(Model):
    """Counts of one namespace for the CLI and dashboards."""

    namespace: str
    revision: int
    turns: int
    threads: int
    blocks: int
    open_tail_turns: int
    events: int
    events_by_status: dict[str, int]
    elements: int
    facts: int
    extraction_jobs: dict[str, int]
    projection_jobs: dict[str, int]
    receipts: int
    batches: int
    last_event_at: UtcDatetime | None = None


class ErasureReport(Model):
    """What an erasure did: the ``…Erased`` event's position and the data keys it destroyed."""

    kind: Literal["thread", "event", "namespace"]
    target: str | None
    """The thread id (``None``: the default thread), the event id, or ``None`` (namespace)."""
    position: int
    """Global position of the ``ThreadErased`` / ``EventErased`` / ``NamespaceErased`` event."""
    keys_destroyed: int
    reason: str
    key_bytes_gone: bool | None = None
    """Whether the destroyed keys' bytes are gone from the database file: ``True`` once a
    SQLite file's WAL was checkpointed (``secure_delete`` overwrote the freed pages);
    ``False`` when another connection's read transaction kept the checkpoint from finishing
    within the wait (the bytes go at the next checkpoint: erase again, or close the other
    reader); ``None`` on PostgreSQL (dead tuples stay until VACUUM, docs/OPERATIONS.md)."""


__all__ = [
    "AppendTurnResult",
    "AppendTurnsResult",
    "BlockContextEntry",
    "ElementHit",
    "ErasureReport",
    "EventHit",
    "ExpandedEvent",
    "HistoryRecord",
    "HitList",
    "ImportResult",
    "LogSummary",
    "NamespaceStats",
    "RawHit",
    "RecallContext",
    "RecallEntry",
    "ResumePendingResult",
    "VerifyReport",
]
