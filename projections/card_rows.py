"""The events model's rows: each card and what happened to it, as slotted objects.

A namespace holds every card it ever stored, so their size is the size of a namespace's
memory: a pydantic card and its pydantic record cost about 2 KB a card, these rows a fraction.
The API's ``EventCard`` is built from a row when it is read (``CardRow.model``); the fold reads
a row's fields as it would a card's (same names). Rows are the read model's own: callers never
change them (a row's lists are tuples).

The snapshot form (``dump_rows`` / ``load_rows``) is rows of plain values, written and read
without pydantic's validation of every card (the rows came from validated events).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from projections.shared import Pool, built
from stratagate.events.payloads import CardData, TemporalData, WeightData, convert
from stratagate.models import (
    Basis,
    Criticality,
    EventCard,
    EventStatus,
    EventTemporal,
    MemoryWeight,
    Precision,
    TemporalStatus,
)

Origin = Literal["extraction", "manual", "import"]


class WeightCache:
    """One ``MemoryWeight`` per distinct initial weight: the cards added at one turn share it
    (frozen), and a stored weight is validated once, not once per card."""

    def __init__(self, pool: Pool[MemoryWeight] | None = None) -> None:
        self._pool: Pool[MemoryWeight] = Pool() if pool is None else pool
        self._by_data: dict[tuple[object, ...], MemoryWeight] = {}
        self._by_snapshot: dict[tuple[object, ...], MemoryWeight] = {}

    def get(self, data: WeightData) -> MemoryWeight:
        """The API weight of a stored one."""
        key = tuple(data.__dict__.values())
        weight = self._by_data.get(key)
        if weight is None:
            weight = self._by_data[key] = self.shared(convert(MemoryWeight, data))
        return weight

    def restored(self, data: dict[str, Any]) -> MemoryWeight:
        """The API weight of a snapshot's dumped one (a snapshot repeats equal weights
        thousands of times: each distinct one is validated once)."""
        key = tuple(data.items())
        weight = self._by_snapshot.get(key)
        if weight is None:
            weight = self._by_snapshot[key] = self.shared(MemoryWeight.model_validate(data))
        return weight

    def shared(self, weight: MemoryWeight) -> MemoryWeight:
        """``weight``, or the equal instance met before."""
        return self._pool.get(weight)


class TemporalCache:
    """One ``TemporalRow`` per distinct stored temporal part among the last ``SIZE`` met: the
    cards of one block (or batch) mostly share theirs (the block's mention time, nothing else),
    so each is validated and held once, not once per card. Bounded: a namespace whose cards all
    differ in time holds no more than that."""

    SIZE = 64

    def __init__(self) -> None:
        self._rows: OrderedDict[tuple[object, ...], TemporalRow] = OrderedDict()

    def get(self, data: TemporalData) -> TemporalRow:
        """The row of a stored temporal part (validated as the API's ``EventTemporal``)."""
        key = tuple(tuple(v) if type(v) is list else v for v in data.__dict__.values())
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = TemporalRow.of(convert(EventTemporal, data))
            if len(self._rows) > self.SIZE:
                self._rows.popitem(last=False)
        return row


class TemporalRow:
    """A card's ``EventTemporal`` as a row (every card has one: its mention time); cards with
    the same time may share one (rows are never changed)."""

    __slots__ = TEMPORAL_FIELDS = (
        "basis",
        "conflicts_with_event_ids",
        "event_type",
        "happened_end",
        "happened_start",
        "mentioned_at",
        "original_text",
        "participants",
        "precision",
        "status",
        "supersedes_event_ids",
    )
    LISTS = ("conflicts_with_event_ids", "participants", "supersedes_event_ids")

    mentioned_at: str | None
    happened_start: str | None
    happened_end: str | None
    original_text: str | None
    precision: Precision | None
    basis: Basis | None
    status: TemporalStatus | None
    participants: tuple[str, ...]
    event_type: str | None
    supersedes_event_ids: tuple[str, ...]
    conflicts_with_event_ids: tuple[str, ...]

    @classmethod
    def of(cls, temporal: EventTemporal) -> TemporalRow:
        row = cls.__new__(cls)
        values = temporal.__dict__
        for name in cls.TEMPORAL_FIELDS:
            value = values[name]
            setattr(row, name, tuple(value) if name in cls.LISTS else value)
        return row

    def data(self) -> dict[str, Any]:
        """The field values in the model's field order, lists as lists (the model's and the
        snapshot's form)."""
        return {
            name: list(getattr(self, name)) if listed else getattr(self, name)
            for name, listed in _TEMPORAL_ORDER
        }

    def model(self) -> EventTemporal:
        """The API's ``EventTemporal`` (no validation: the values came validated)."""
        return built(EventTemporal, self.data())


_TEMPORAL_ORDER = tuple((name, name in TemporalRow.LISTS) for name in EventTemporal.model_fields)
"""``EventTemporal``'s fields in order, each with whether its row holds it as a tuple."""


class CardRow:
    """One stored card's content: the fields of an ``EventCard`` that never change (status,
    supersession, weight and update time live in its ``EventRecord`` and the weights model;
    ``weight`` here is the card's initial one)."""

    __slots__ = (
        "confidence",
        "created_at",
        "criticality",
        "id",
        "narrative",
        "quotes",
        "scope",
        "source_block_id",
        "source_message_ids",
        "summary",
        "tags",
        "temporal",
        "title",
        "weight",
    )

    def __init__(
        self,
        *,
        id: str,
        title: str,
        summary: str,
        narrative: str | None,
        tags: tuple[str, ...],
        quotes: tuple[str, ...],
        source_block_id: str,
        source_message_ids: tuple[str, ...],
        temporal: TemporalRow | None,
        scope: str,
        criticality: Criticality,
        confidence: float,
        weight: MemoryWeight,
        created_at: datetime,
    ) -> None:
        self.id = id
        self.title = title
        self.summary = summary
        self.narrative = narrative
        self.tags = tags
        self.quotes = quotes
        self.source_block_id = source_block_id
        self.source_message_ids = source_message_ids
        self.temporal = temporal
        self.scope = scope
        self.criticality: Criticality = criticality
        self.confidence = confidence
        self.weight = weight
        self.created_at = created_at

    @classmethod
    def of(
        cls, card: CardData, weights: WeightCache, times: TemporalCache | None = None
    ) -> CardRow:
        """The row of a stored card (its temporal part and weight validated as the API's; its
        temporal row shared through ``times`` when given)."""
        temporal = card.temporal
        if temporal is None:
            row = None
        elif times is None:
            row = TemporalRow.of(convert(EventTemporal, temporal))
        else:
            row = times.get(temporal)
        return cls(
            id=card.id,
            title=card.title,
            summary=card.summary,
            narrative=card.narrative,
            tags=tuple(card.tags),
            quotes=tuple(card.quotes),
            source_block_id=card.source_block_id,
            source_message_ids=tuple(card.source_message_ids),
            temporal=row,
            scope=card.scope,
            criticality=card.criticality,
            confidence=card.confidence,
            weight=weights.get(card.weight),
            created_at=card.created_at,
        )

    def temporal_model(self) -> EventTemporal | None:
        """The API's form of the card's time."""
        return None if self.temporal is None else self.temporal.model()

    def model(
        self,
        *,
        status: EventStatus,
        superseded_by: str | None,
        weight: MemoryWeight,
        updated_at: datetime,
    ) -> EventCard:
        """The API's card: this content with the state the caller gives (no validation: every
        value came validated)."""
        values = {  # in EventCard's field order
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "narrative": self.narrative,
            "tags": list(self.tags),
            "quotes": list(self.quotes),
            "source_block_id": self.source_block_id,
            "source_message_ids": list(self.source_message_ids),
            "temporal": self.temporal_model(),
            "scope": self.scope,
            "criticality": self.criticality,
            "confidence": self.confidence,
            "status": status,
            "superseded_by": superseded_by,
            "weight": weight,
            "created_at": self.created_at,
            "updated_at": updated_at,
        }
        return built(EventCard, values)


class EventRecord:
    """One card and what happened to it since."""

    __slots__ = (
        "card",
        "erased",
        "import_batch_id",
        "merged_sources",
        "origin",
        "prior_status",
        "status",
        "superseded_by",
        "updated_at",
    )

    def __init__(
        self,
        card: CardRow,
        *,
        updated_at: datetime,
        origin: Origin,
        import_batch_id: str | None = None,
        status: EventStatus = "active",
        superseded_by: str | None = None,
        prior_status: EventStatus | None = None,
        merged_sources: Sequence[str] = (),
        erased: bool = False,
    ) -> None:
        self.card = card
        self.status: EventStatus = status
        self.superseded_by = superseded_by
        self.prior_status: EventStatus | None = prior_status
        """The status to go back to when a forgotten or archived card is restored."""
        self.updated_at = updated_at
        self.origin: Origin = origin
        self.import_batch_id = import_batch_id
        self.merged_sources = tuple(merged_sources)
        """A tuple (one per card, seldom grown): it leaves the collector's watch."""
        self.erased = erased
        """Its text was erased (crypto-shredding): it reads ``[erased]`` and leaves retrieval."""


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def dump_rows(records: Mapping[str, EventRecord]) -> list[list[Any]]:
    """The records as plain values: ``[id, card values, record values]`` each, in order."""
    out = []
    for event_id, record in records.items():
        card = record.card
        temporal = card.temporal
        weight = card.weight.model_dump()
        weight["last_retrieved_at"] = _time(weight["last_retrieved_at"])
        out.append(
            [
                event_id,
                [
                    card.id,
                    card.title,
                    card.summary,
                    card.narrative,
                    card.tags,
                    card.quotes,
                    card.source_block_id,
                    card.source_message_ids,
                    None if temporal is None else temporal.data(),
                    card.scope,
                    card.criticality,
                    card.confidence,
                    weight,
                    _time(card.created_at),
                ],
                [
                    record.status,
                    record.superseded_by,
                    record.prior_status,
                    _time(record.updated_at),
                    record.origin,
                    record.import_batch_id,
                    record.merged_sources,
                    record.erased,
                ],
            ]
        )
    return out


def _temporal_row(data: dict[str, Any]) -> TemporalRow:
    """A temporal row from its snapshot values as they are: they were a validated
    ``EventTemporal``'s, and the snapshot's hash vouches they are unchanged."""
    row = TemporalRow.__new__(TemporalRow)
    for name in TemporalRow.TEMPORAL_FIELDS:
        value = data[name]
        setattr(row, name, tuple(value) if name in TemporalRow.LISTS else value)
    return row


def row_loader(weights: WeightCache) -> Callable[[list[Any]], EventRecord]:
    """The inverse of ``dump_rows`` for one row (each distinct weight validated once)."""

    def load(row: list[Any]) -> EventRecord:
        _, card_values, record_values = row
        (id_, title, summary, narrative, tags, quotes, block_id, message_ids) = card_values[:8]
        temporal_data, scope, criticality, confidence, weight, created_at = card_values[8:]
        status, superseded_by, prior_status, updated_at = record_values[:4]
        origin, import_batch_id, merged_sources, erased = record_values[4:]
        return EventRecord(
            CardRow(
                id=id_,
                title=title,
                summary=summary,
                narrative=narrative,
                tags=tuple(tags),
                quotes=tuple(quotes),
                source_block_id=block_id,
                source_message_ids=tuple(message_ids),
                temporal=None if temporal_data is None else _temporal_row(temporal_data),
                scope=scope,
                criticality=criticality,
                confidence=confidence,
                weight=weights.restored(weight),
                created_at=datetime.fromisoformat(created_at),
            ),
            status=status,
            superseded_by=superseded_by,
            prior_status=prior_status,
            updated_at=datetime.fromisoformat(updated_at),
            origin=origin,
            import_batch_id=import_batch_id,
            merged_sources=merged_sources,
            erased=erased,
        )

    return load


def load_rows(rows: list[list[Any]], weights: WeightCache) -> dict[str, EventRecord]:
    """The inverse of ``dump_rows``."""
    load = row_loader(weights)
    return {row[0]: load(row) for row in rows}


__all__ = [
    "CardRow",
    "EventRecord",
    "Origin",
    "TemporalCache",
    "TemporalRow",
    "WeightCache",
    "dump_rows",
    "load_rows",
    "row_loader",
]
