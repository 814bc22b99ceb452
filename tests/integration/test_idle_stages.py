"""An inline memory skips a derived stage (seal, extract, project) when nothing it looks at
changed since it last ran: a turn that fills no tail costs one delivery, not four. Skipping
must never lose work: every block seals at its boundary, deferred turns are followed up by the
next turn whatever its thread, and rows of another handle make every stage run again."""

from __future__ import annotations

from pathlib import Path

from projections.replay import replay
from stratagate import StrataGate


def _blocks(memory: StrataGate, thread: str) -> list[tuple[int, int]]:
    return [(b.start_turn, b.end_turn) for b in memory.list_blocks(thread)]


def test_idle_stages_are_skipped_and_blocks_seal_at_their_boundary() -> None:
    with StrataGate.in_memory(block_turn_size=3) as memory:
        sealed = [
            memory.append_turn(f"question {i}", f"answer {i}", thread_id="t1").sealed_block
            for i in range(7)
        ]
        assert [block is not None for block in sealed] == [i in (2, 5) for i in range(7)]
        assert _blocks(memory, "t1") == [(1, 3), (4, 6)]
        runtime = memory._runtime
        assert runtime.skipped_stages >= 3 * 4  # the four turns that filled no tail: all three
        live = runtime.live.state
        assert replay(runtime.store, live.namespace).digests() == live.digests()


def test_deferred_turns_are_sealed_by_the_next_turn_of_another_thread() -> None:
    with StrataGate.in_memory(block_turn_size=3) as memory:
        memory.append_turn("q", "a", thread_id="t1")
        for i in range(2):
            memory.append_turn(f"q{i}", f"a{i}", thread_id="t1", defer_processing=True)
        assert _blocks(memory, "t1") == []
        result = memory.append_turn("other", "thread", thread_id="t2")
        assert result.sealed_block is not None and result.sealed_block.thread_id == "t1"
        assert _blocks(memory, "t1") == [(1, 3)]


def test_another_handles_rows_make_every_stage_run(tmp_path: Path) -> None:
    database = str(tmp_path / "memory.db")
    with (
        StrataGate.open(database, "shared", block_turn_size=3) as first,
        StrataGate.open(database, "shared", block_turn_size=3) as second,
    ):
        first.append_turn("q", "a", thread_id="t1")
        for i in range(3):  # full, but left for the next turn to seal
            second.append_turn(f"q{i}", f"a{i}", thread_id="t2", defer_processing=True)
        first.append_turn("q", "a", thread_id="t1")
        assert _blocks(first, "t2") == [(1, 3)]
