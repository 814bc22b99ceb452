"""Browsing the past (``state_at(..., search=False)``, the Memory UI's slider) equals replay: a
state at any position, reached in any order (folded forward from a kept state, or from the
start), has the digests of ``replay(until=)``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.replay import replay
from stratagate.cli.demo import sample_turns
from stratagate.errors import InvalidInputError
from stratagate.memory import StrataGate
from stratagate.read.past import PAST_MODELS, PastStates
from stratagate.store import EventStore
from stratagate.store.sql import open_event_store

OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("past") / "memory.db"
    with StrataGate.open(path, "other", block_turn_size=2, **OFFLINE) as other:
        other.append_turn("Another tenant's turn.", "Interleaved.")
    turns = sample_turns()[:30]
    with StrataGate.open(path, "ns", block_turn_size=4, **OFFLINE) as memory:
        for i, turn in enumerate(turns):
            memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
            if i == 15:
                with StrataGate.open(path, "other", **OFFLINE) as other:
                    other.append_turn("Another tenant, in between.", "Ok.")
        memory.forget_event(memory.list_events()[0].id)
    return path


@pytest.fixture(scope="module")
def store(path: Path) -> Iterator[EventStore]:
    with open_event_store(path, read_only=True, create=False) as opened:
        yield opened


def positions(store: EventStore) -> list[int]:
    return [row.global_position for row in store.read("ns")]


@settings(max_examples=25)
@given(data=st.data())
def test_any_order_of_positions_gives_replays_state(store: EventStore, data: st.DataObject) -> None:
    known = positions(store)
    asked = data.draw(st.lists(st.integers(0, known[-1] + 3), min_size=1, max_size=6))
    past = PastStates(store, "ns", kept=2)
    for position in asked:
        view = past.view_at(position)
        expected = replay(store, "ns", until=position, components=PAST_MODELS)
        assert view.position == expected.position
        assert view.state.digests() == expected.digests()


def test_the_log_is_decoded_once_and_forgotten_on_request(store: EventStore) -> None:
    past = PastStates(store, "ns")
    head = positions(store)[-1]
    past.view_at(head // 2)
    decoded = len(past.records)
    past.view_at(head // 3)
    assert len(past.records) == decoded  # nothing before it was read again
    past.view_at(head)
    assert [r.position for r in past.records] == positions(store)
    past.forget()
    assert not past.records and not past.states


def test_the_facade_browses_the_past_read_only(store: EventStore, path: Path) -> None:
    known = positions(store)
    with StrataGate.open(path, "ns", read_only=True) as memory:
        for position in (known[-1], known[len(known) // 2], known[len(known) // 2] + 1, 0):
            view = memory.state_at(position, search=False)
            expected = replay(store, "ns", until=position, components=PAST_MODELS)
            assert view.state.digests() == expected.digests()
            assert view.stats(0).events == len(expected.events.records)
        full = memory.state_at(known[-1])
        assert full.search_events("pnpm") and "search" in full.state.models
        with pytest.raises(InvalidInputError):
            memory.state_at(1, search="no")  # type: ignore[arg-type]
