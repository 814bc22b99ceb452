"""Event weight: adoption decay, criticality floors, pins and caps."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.memory_weight import (
    SUPERSEDED_CAP,
    adoption_lambda,
    criticality_floor,
    memory_weight,
)
from stratagate.errors import InvalidInputError
from stratagate.models import MemoryWeight


@pytest.mark.parametrize(
    ("criticality", "floor"),
    [("routine", 0.0), ("preference", 0.3), ("identity", 0.9), ("safety", 1.0)],
)
def test_criticality_floors(criticality: str, floor: float) -> None:
    assert criticality_floor(criticality) == floor  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["urgent", "", None])
def test_unknown_criticality_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        criticality_floor(bad)  # type: ignore[arg-type]


def test_adoption_lambda() -> None:
    assert adoption_lambda(1) == pytest.approx(0.15)
    assert adoption_lambda(3) == pytest.approx(0.15 / (1 + 1.5 * math.log(3)))
    assert adoption_lambda(10) < adoption_lambda(2) < adoption_lambda(1)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidInputError):
            adoption_lambda(bad)  # type: ignore[arg-type]


def test_fresh_memory_decays_by_turns_since_adoption() -> None:
    weight = MemoryWeight(mention_count=1, last_adopted_turn=10)
    assert memory_weight(weight, "active", 10) == 1.0
    assert memory_weight(weight, "active", 5) == 1.0  # never "before" its anchor
    assert memory_weight(weight, "active", 20) == pytest.approx(math.exp(-1.5))
    twice = MemoryWeight(mention_count=2, last_adopted_turn=10)
    assert memory_weight(twice, "active", 20) > memory_weight(weight, "active", 20)


def test_floor_holds_the_weight_up() -> None:
    weight = {"last_adopted_turn": 0, "floor_weight": 0.3}
    assert memory_weight(weight, "active", 1000) == 0.3
    assert memory_weight(weight, "active", 1) > 0.3


def test_pin_beats_decay_caps_and_supersession() -> None:
    weight = MemoryWeight(pinned=True, forced_cap=0.2)
    assert memory_weight(weight, "active", 10_000) == 1.0
    assert memory_weight(weight, "superseded", 10_000) == 1.0


@pytest.mark.parametrize("status", ["forgotten", "archived"])
def test_forgotten_and_archived_weigh_nothing_even_when_pinned(status: str) -> None:
    weight = MemoryWeight(pinned=True, floor_weight=1.0)
    assert memory_weight(weight, status, 0) == 0.0  # type: ignore[arg-type]


def test_caps_beat_the_floor() -> None:
    safety = MemoryWeight(floor_weight=1.0)
    assert memory_weight(safety, "superseded", 0) == SUPERSEDED_CAP == 0.1
    capped = MemoryWeight(floor_weight=0.9, forced_cap=0.25)
    assert memory_weight(capped, "active", 0) == 0.25
    assert memory_weight(capped, "superseded", 0) == 0.1


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(InvalidInputError):
        memory_weight(MemoryWeight(), "deleted", 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        memory_weight(MemoryWeight(), "active", -1)
    with pytest.raises(InvalidInputError):
        memory_weight({"mention_count": 0}, "active", 0)


WEIGHTS = st.builds(
    MemoryWeight,
    mention_count=st.integers(1, 50),
    last_adopted_turn=st.integers(0, 100),
    pinned=st.booleans(),
    floor_weight=st.floats(0, 1),
    forced_cap=st.none() | st.floats(0, 1),
)
STATUSES = st.sampled_from(["active", "superseded", "forgotten", "archived"])


@given(WEIGHTS, STATUSES, st.integers(0, 300))
def test_weight_is_bounded_and_never_rises_without_adoption(
    weight: MemoryWeight, status: str, turn: int
) -> None:
    now = memory_weight(weight, status, turn)  # type: ignore[arg-type]
    later = memory_weight(weight, status, turn + 1)  # type: ignore[arg-type]
    assert 0.0 <= later <= now <= 1.0


@given(WEIGHTS, st.integers(0, 300))
def test_more_adoptions_never_lower_the_weight(weight: MemoryWeight, turn: int) -> None:
    more = weight.model_copy(update={"mention_count": weight.mention_count + 1})
    assert memory_weight(more, "active", turn) >= memory_weight(weight, "active", turn)
