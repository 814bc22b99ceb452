"""One read protocol for the live memory, its time-travel views and its async twin.

``StrataGate``, the ``MemoryView`` that ``state_at`` returns and anything else that answers
reads implement ``MemoryReads`` with the same names and signatures, so code written against
one works against the other (``memory.state_at(p).get_event(id)``) and a type checker sees it;
``AsyncStrataGate`` implements ``AsyncMemoryReads``, the same methods awaitable. Searches are
part of it: the live memory logs each as a retrieval batch (its ``HitList`` carries the batch
id), a view of the past logs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from stratagate.models import (
    ElementCard,
    ElementProjectionJob,
    EventCard,
    ExtractionJob,
    MemoryBlock,
    RawMessage,
    UsageReceipt,
)
from stratagate.results import BlockContextEntry, ElementHit, EventHit, ExpandedEvent, RawHit


@runtime_checkable
class MemoryReads(Protocol):
    """What every readable memory answers."""

    @property
    def namespace(self) -> str: ...

    @property
    def turn(self) -> int: ...

    def get_block(self, block_id: str) -> MemoryBlock: ...

    def list_blocks(self, thread_id: str | None = None) -> list[MemoryBlock]: ...

    def list_open_tail(self, thread_id: str | None = None) -> list[RawMessage]: ...

    def get_block_context(self, thread_id: str | None = None) -> list[BlockContextEntry]: ...

    def get_event(self, event_id: str) -> EventCard: ...

    def list_events(self) -> list[EventCard]: ...

    def event_weight(self, event_id: str) -> float: ...

    def expand_event(self, event_id: str) -> ExpandedEvent: ...

    def expand_element(self, element_id: str, at: datetime | str | None = None) -> ElementCard: ...

    def list_elements(self) -> list[ElementCard]: ...

    def list_extraction_jobs(self) -> list[ExtractionJob]: ...

    def list_element_projection_jobs(self) -> list[ElementProjectionJob]: ...

    def list_usage_receipts(self) -> list[UsageReceipt]: ...

    def has_ingestion_receipt(self, receipt_id: str) -> bool: ...

    def search_events(
        self,
        query: str,
        *,
        limit: int = 6,
        temporal_intent: str | None = None,
        participants: Sequence[str] | None = None,
        event_type: str | None = None,
        happened_from: datetime | str | None = None,
        happened_to: datetime | str | None = None,
    ) -> list[EventHit]: ...

    def search_elements(
        self, query: str, *, limit: int = 8, name: str | None = None, type: str | None = None
    ) -> list[ElementHit]: ...

    def search_raw_memory(
        self, query: str, *, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]: ...


@runtime_checkable
class AsyncMemoryReads(Protocol):
    """``MemoryReads``, awaitable (what ``AsyncStrataGate`` answers)."""

    @property
    def namespace(self) -> str: ...

    async def get_block(self, block_id: str) -> MemoryBlock: ...

    async def list_blocks(self, thread_id: str | None = None) -> list[MemoryBlock]: ...

    async def list_open_tail(self, thread_id: str | None = None) -> list[RawMessage]: ...

    async def get_block_context(self, thread_id: str | None = None) -> list[BlockContextEntry]: ...

    async def get_event(self, event_id: str) -> EventCard: ...

    async def list_events(self) -> list[EventCard]: ...

    async def event_weight(self, event_id: str) -> float: ...

    async def expand_event(self, event_id: str) -> ExpandedEvent: ...

    async def expand_element(
        self, element_id: str, at: datetime | str | None = None
    ) -> ElementCard: ...

    async def list_elements(self) -> list[ElementCard]: ...

    async def list_extraction_jobs(self) -> list[ExtractionJob]: ...

    async def list_element_projection_jobs(self) -> list[ElementProjectionJob]: ...

    async def list_usage_receipts(self) -> list[UsageReceipt]: ...

    async def has_ingestion_receipt(self, receipt_id: str) -> bool: ...

    async def search_events(
        self,
        query: str,
        *,
        limit: int = 6,
        temporal_intent: str | None = None,
        participants: Sequence[str] | None = None,
        event_type: str | None = None,
        happened_from: datetime | str | None = None,
        happened_to: datetime | str | None = None,
    ) -> list[EventHit]: ...

    async def search_elements(
        self, query: str, *, limit: int = 8, name: str | None = None, type: str | None = None
    ) -> list[ElementHit]: ...

    async def search_raw_memory(
        self, query: str, *, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]: ...


READ_METHODS: tuple[str, ...] = tuple(
    name for name in vars(MemoryReads) if not name.startswith("_") and name not in ("turn",)
)
"""The names of the read protocol (a test checks every implementation's signatures)."""

__all__ = ["READ_METHODS", "AsyncMemoryReads", "MemoryReads"]
