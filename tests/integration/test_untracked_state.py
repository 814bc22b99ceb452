"""What a memory keeps for every turn is walked by each full collection of the garbage
collector, so the long-lived state holds as few objects the collector tracks as it can:
message locations and the search index's waiting turns are plain tuples of atoms (which
CPython stops tracking) or flat lists, not an object per message or per turn."""

from __future__ import annotations

import gc

from stratagate import StrataGate

TURNS = 120


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_message_locations_are_not_tracked_by_the_collector() -> None:
    with StrataGate.in_memory(block_turn_size=4) as memory:
        for i in range(10):
            memory.append_turn(f"question {i}", f"answer {i}", thread_id=f"t{i % 3}")
        gc.collect()
        refs = list(memory._runtime.live.state.blocks.messages.values())
        assert len(refs) == 20 and not any(gc.is_tracked(ref) for ref in refs)


def test_a_turn_leaves_few_tracked_objects_behind() -> None:
    """Two message rows, the log's row and a share of each block's (12 turns a block): about
    5 a turn; an object per message location, or per waiting turn of the search index, adds 2
    each."""
    with StrataGate.in_memory(block_turn_size=12) as memory:
        memory.append_turn("warm", "up", thread_id="warm")
        before = _tracked()
        for i in range(TURNS):
            memory.append_turn(f"question {i}", f"answer {i}", thread_id=f"t{i % 2}")
        per_turn = (_tracked() - before) / TURNS
        assert per_turn < 6.0, per_turn
