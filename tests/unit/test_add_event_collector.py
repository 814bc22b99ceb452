"""Adding cards pauses the cyclic collector: what an ``add_event`` keeps goes to the oldest
generation as it stands, not through young collections toward full ones."""

from __future__ import annotations

import gc

from projections.card_rows import CardRow, EventRecord
from stratagate import StrataGate


def test_an_added_card_is_held_in_the_oldest_generation() -> None:
    assert gc.isenabled()
    with StrataGate.in_memory(block_turn_size=2) as memory:
        memory.append_turn("we compare options", "noted")
        memory.append_turn("and record each decision", "ok")
        block_id = memory.list_blocks()[0].id
        gc.collect()
        card = memory.add_event(
            {"title": "chose option A", "summary": "option A won", "source_block_id": block_id}
        )
        young = gc.get_objects(generation=0) + gc.get_objects(generation=1)
        kept = [
            row
            for row in young
            if (isinstance(row, CardRow) and row.id == card.id)
            or (isinstance(row, EventRecord) and row.card.id == card.id)
        ]
        assert kept == []
        held = [row for row in gc.get_objects(generation=2) if isinstance(row, CardRow)]
        assert card.id in {row.id for row in held}
        assert memory.get_event(card.id) == card
