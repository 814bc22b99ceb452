"""Event and element weight: adoption-based decay over turns, with floors, pins and caps.

``w(t, n) = max(floor, exp(-lambda(n) * t))`` with ``lambda(n) = 0.15 / (1 + 1.5 ln n)``,
``t`` the turns since the last adoption and ``n`` the adoption count. Precedence, strongest
first: forgotten/archived (0) > pinned (1) > caps (``forced_cap``, superseded 0.1) > floor.
"""

from __future__ import annotations

import math
from typing import Any, get_args

from stratagate.errors import InvalidInputError
from stratagate.models import Criticality, EventStatus, MemoryWeight, parse_input

BASE_ADOPTION_LAMBDA = 0.15
SUPERSEDED_CAP = 0.1
CRITICALITY_FLOORS: dict[str, float] = {
    "routine": 0.0,
    "preference": 0.3,
    "identity": 0.9,
    "safety": 1.0,
}
_STATUSES = frozenset(get_args(EventStatus))


def criticality_floor(criticality: Criticality) -> float:
    """The minimum weight a memory of this criticality keeps."""
    try:
        return CRITICALITY_FLOORS[criticality]
    except (KeyError, TypeError) as exc:
        raise InvalidInputError(f"unknown criticality {criticality!r}") from exc


def adoption_lambda(n: int) -> float:
    """The decay rate after ``n >= 1`` recorded adoptions; more adoptions decay more slowly."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"adoption count must be an int >= 1, got {n!r}")
    return BASE_ADOPTION_LAMBDA / (1 + 1.5 * math.log(n))


def memory_weight(weight: MemoryWeight | Any, status: EventStatus, current_turn: int) -> float:
    """The effective weight at ``current_turn`` (see the module docstring for precedence)."""
    state = parse_input(MemoryWeight, weight, what="weight")
    if not isinstance(status, str) or status not in _STATUSES:
        raise InvalidInputError(f"unknown status {status!r}")
    if isinstance(current_turn, bool) or not isinstance(current_turn, int) or current_turn < 0:
        raise InvalidInputError(f"current_turn must be an int >= 0, got {current_turn!r}")
    if status in ("forgotten", "archived"):
        return 0.0
    if state.pinned:
        return 1.0
    age = max(0, current_turn - state.last_adopted_turn)
    value = max(state.floor_weight, math.exp(-adoption_lambda(state.mention_count) * age))
    if state.forced_cap is not None:
        value = min(value, state.forced_cap)
    if status == "superseded":
        value = min(value, SUPERSEDED_CAP)
    return value


__all__ = [
    "BASE_ADOPTION_LAMBDA",
    "CRITICALITY_FLOORS",
    "SUPERSEDED_CAP",
    "adoption_lambda",
    "criticality_floor",
    "memory_weight",
]
