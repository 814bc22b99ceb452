"""Events of the weights stream (written by the weight keeper): retrieval, use, governance."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from stratagate.events.domain import WEIGHTS, DomainEvent, register
from stratagate.events.payloads import AssessmentData, ReceiptData, canonical

BatchKind = Literal["events", "elements", "raw", "context"]


@register
class RetrievalBatchRecorded(DomainEvent):
    """A search (or recall) ran: its query, options and hit refs; sets last_retrieved_at only.

    v2: the options (filters naming participants, elements, threads) are content like the
    query, encrypted under the ``namespace`` key; a v1 row holds them in clear and reads the
    same."""

    stream = WEIGHTS
    schema_version = 2
    type: Literal["RetrievalBatchRecorded"] = "RetrievalBatchRecorded"
    batch_id: str
    kind: BatchKind
    query: str
    options: Annotated[dict[str, Any], AfterValidator(canonical)] = Field(default_factory=dict)
    refs: list[str]
    """Every id a hit carries: event ids; fact and element ids; message and block ids."""
    event_ids: list[str] = Field(default_factory=list)
    element_ids: list[str] = Field(default_factory=list)


@register
class AssessmentRecorded(DomainEvent):
    """The evidence gate normalised an assessment of one logged batch."""

    stream = WEIGHTS
    type: Literal["AssessmentRecorded"] = "AssessmentRecorded"
    assessment_id: str
    batch_id: str | None
    assessment: AssessmentData


@register
class MemoryUseRecorded(DomainEvent):
    """An answer used these memories: reinforces the receipt's reinforced ids, once."""

    stream = WEIGHTS
    type: Literal["MemoryUseRecorded"] = "MemoryUseRecorded"
    receipt: ReceiptData


class _Governance(DomainEvent):
    stream = WEIGHTS
    event_id: str


@register
class EventPinned(_Governance):
    """Pinned: effective weight 1 until unpinned."""

    type: Literal["EventPinned"] = "EventPinned"


@register
class EventUnpinned(_Governance):
    """Unpinned: the weight follows decay again."""

    type: Literal["EventUnpinned"] = "EventUnpinned"


@register
class EventForgotten(_Governance):
    """Forgotten: out of retrieval, weight 0; reversible by restore."""

    type: Literal["EventForgotten"] = "EventForgotten"


@register
class EventRestored(_Governance):
    """Restored from forgotten or archived to the status it had before."""

    type: Literal["EventRestored"] = "EventRestored"


@register
class EventArchived(_Governance):
    """Archived: out of retrieval, weight 0, kept for provenance; reversible by restore."""

    type: Literal["EventArchived"] = "EventArchived"


@register
class LogCheckpointed(DomainEvent):
    """The namespace's head at ``position`` had chain hash ``head_hash``, signed with the
    checkpoint key (HMAC-SHA256, ``stratagate.anchors.sign``; stored as ``seal``): a log re-hashed up to it by
    someone without the key no longer matches. No read model folds it."""

    stream = WEIGHTS
    type: Literal["LogCheckpointed"] = "LogCheckpointed"
    position: int
    head_hash: str
    seal: str


class _Erasure(DomainEvent):
    """Content was erased by destroying its data keys (crypto-shredding): the rows stay and
    verify, their content fields read as redacted. Records who asked, why and which keys
    went; never any content."""

    stream = WEIGHTS
    reason: str
    by: str
    """Who asked (the operator's user, host and process as the shell saw them)."""
    keys: list[str]
    """The ids of the data keys destroyed."""


@register
class ThreadErased(_Erasure):
    """A thread's messages, blocks, cards and the facts drawn from them were erased."""

    type: Literal["ThreadErased"] = "ThreadErased"
    thread_id: str | None


@register
class EventErased(_Erasure):
    """One event card's text and the facts drawn from it were erased."""

    type: Literal["EventErased"] = "EventErased"
    event_id: str


@register
class NamespaceErased(_Erasure):
    """Every data key of the namespace was destroyed: all its content reads as erased."""

    type: Literal["NamespaceErased"] = "NamespaceErased"


ERASURE_TYPES: frozenset[str] = frozenset({"ThreadErased", "EventErased", "NamespaceErased"})
"""The erasures: a writer's append is fenced against any that came after it decided."""

__all__ = [
    "ERASURE_TYPES",
    "AssessmentRecorded",
    "BatchKind",
    "EventArchived",
    "EventErased",
    "EventForgotten",
    "EventPinned",
    "EventRestored",
    "EventUnpinned",
    "LogCheckpointed",
    "MemoryUseRecorded",
    "NamespaceErased",
    "RetrievalBatchRecorded",
    "ThreadErased",
]
