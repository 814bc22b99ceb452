"""Block display decay: how many levels a block's view drops as newer blocks are sealed.

``w(age) = exp(-lambda * age)`` with ``age`` the number of blocks sealed in the same thread
after the pointer's anchor. Each threshold of ``DROP_THRESHOLDS`` the weight falls below drops
one level, which for ``lambda = 0.30`` and an L5 anchor gives the spec's schedule exactly:
ages 0-1 → L5, 2 → L4, 3-4 → L3, 5-6 → L2, 7-8 → L1, 9+ → L0.
"""

from __future__ import annotations

import math

from stratagate.errors import InvalidInputError

DEFAULT_BLOCK_LAMBDA = 0.30
MAX_LEVEL = 5
DROP_THRESHOLDS: tuple[float, ...] = (0.6, 0.45, 0.25, 0.14, 0.08)
"""Weight below the i-th threshold drops i+1 levels (w(1)=0.741, w(2)=0.549, w(4)=0.301,
w(5)=0.223, w(6)=0.165, w(7)=0.122, w(8)=0.091, w(9)=0.067 at lambda 0.30)."""


def _check_level(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LEVEL:
        raise InvalidInputError(f"{what} must be an int in 0..{MAX_LEVEL}, got {value!r}")
    return value


def _check_position(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{what} must be an int >= 1, got {value!r}")
    return value


def _check_lambda(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"lambda must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"lambda must be finite and >= 0, got {value!r}")
    return float(value)


def block_weight(
    anchor_position: int, latest_position: int, lambda_: float = DEFAULT_BLOCK_LAMBDA
) -> float:
    """``exp(-lambda * age)``, ``age = max(0, latest_position - anchor_position)``."""
    anchor = _check_position(anchor_position, "anchor_position")
    latest = _check_position(latest_position, "latest_position")
    return math.exp(-_check_lambda(lambda_) * max(0, latest - anchor))


def decayed_level(
    anchor_level: int,
    anchor_position: int,
    latest_position: int,
    lambda_: float = DEFAULT_BLOCK_LAMBDA,
) -> int:
    """The display level now: the anchor level minus the levels the weight drops, floored at 0."""
    level = _check_level(anchor_level, "anchor_level")
    weight = block_weight(anchor_position, latest_position, lambda_)
    dropped = sum(1 for threshold in DROP_THRESHOLDS if weight < threshold)
    return max(0, level - dropped)


def normalize_level(value: object, current_level: int) -> int:
    """A requested level: an int 0-5, ``"L0"``-``"L5"`` or a digit, ``"raw"`` (5), ``"next"``
    or ``None`` (the next level), or ``"previous"``.

    ``next`` is capped at 5 and ``previous`` floored at 0; anything else is ``InvalidInputError``.
    """
    current = _check_level(current_level, "current_level")
    if value is None:
        return min(MAX_LEVEL, current + 1)
    if isinstance(value, str):
        text = value.strip().casefold()
        if text == "raw":
            return MAX_LEVEL
        if text == "next":
            return min(MAX_LEVEL, current + 1)
        if text == "previous":
            return max(0, current - 1)
        digits = text[1:] if text.startswith("l") else text
        if len(digits) == 1 and digits in "012345":
            return int(digits)
        raise InvalidInputError(f"unknown level {value!r}")
    return _check_level(value, "level")


__all__ = [
    "DEFAULT_BLOCK_LAMBDA",
    "DROP_THRESHOLDS",
    "MAX_LEVEL",
    "block_weight",
    "decayed_level",
    "normalize_level",
]
