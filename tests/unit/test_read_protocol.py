"""The live memory, its time-travel view and its async twin speak one read protocol."""

from __future__ import annotations

import asyncio
import inspect
from datetime import UTC, datetime, timedelta

import pytest

from stratagate import AsyncStrataGate, MemoryView, StrataGate
from stratagate.read.protocol import READ_METHODS, AsyncMemoryReads, MemoryReads

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def params(fn: object) -> list[tuple[str, object, object]]:
    signature = inspect.signature(fn)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values() if p.name != "self"]


@pytest.mark.parametrize("name", READ_METHODS)
@pytest.mark.parametrize("cls", [StrataGate, MemoryView, AsyncStrataGate])
def test_every_reader_has_the_protocols_signature(cls: type, name: str) -> None:
    expected = getattr(AsyncMemoryReads if cls is AsyncStrataGate else MemoryReads, name)
    actual = getattr(cls, name)
    if isinstance(expected, property):
        assert isinstance(actual, property)
        return
    assert params(actual) == params(expected)
    assert inspect.iscoroutinefunction(actual) == (cls is AsyncStrataGate)


def test_state_at_answers_with_the_memorys_names() -> None:
    with StrataGate.in_memory(block_turn_size=1) as memory:
        memory.append_turn("we picked pnpm", "noted", created_at=AT)
        event_card = memory.add_event(
            {
                "title": "pnpm",
                "summary": "the team picked pnpm",
                "source_block_id": memory.list_blocks()[0].id,
            }
        )
        position = memory.history()[-1].position
        memory.append_turn("later talk", "ok", created_at=AT + timedelta(days=1))
        past: MemoryReads = memory.state_at(position)
        live: MemoryReads = memory
        assert isinstance(past, MemoryReads) and isinstance(live, MemoryReads)
        assert past.get_event(event_card.id) == live.get_event(event_card.id)
        assert len(past.list_blocks()) == 1 and len(live.list_blocks()) == 2
        assert [h.id for h in past.search_events("pnpm")] == [event_card.id]


def test_the_async_twin_reads_the_same() -> None:
    async def scenario() -> tuple[int, str]:
        async with AsyncStrataGate.in_memory(block_turn_size=1) as memory:
            reads: AsyncMemoryReads = memory
            assert isinstance(reads, AsyncMemoryReads)
            await memory.append_turn("we picked pnpm", "noted", created_at=AT)
            blocks = await reads.list_blocks()
            hits = await memory.search_raw_memory("pnpm")
            return len(blocks), hits[0].message.content

    assert asyncio.run(scenario()) == (1, "we picked pnpm")
