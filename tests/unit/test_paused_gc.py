"""Folding pauses the cyclic collector; nested and overlapping pauses leave it as they found it."""

from __future__ import annotations

import gc

from projections.replay import paused_gc


def test_the_collector_is_on_again_only_after_the_last_of_nested_pauses() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_leaving_a_pause_does_not_walk_what_it_made() -> None:
    """What a pause made is handed to the oldest generation, so the first allocation after it
    does not start a young collection over the whole folded state (all of it still young)."""
    started: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        with paused_gc():
            kept = [[n] for n in range(20_000)]
        after = [[n] for n in range(10)]  # far fewer than a young collection's threshold
    finally:
        gc.callbacks.remove(record)
    assert started == [] and len(kept) + len(after) == 20_010
    assert any(item is kept[0] for item in gc.get_objects(generation=2))


def test_cycles_made_during_a_pause_are_still_collected() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    gc.collect()
    with paused_gc():
        first, second = Node(), Node()
        first.other, second.other = second, first
        del first, second
    assert gc.collect() >= 2
