"""Events of the extraction stream (written by the extractor): jobs, event cards, imports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stratagate.events.domain import EXTRACTION, DomainEvent, register
from stratagate.events.payloads import CardData, MessageData, SummaryData


@register
class ExtractionStarted(DomainEvent):
    """The extractor claimed a target block (its next block is sealed) and calls the model.
    v2: records the claiming ``worker``."""

    stream = EXTRACTION
    schema_version = 2
    type: Literal["ExtractionStarted"] = "ExtractionStarted"
    block_id: str
    attempt: int = Field(ge=1)
    worker: str | None = None
    """Who claimed it (``host:pid:start``, see ``stratagate.store.leases.Holder.token``): a
    claim whose process is gone is recovered by the next handle; a live one is left alone.
    v1 claims have none."""


@register
class ExtractionSucceeded(DomainEvent):
    """The extractor returned event cards for the target block; they are stored as given here."""

    stream = EXTRACTION
    type: Literal["ExtractionSucceeded"] = "ExtractionSucceeded"
    block_id: str
    reason: str = ""
    events: list[CardData]


@register
class ExtractionSkipped(DomainEvent):
    """Nothing worth extracting (the summarizer's or the extractor's decision, with its reason)."""

    stream = EXTRACTION
    type: Literal["ExtractionSkipped"] = "ExtractionSkipped"
    block_id: str
    reason: str


@register
class ExtractionFailed(DomainEvent):
    """The extractor raised or returned unusable output; the job can be retried."""

    stream = EXTRACTION
    type: Literal["ExtractionFailed"] = "ExtractionFailed"
    block_id: str
    error: str


@register
class ExtractionInterrupted(DomainEvent):
    """A job found ``running`` when its actor hydrated: the process died mid-call; now failed."""

    stream = EXTRACTION
    type: Literal["ExtractionInterrupted"] = "ExtractionInterrupted"
    block_id: str


@register
class EventAdded(DomainEvent):
    """An event card added outside block extraction: by the caller or by an external import."""

    stream = EXTRACTION
    type: Literal["EventAdded"] = "EventAdded"
    event: CardData
    origin: Literal["manual", "import"] = "manual"
    import_batch_id: str | None = None


@register
class EventSuperseded(DomainEvent):
    """A newer event supersedes an older one; the old card stays, with a capped weight."""

    stream = EXTRACTION
    type: Literal["EventSuperseded"] = "EventSuperseded"
    event_id: str
    superseded_by: str
    import_batch_id: str | None = None


@register
class ExternalImportRecorded(DomainEvent):
    """An external memory document was accepted; its text is kept as a permanent source block."""

    stream = EXTRACTION
    type: Literal["ExternalImportRecorded"] = "ExternalImportRecorded"
    batch_id: str
    format: str
    source: str
    block_id: str
    messages: list[MessageData]
    """One message per imported item, verbatim; the events of the batch cite these."""
    summary: SummaryData
    l3_condensed: str
    l4_readable: str
    item_hashes: list[str]
    """Content hash of each item, in order: exact duplicates are skipped by these."""


@register
class EventMerged(DomainEvent):
    """An imported item was merged into an existing event: a corroborating source, no rewrite."""

    stream = EXTRACTION
    type: Literal["EventMerged"] = "EventMerged"
    event_id: str
    source_message_id: str
    import_batch_id: str


@register
class ExternalImportUndone(DomainEvent):
    """An import batch was undone: its events leave retrieval, its supersessions and merges revert."""

    stream = EXTRACTION
    type: Literal["ExternalImportUndone"] = "ExternalImportUndone"
    batch_id: str


__all__ = [
    "EventAdded",
    "EventMerged",
    "EventSuperseded",
    "ExternalImportRecorded",
    "ExternalImportUndone",
    "ExtractionFailed",
    "ExtractionInterrupted",
    "ExtractionSkipped",
    "ExtractionStarted",
    "ExtractionSucceeded",
]
