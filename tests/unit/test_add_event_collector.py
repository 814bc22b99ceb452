"""A large batch of cards pauses the cyclic collector: what ``add_events`` keeps goes to the
oldest generation as it stands, not through young collections toward full ones. One card does
not pause it, so the host's own young objects stay young."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from projections.card_rows import CardRow, EventRecord
from stratagate import StrataGate
from stratagate.actors.extractor import PAUSE_COLLECTOR_FROM


@pytest.fixture
def memory() -> Iterator[StrataGate]:
    with StrataGate.in_memory(block_turn_size=2) as memory:
        memory.append_turn("we compare options", "noted")
        memory.append_turn("and record each decision", "ok")
        yield memory


def cards(memory: StrataGate, count: int) -> list[dict[str, str]]:
    block_id = memory.list_blocks()[0].id
    return [
        {"title": f"chose option {i}", "summary": f"option {i} won", "source_block_id": block_id}
        for i in range(count)
    ]


def young() -> list[object]:
    return gc.get_objects(generation=0) + gc.get_objects(generation=1)


def test_a_large_batch_is_held_in_the_oldest_generation(memory: StrataGate) -> None:
    assert gc.isenabled()
    gc.collect()
    added = memory.add_events(cards(memory, PAUSE_COLLECTOR_FROM))
    ids = {card.id for card in added}
    kept = [
        row
        for row in young()
        if (isinstance(row, CardRow) and row.id in ids)
        or (isinstance(row, EventRecord) and row.card.id in ids)
    ]
    assert kept == []
    held = [row for row in gc.get_objects(generation=2) if isinstance(row, CardRow)]
    assert ids <= {row.id for row in held}
    assert [memory.get_event(card.id) for card in added] == added


def test_one_card_leaves_the_hosts_young_objects_young(memory: StrataGate) -> None:
    """No collection runs during the call (thresholds raised), so only a pause's end could move
    the host's object out of the youngest generation."""
    (card,) = cards(memory, 1)
    thresholds = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1_000_000, 10, 10)
    try:
        hosts: list[object] = [["made by the host"]]
        memory.add_event(card)
        assert any(obj is hosts for obj in gc.get_objects(generation=0))
    finally:
        gc.set_threshold(*thresholds)
