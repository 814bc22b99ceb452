"""Block display decay: the weight, the spec schedule, level requests."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.decay import block_weight, decayed_level, normalize_level
from stratagate.errors import InvalidInputError

# Spec 001: additional ready blocks after an L5 anchor → default display level (lambda 0.30).
SCHEDULE = {0: 5, 1: 5, 2: 4, 3: 3, 4: 3, 5: 2, 6: 2, 7: 1, 8: 1, 9: 0, 10: 0, 25: 0}


@pytest.mark.parametrize(("age", "level"), sorted(SCHEDULE.items()))
def test_spec_schedule_from_an_l5_anchor(age: int, level: int) -> None:
    assert decayed_level(5, 3, 3 + age) == level


def test_block_weight_is_exponential_in_age() -> None:
    assert block_weight(4, 4) == 1.0
    assert block_weight(1, 3) == pytest.approx(0.548812, abs=1e-6)
    assert block_weight(2, 9, lambda_=0.1) == pytest.approx(0.496585, abs=1e-6)
    assert block_weight(9, 2) == 1.0  # an anchor after the latest block has age 0


def test_expanded_anchor_decays_from_its_own_level_and_position() -> None:
    assert decayed_level(3, 10, 10) == 3
    assert decayed_level(3, 10, 12) == 2
    assert decayed_level(3, 10, 14) == 1
    assert decayed_level(1, 10, 30) == 0


def test_zero_lambda_never_decays_and_larger_lambda_decays_faster() -> None:
    assert decayed_level(5, 1, 500, lambda_=0) == 5
    assert decayed_level(5, 1, 3, lambda_=0.6) < decayed_level(5, 1, 3)


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, "0.3", True])
def test_bad_lambda_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        block_weight(1, 2, lambda_=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("anchor", "latest"), [(0, 1), (1, 0), (-3, 2), (1.0, 2), (True, 2)])
def test_positions_must_be_ints_from_one(anchor: object, latest: object) -> None:
    with pytest.raises(InvalidInputError):
        block_weight(anchor, latest)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad_level", [-1, 6, "5", None])
def test_anchor_level_must_be_a_level(bad_level: object) -> None:
    with pytest.raises(InvalidInputError):
        decayed_level(bad_level, 1, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "current", "expected"),
    [
        (0, 3, 0),
        (5, 0, 5),
        ("L4", 0, 4),
        ("l2", 5, 2),
        (" L0 ", 5, 0),
        ("3", 1, 3),
        ("next", 3, 4),
        ("NEXT", 5, 5),
        ("previous", 3, 2),
        ("previous", 0, 0),
        ("raw", 1, 5),
        ("RAW", 5, 5),
        (None, 2, 3),
        (None, 5, 5),
    ],
)
def test_normalize_level(value: object, current: int, expected: int) -> None:
    assert normalize_level(value, current) == expected


@pytest.mark.parametrize("value", [6, -1, "L6", "raws", "", "12", 2.0, True, "prev", [5]])
def test_normalize_level_rejects_anything_else(value: object) -> None:
    with pytest.raises(InvalidInputError):
        normalize_level(value, 2)


def test_normalize_level_checks_the_current_level() -> None:
    with pytest.raises(InvalidInputError):
        normalize_level("next", 7)


@given(
    anchor_level=st.integers(0, 5),
    anchor=st.integers(1, 50),
    age=st.integers(0, 60),
    lambda_=st.floats(0, 3),
)
def test_decay_never_rises_with_age_and_never_exceeds_the_anchor(
    anchor_level: int, anchor: int, age: int, lambda_: float
) -> None:
    now = decayed_level(anchor_level, anchor, anchor + age, lambda_)
    later = decayed_level(anchor_level, anchor, anchor + age + 1, lambda_)
    assert 0 <= later <= now <= anchor_level
