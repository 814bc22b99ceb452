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
