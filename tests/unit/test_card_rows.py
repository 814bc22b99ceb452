"""Card rows give back the card they were made from, through a snapshot too."""

from __future__ import annotations

from projections.card_rows import (
    CardRow,
    EventRecord,
    TemporalCache,
    WeightCache,
    dump_rows,
    load_rows,
)
from stratagate.events import EventAdded
from stratagate.events.payloads import TemporalData, convert
from stratagate.models import EventCard
from tests.support.event_examples import build


def test_a_row_builds_the_card_it_was_made_from_and_survives_a_snapshot() -> None:
    event = build("EventAdded", "a secret plan")
    assert isinstance(event, EventAdded)
    temporal = TemporalData(
        mentioned_at="2026-03-02", happened_start="2026-02", participants=["Ann"], precision="month"
    )
    stored = event.event.model_copy(update={"temporal": temporal, "tags": ["plan"]})
    expected = convert(EventCard, stored)
    row = CardRow.of(stored, WeightCache())
    state = {
        "status": expected.status,
        "superseded_by": expected.superseded_by,
        "weight": expected.weight,
        "updated_at": expected.updated_at,
    }
    card = row.model(**state)
    assert card == expected and repr(card) == repr(expected)
    assert card.model_dump_json() == expected.model_dump_json()
    card.tags.append("changed by a caller")  # the row's values are its own
    assert row.model(**state) == expected
    record = EventRecord(row, updated_at=stored.updated_at, origin="manual")
    [(event_id, restored)] = load_rows(dump_rows({stored.id: record}), WeightCache()).items()
    assert event_id == stored.id and restored.card.model(**state) == expected
    assert dump_rows({stored.id: restored}) == dump_rows({stored.id: record})


def test_cards_of_one_time_share_a_temporal_row_and_the_cache_stays_bounded() -> None:
    event = build("EventAdded", "a secret plan")
    assert isinstance(event, EventAdded)
    weights, times = WeightCache(), TemporalCache()

    def row(card_id: str, mentioned: str) -> CardRow:
        temporal = TemporalData(mentioned_at=mentioned, participants=["Ann"])
        stored = event.event.model_copy(update={"id": card_id, "temporal": temporal})
        made = CardRow.of(stored, weights, times)
        alone = CardRow.of(stored, weights)  # no cache: the same content
        assert made.temporal_model() == alone.temporal_model()
        return made

    first, second = row("evt_1", "2026-03-02"), row("evt_2", "2026-03-02")
    assert first.temporal is second.temporal
    assert row("evt_3", "2026-03-03").temporal is not first.temporal
    for day in range(1, TemporalCache.SIZE + 2):
        row(f"evt_d{day}", f"2026-04-{day % 28 + 1:02d}T{day // 28:02d}:00:00Z")
    assert row("evt_4", "2026-03-02").temporal is not first.temporal  # long evicted
    assert len(times._rows) <= TemporalCache.SIZE
