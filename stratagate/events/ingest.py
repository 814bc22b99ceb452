"""Events of the ingest stream (written by the sealer): turns, seals, lifts, settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stratagate.events.domain import INGEST, DomainEvent, register
from stratagate.events.payloads import MessageData, StoredLevel, StoredLiftSource, SummaryData


@register
class TurnAppended(DomainEvent):
    """A completed user + assistant turn is durable (its raw messages are L5 from now on)."""

    stream = INGEST
    type: Literal["TurnAppended"] = "TurnAppended"
    turn: int = Field(ge=1)
    """Namespace-wide turn number (all threads)."""
    thread_id: str | None
    thread_turn: int = Field(ge=1)
    """Turn number within the thread."""
    receipt_id: str | None = None
    """The caller's ingestion receipt: a second append with it is a no-op."""
    command_id: str | None = None
    """The façade's id for this append: a retried command is recognised, not appended twice."""
    messages: list[MessageData]


@register
class SealStarted(DomainEvent):
    """The sealer took the open tail's first block of turns and is calling the summarizer.
    v2: records the claiming ``worker``."""

    stream = INGEST
    schema_version = 2
    type: Literal["SealStarted"] = "SealStarted"
    thread_id: str | None
    start_turn: int
    end_turn: int
    attempt: int = Field(ge=1)
    worker: str | None = None
    """Who claimed it (``host:pid:start``, see ``stratagate.store.leases.Holder.token``): a
    claim whose process is gone is recovered by the next handle; a live one is left alone.
    v1 claims have none."""


@register
class BlockSealed(DomainEvent):
    """A block of turns is sealed with all six views (L0-L2 summary, L3, L4, L5 raw).

    Schema v2 seals store no messages (``l5_raw`` is ``None``): L5 is the sealed turns'
    messages, already in the log as their ``TurnAppended`` events. v1 rows keep the list they
    stored, and the fold keeps reading it.
    """

    stream = INGEST
    schema_version = 2
    type: Literal["BlockSealed"] = "BlockSealed"
    block_id: str
    thread_id: str | None
    position: int = Field(ge=1)
    start_turn: int
    end_turn: int
    summary: SummaryData
    summarizer: str
    l3_condensed: str
    l4_readable: str
    l5_raw: list[MessageData] | None = None
    """v1: the block's messages, stored again; v2: ``None``, the sealed turns' messages."""


@register
class SealFailed(DomainEvent):
    """Sealing failed (the summarizer raised, or the sealer died mid-call); the tail stays open."""

    stream = INGEST
    type: Literal["SealFailed"] = "SealFailed"
    thread_id: str | None
    start_turn: int
    end_turn: int
    error: str
    interrupted: bool = False


@register
class BlockLifted(DomainEvent):
    """A block's decay pointer was re-anchored at a level and the latest block position.

    Schema v2 added ``source`` (who asked: user or agent); v1 rows are upcast with an unknown
    (``None``) source, as the spec keeps legacy lifts.
    """

    stream = INGEST
    schema_version = 2
    type: Literal["BlockLifted"] = "BlockLifted"
    block_id: str
    level: StoredLevel
    anchor_position: int = Field(ge=1)
    source: StoredLiftSource | None


@register
class SettingsChanged(DomainEvent):
    """Block size or decay lambda changed (recorded on first open and on every change)."""

    stream = INGEST
    type: Literal["SettingsChanged"] = "SettingsChanged"
    block_turn_size: int = Field(ge=1)
    block_decay_lambda: float = Field(ge=0.0)


__all__ = [
    "BlockLifted",
    "BlockSealed",
    "SealFailed",
    "SealStarted",
    "SettingsChanged",
    "TurnAppended",
]
