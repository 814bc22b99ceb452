"""Every domain event round-trips through the canonical encoding; old versions upcast on read."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import StorageError
from stratagate.events import EVENT_TYPES, decode_payload, encode
from stratagate.events.codec import UPCASTERS, canonical_json
from tests.support.event_examples import build, examples


def test_every_event_type_has_an_example() -> None:
    assert set(examples("x")) == set(EVENT_TYPES)


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_round_trip_is_exact(name: str) -> None:
    event = build(name)
    row = encode(event, "cmd:0")
    assert row.event_type == name and row.schema_version == type(event).schema_version
    assert decode_payload(row.event_type, row.schema_version, row.payload) == event
    assert encode(event, "cmd:0").payload == row.payload  # stable text


@given(text=st.text(max_size=40), name=st.sampled_from(sorted(EVENT_TYPES)))
def test_round_trip_of_any_text(text: str, name: str) -> None:
    event = build(name, text)
    row = encode(event, "e")
    assert decode_payload(row.event_type, row.schema_version, row.payload) == event


def test_canonical_text_sorts_keys_and_writes_utc() -> None:
    payload = encode(build("TurnAppended"), "e").payload
    data = orjson.loads(payload)
    assert list(data) == sorted(data)
    assert data["at"] == "2026-03-02T09:30:15.123456Z"
    assert payload == canonical_json(data)


def test_a_v1_block_lifted_row_is_upcast() -> None:
    legacy = '{"anchor_position":3,"at":"2024-05-01T10:00:00Z","block_id":"blk_7","level":4,"type":"BlockLifted"}'
    event = decode_payload("BlockLifted", 1, legacy)
    assert event.source is None and event.level == 4 and event.block_id == "blk_7"
    assert ("BlockLifted", 1) in UPCASTERS


def test_unknown_type_and_future_version_are_refused() -> None:
    with pytest.raises(StorageError, match="unknown event type"):
        decode_payload("Nope", 1, "{}")
    with pytest.raises(StorageError, match="newer"):
        decode_payload("BlockLifted", 3, encode(build("BlockLifted"), "e").payload)
    with pytest.raises(StorageError, match="does not validate"):
        decode_payload("EventPinned", 1, '{"type":"EventPinned","at":"2026-01-01T00:00:00Z"}')
