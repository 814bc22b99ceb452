"""A batch's new cards share their equal temporal parts and weights (``StoredParts``)."""

from __future__ import annotations

import pytest

from stratagate.actors.extractor import StoredParts
from stratagate.events.payloads import TemporalData, WeightData


def test_equal_parts_are_one_instance_and_different_ones_are_not() -> None:
    parts = StoredParts()
    when = {"mentioned_at": "2026-03-02T09:00:00.000000Z", "participants": ["Ann"]}
    first = parts.get(TemporalData, when)
    assert parts.get(TemporalData, dict(when, participants=["Ann"])) is first
    assert parts.get(TemporalData, dict(when, participants=["Bob"])) is not first
    assert first == TemporalData.model_validate(when)
    weight = parts.get(WeightData, {"last_adopted_turn": 3, "floor_weight": 0.9})
    assert parts.get(WeightData, {"last_adopted_turn": 3, "floor_weight": 0.9}) is weight
    assert parts.get(WeightData, {"last_adopted_turn": 4, "floor_weight": 0.9}) is not weight


def test_a_value_no_key_can_hold_is_validated_alone() -> None:
    with pytest.raises(ValueError):  # validated, not looked up: pydantic refuses the dict
        StoredParts().get(TemporalData, {"participants": [{"not": "text"}]})
