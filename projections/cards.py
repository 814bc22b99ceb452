"""Event cards: immutable content with status, supersession, merges and import batches.

Weight state lives in the weights model; this model knows which cards exist, in what status,
what superseded what, and which import batch added, superseded or corroborated which card, so
that an import can be undone by an appended event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import Field

from projections.card_rows import (
    CardRow,
    EventRecord,
    TemporalCache,
    WeightCache,
    dump_rows,
    row_loader,
)
from projections.lazy import LazyMap, keyed_of
from projections.read_model import ReadModel, Record, dump_records, handles, load_records
from stratagate.events import (
    EventAdded,
    EventArchived,
    EventErased,
    EventForgotten,
    EventMerged,
    EventRestored,
    EventSuperseded,
    ExternalImportRecorded,
    ExternalImportUndone,
    ExtractionSucceeded,
    NamespaceErased,
    Recorded,
    ThreadErased,
)
from stratagate.models import UtcDatetime

RETRIEVABLE: frozenset[str] = frozenset({"active", "superseded"})
"""Statuses that search and recall may return (superseded ones with their capped weight)."""


class ImportRecord(Record):
    """One external import batch and its effects (for undo)."""

    batch_id: str
    source: str
    block_id: str
    message_ids: list[str]
    item_hashes: list[str]
    added: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    merged: list[tuple[str, str]] = Field(default_factory=list)
    undone: bool = False
    at: UtcDatetime


class EventsModel(ReadModel):
    """Every event card by id, in creation order, with its import batches."""

    name = "events"
    version = 3
    """2: records as card rows (``projections.card_rows``), snapshotted as plain values; 3:
    as a list of rows, not JSON text, so a restore builds them a chunk at a time on first
    read (``projections.lazy``)."""
    keyed_sections = frozenset({"records"})

    def __init__(self) -> None:
        self.records: LazyMap[EventRecord] = LazyMap()
        self.imports: dict[str, ImportRecord] = {}
        self.rank: dict[str, int] = {}
        """Creation rank of each card: derived from the order of ``records``, not snapshotted."""
        self._weights = WeightCache()
        self._times = TemporalCache()

    # -- fold -------------------------------------------------------------------------------

    @handles(ExtractionSucceeded)
    def _extracted(self, event: ExtractionSucceeded, _: Recorded) -> None:
        for stored in event.events:
            card = CardRow.of(stored, self._weights, self._times)
            self.records[card.id] = EventRecord(
                card, updated_at=stored.updated_at, origin="extraction"
            )
            self.rank.setdefault(card.id, len(self.rank))

    @handles(EventAdded)
    def _added(self, event: EventAdded, _: Recorded) -> None:
        card = CardRow.of(event.event, self._weights, self._times)
        self.records[card.id] = EventRecord(
            card,
            updated_at=event.event.updated_at,
            origin=event.origin,
            import_batch_id=event.import_batch_id,
        )
        self.rank.setdefault(card.id, len(self.rank))
        if event.import_batch_id is not None:
            self.imports[event.import_batch_id].added.append(card.id)

    @handles(EventSuperseded)
    def _superseded(self, event: EventSuperseded, _: Recorded) -> None:
        record = self.records[event.event_id]
        record.superseded_by = event.superseded_by
        record.updated_at = event.at
        if record.status in ("forgotten", "archived"):
            record.prior_status = "superseded"
        else:
            record.status = "superseded"
        if event.import_batch_id is not None:
            self.imports[event.import_batch_id].superseded.append(event.event_id)

    @handles(EventForgotten, EventArchived)
    def _retired(self, event: EventForgotten | EventArchived, _: Recorded) -> None:
        record = self.records[event.event_id]
        if record.status not in ("forgotten", "archived"):
            record.prior_status = record.status
        record.status = "forgotten" if isinstance(event, EventForgotten) else "archived"
        record.updated_at = event.at

    @handles(EventRestored)
    def _restored(self, event: EventRestored, _: Recorded) -> None:
        record = self.records[event.event_id]
        record.status = record.prior_status or "active"
        record.prior_status = None
        record.updated_at = event.at

    @handles(ThreadErased, EventErased, NamespaceErased)
    def _erased(self, event: ThreadErased | EventErased | NamespaceErased, _: Recorded) -> None:
        for event_id in erased_card_ids(event, self.records):
            record = self.records[event_id]
            record.erased = True
            record.updated_at = event.at

    @handles(ExternalImportRecorded)
    def _import(self, event: ExternalImportRecorded, _: Recorded) -> None:
        self.imports[event.batch_id] = ImportRecord(
            batch_id=event.batch_id,
            source=event.source,
            block_id=event.block_id,
            message_ids=[m.id for m in event.messages],
            item_hashes=event.item_hashes,
            at=event.at,
        )

    @handles(EventMerged)
    def _merged(self, event: EventMerged, _: Recorded) -> None:
        record = self.records[event.event_id]
        record.merged_sources = (*record.merged_sources, event.source_message_id)
        record.updated_at = event.at
        self.imports[event.import_batch_id].merged.append((event.event_id, event.source_message_id))

    @handles(ExternalImportUndone)
    def _undone(self, event: ExternalImportUndone, _: Recorded) -> None:
        batch = self.imports[event.batch_id]
        batch.undone = True
        added = set(batch.added)
        for event_id in batch.added:
            record = self.records[event_id]
            if record.status != "archived":
                record.prior_status = (
                    record.status if record.status != "forgotten" else record.prior_status
                )
                record.status = "archived"
                record.updated_at = event.at
        for event_id in batch.superseded:
            record = self.records[event_id]
            if record.superseded_by in added:
                record.superseded_by = None
                record.updated_at = event.at
                if record.status == "superseded":
                    record.status = "active"
                elif record.prior_status == "superseded":
                    record.prior_status = "active"
        for event_id, message_id in batch.merged:
            record = self.records[event_id]
            if message_id in record.merged_sources:
                at = record.merged_sources.index(message_id)
                record.merged_sources = record.merged_sources[:at] + record.merged_sources[at + 1 :]
                record.updated_at = event.at

    # -- queries ----------------------------------------------------------------------------

    def retrievable(self, event_id: str) -> bool:
        """Whether search and recall may return the card."""
        record = self.records.get(event_id)
        return record is not None and record.status in RETRIEVABLE and not record.erased

    def imported_hashes(self) -> set[str]:
        """Content hashes of every item of every import that is not undone."""
        return {h for batch in self.imports.values() if not batch.undone for h in batch.item_hashes}

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "records": dump_rows(self.records),
            "imports": dump_records(self.imports, ImportRecord),
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any]) -> Self:
        model = cls()
        model.records = keyed_of(data, "records", row_loader(model._weights))
        model.imports = load_records(ImportRecord, data["imports"])
        model.rank = {event_id: rank for rank, event_id in enumerate(model.records)}
        return model


def touched_event_ids(event: object) -> list[str]:
    """Ids of the event cards whose status or content ``event`` may change."""
    if isinstance(event, ExtractionSucceeded):
        return [card.id for card in event.events]
    if isinstance(event, EventAdded):
        return [event.event.id]
    if isinstance(
        event, EventSuperseded | EventForgotten | EventArchived | EventRestored | EventMerged
    ):
        return [event.event_id]
    return []


def erased_card_ids(
    event: ThreadErased | EventErased | NamespaceErased, records: Mapping[str, EventRecord]
) -> list[str]:
    """The cards an erasure took: every card for a namespace, else those whose key it
    destroyed (``event:<id>@<n>``) and, for ``EventErased``, its card."""
    if isinstance(event, NamespaceErased):
        return list(records)
    ids = {
        key_id.removeprefix("event:").rpartition("@")[0]
        for key_id in event.keys
        if key_id.startswith("event:")
    }
    if isinstance(event, EventErased):
        ids.add(event.event_id)
    return [event_id for event_id in records if event_id in ids]


__all__ = [
    "RETRIEVABLE",
    "EventRecord",
    "EventsModel",
    "ImportRecord",
    "erased_card_ids",
    "touched_event_ids",
]
