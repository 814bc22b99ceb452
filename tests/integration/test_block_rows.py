"""The blocks read model keeps messages as compact rows; a restore rebuilds the same form."""

from __future__ import annotations

from pathlib import Path

from projections.blocks import BlocksModel, MessageRow
from projections.replay import replay, restore_snapshot, save_snapshot
from projections.state import NamespaceState
from stratagate import StrataGate
from stratagate.store.keys import keys_for
from stratagate.store.sql import open_event_store


def _memory(path: str) -> None:
    """Two threads, named speakers, tool calls, sealed blocks and an open tail."""
    with StrataGate.open(path, "default", block_turn_size=2, summarizer="offline") as memory:
        for i in range(5):
            memory.append_turn(
                {"content": f"Shall we ship build {i}?", "name": "Caroline"},
                {"content": f"Build {i} is out.", "name": "Melanie"},
                thread_id="release" if i % 2 else None,
                assistant_tool_calls=[
                    {"name": "deploy", "arguments": {"build": i}, "result": {"ok": True}}
                ],
            )


def _compact(blocks: BlocksModel) -> None:
    """Every message a row; a block's L4 the L3 object when equal; one object per thread id."""
    rows = [row for block in blocks.blocks.values() for row in block.rows]
    rows += [row for thread in blocks.threads.values() for turn in thread.tail for row in turn.rows]
    assert rows and all(type(row) is MessageRow for row in rows)
    for block in blocks.blocks.values():
        if block.l4_readable == block.l3_condensed:
            assert block.l4_readable is block.l3_condensed
    for thread in blocks.threads.values():
        held = [r for turn in thread.tail for r in turn.rows]
        held += [r for block_id in thread.block_ids for r in blocks.blocks[block_id].rows]
        assert all(row.thread_id is thread.thread_id for row in held)


def test_restored_blocks_equal_the_replayed_ones_message_by_message(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    _memory(path)
    with open_event_store(path) as store:
        replayed = replay(store, "default")
        snapshot = save_snapshot(store, replayed, "test")
        restored = restore_snapshot(snapshot, keys_for(store, "default"))
    assert isinstance(restored, NamespaceState)
    before, after = replayed.blocks, restored.blocks
    assert before.blocks and any(t.tail for t in before.threads.values())
    assert sorted(after.messages) == sorted(before.messages)
    for message_id in before.messages:
        message = after.message(message_id)
        assert message is not None and message == before.message(message_id)
    assert any(m.tool_calls and m.name for b in after.blocks.values() for m in b.l5_raw)
    for thread_id in (None, "release"):
        assert after.tail_messages(thread_id) == before.tail_messages(thread_id)
    _compact(before)
    _compact(after)


def test_a_seal_hands_back_the_block_as_it_reads_afterwards() -> None:
    """The sealed block a turn returns carries the messages its seal made; they are the ones
    the block's rows give when it is read again."""
    with StrataGate.in_memory("ns", block_turn_size=2) as memory:
        sealed = []
        for i in range(6):
            result = memory.append_turn(
                {"content": f"question {i}", "name": "Caroline"},
                f"answer {i}",
                thread_id="t" if i % 2 else None,
            )
            if result.sealed_block is not None:
                sealed.append(result.sealed_block)
        assert len(sealed) == 2
        for block in sealed:
            assert block == memory.get_block(block.id)
