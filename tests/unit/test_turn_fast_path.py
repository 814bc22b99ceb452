"""A turn alone (``append_turn``: the sealer's single-turn path) appends exactly what the
batch path appends for the same turn (``append_turns`` of that one turn): the same events,
stored text, state digests and outcomes, errors included."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.replay import decode_at
from stratagate import StrataGate
from stratagate.errors import StrataGateError
from stratagate.events.codec import encode_all

SIDES = st.one_of(
    st.sampled_from(["hi", "hello", ""]),
    st.fixed_dictionaries(
        {"content": st.sampled_from(["x", "y"])},
        optional={"id": st.sampled_from(["m1", "m2"]), "name": st.sampled_from(["Ann", None])},
    ),
)
TURNS = st.lists(
    st.fixed_dictionaries(
        {"user": SIDES, "assistant": SIDES},
        optional={
            "thread_id": st.sampled_from(["t1", "t2"]),
            "receipt_id": st.sampled_from(["r1", "r2", "r3"]),
            "created_at": st.sampled_from(
                [datetime(2024, 1, 1, tzinfo=UTC), "2024-02-03T04:05:06+02:00"]
            ),
        },
    ),
    min_size=1,
    max_size=8,
)


def _memory(patch: pytest.MonkeyPatch) -> StrataGate:
    """A memory whose ids, command ids and clock are counters: two runs of the same calls
    make the same log."""
    ids = itertools.count()
    commands = itertools.count()
    ticks = itertools.count()
    start = datetime(2025, 1, 1, tzinfo=UTC)
    patch.setattr("stratagate.memory.new_command_id", lambda: f"cmd_{next(commands)}")
    patch.setattr("stratagate.actors.role.new_command_id", lambda: f"row_{next(commands)}")
    return StrataGate.in_memory(
        block_turn_size=2,
        id_factory=lambda prefix: f"{prefix}_{next(ids)}",
        clock=lambda: start + timedelta(seconds=next(ticks)),
    )


def _run(turns: list[dict[str, Any]], alone: bool) -> tuple[list[Any], list[Any], dict[str, str]]:
    """Each turn appended by itself, as ``append_turn`` (``alone``) or as a batch of one;
    the outcomes, the log's events in clear, the state's digests."""
    outcomes: list[Any] = []
    with pytest.MonkeyPatch.context() as patch, _memory(patch) as memory:
        for turn in turns:
            try:
                if alone:
                    result = memory.append_turn(**turn)
                    outcomes.append((result.turn, result.duplicate, result.sealed_block))
                else:
                    batch = memory.append_turns([turn])
                    sealed = batch.sealed_blocks[-1] if batch.sealed_blocks else None
                    outcomes.append((batch.turns[0], batch.duplicates == 1, sealed))
            except StrataGateError as exc:
                outcomes.append((type(exc), str(exc)))
        live = memory._runtime.live  # type: ignore[attr-defined]
        rows = live.store.read(memory.namespace)
        events = [decode_at(row, live.keys).event for row in rows]
        texts = [encode_all([e], ["x"], None)[0].payload for e in events]
        return outcomes, list(zip(events, texts, strict=True)), live.state.digests()


@settings(max_examples=80, deadline=None)
@given(TURNS)
def test_a_turn_alone_appends_what_a_batch_of_one_appends(turns: list[dict[str, Any]]) -> None:
    assert _run(turns, alone=True) == _run(turns, alone=False)
