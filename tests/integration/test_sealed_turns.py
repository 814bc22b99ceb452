"""A replay folds turns with their content still sealed (``projections.sealed_turns``): the
state equals the live fold of the same events, whatever is read in between, and a turn whose
sealed content is damaged is a typed error when it is read."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.blocks import LazyRows
from projections.replay import apply_at, catch_up, iter_records, replay
from projections.sealed_turns import SealedTurn
from projections.state import NamespaceState
from stratagate.core.filters import RawFilters
from stratagate.errors import LogIntegrityError
from stratagate.events import BlockSealed, DomainEvent, TurnAppended
from stratagate.events.codec import encode_all
from stratagate.events.payloads import MessageData, SummaryData, ToolTraceData
from stratagate.store.keys import keys_for
from stratagate.store.sql import open_event_store
from tests.support.folding import fold_events

NAMESPACE = "sealed"
WORDS = ["paint", "sunset", "lake", "violin", "?", "  ", "", "画画"]
NAMES = [None, "Caroline", "Melanie", "caroline "]
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

message = st.tuples(
    st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join),
    st.sampled_from(NAMES),
    st.integers(0, 10**6),  # microseconds: instants with and without a fraction
    st.booleans(),  # a tool call (such a turn is decoded eagerly)
)
turn = st.tuples(
    st.lists(message, min_size=1, max_size=3),  # an empty turn breaks the raw index on main too
    st.sampled_from([None, "side"]),
    st.booleans(),  # a receipt id (decoded eagerly)
)


def events_of(
    turns: list[tuple[list[tuple[str, str | None, int, bool]], str | None, bool]],
) -> Iterator[DomainEvent]:
    """The turns as ``TurnAppended`` events, every thread sealed (v2) three turns at a time."""
    counts: dict[str | None, int] = {}
    for n, (messages, thread, receipt) in enumerate(turns, start=1):
        at = T0 + timedelta(minutes=n)
        thread_turn = counts[thread] = counts.get(thread, 0) + 1
        yield TurnAppended(
            at=at,
            turn=n,
            thread_id=thread,
            thread_turn=thread_turn,
            receipt_id=f"r{n}" if receipt else None,
            messages=[
                MessageData(
                    id=f"m{n}-{i}",
                    role="user" if i % 2 == 0 else "assistant",
                    content=text,
                    created_at=at + timedelta(microseconds=micros),
                    thread_id=thread,
                    name=name,
                    tool_calls=[ToolTraceData(name="look", result=text)] if tool else None,
                )
                for i, (text, name, micros, tool) in enumerate(messages)
            ],
        )
        if thread_turn % 3 == 0:
            yield BlockSealed(
                at=at,
                block_id=f"b{n}",
                thread_id=thread,
                position=thread_turn // 3,
                start_turn=thread_turn - 2,
                end_turn=thread_turn,
                summary=SummaryData(l0_title="t", l1_summary="s"),
                summarizer="test",
                l3_condensed="l3",
                l4_readable="l4",
            )


def write(path: Path, events: list[DomainEvent]) -> None:
    """Append ``events`` to the namespace, content sealed (as the benchmark's writer does)."""
    with open_event_store(str(path)) as store:
        keys = keys_for(store, NAMESPACE)
        versions: dict[str, int] = {}
        for n, event in enumerate(events):
            version = versions.get(event.stream, 0)
            store.append(NAMESPACE, event.stream, encode_all([event], [f"e{n}"], keys), version)
            versions[event.stream] = version + 1


def observed(state: NamespaceState) -> object:
    """What readers see of the turns: raw hits for each word, every block's and tail's
    messages, the speakers table."""
    blocks = state.blocks
    return (
        [
            state.search.search_raw(word, limit=20, filters=RawFilters())
            for word in WORDS
            if word.strip()
        ],
        [[m.model_dump() for m in blocks.messages_of(block_id)] for block_id in blocks.blocks],
        [[m.model_dump() for m in blocks.tail_messages(key or None)] for key in blocks.threads],
        state.search.speakers,
    )


@pytest.mark.slow  # tens of seconds: a SQLite log written and replayed per example
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns=st.lists(turn, min_size=1, max_size=12), read_at=st.integers(0, 20))
def test_a_replay_with_sealed_turns_equals_the_live_fold(
    tmp_path: Path, turns: list, read_at: int
) -> None:
    events = list(events_of(turns))
    path = tmp_path / f"log-{abs(hash(repr(turns)))}-{read_at}.db"
    write(path, events)
    live = NamespaceState(NAMESPACE)
    fold_events(live, events, last_position=len(events))
    with open_event_store(str(path)) as store:
        replayed = replay(store, NAMESPACE)
        sealed = sum(
            isinstance(r.event, SealedTurn)
            for r in iter_records(store, NAMESPACE, sealed_turns=True)
        )
        assert sealed == sum(1 for m, _, r in turns if not r and not any(t for *_, t in m))
        assert replayed.digests() == live.digests()
        assert observed(replayed) == observed(live)
        # reads part-way (some turns opened, some not) change nothing either
        part = replay(store, NAMESPACE, until=min(read_at, len(events)))
        observed(part)
        catch_up(part, store)
        assert part.digests() == live.digests()


def test_damaged_sealed_content_is_a_typed_error_when_read(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    write(path, list(events_of([([("paint", "Caroline", 0, False)], None, False)])))
    with open_event_store(str(path)) as store:
        state = NamespaceState(NAMESPACE)
        for recorded in iter_records(store, NAMESPACE, sealed_turns=True):
            assert isinstance(recorded.event, SealedTurn)
            bad = dataclasses.replace(recorded.event, sealed="AAAA" + recorded.event.sealed[4:])
            apply_at(state, dataclasses.replace(recorded, event=bad))
        rows = state.blocks.threads[""].tail[0].rows
        assert isinstance(rows, LazyRows)
        with pytest.raises(LogIntegrityError, match="global position 1 cannot be decoded"):
            state.blocks.tail_messages(None)
