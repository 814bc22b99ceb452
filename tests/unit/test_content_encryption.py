"""Content fields are sealed before a payload is hashed, open back to the same event, and read
as fixed redactions once their key is destroyed — by either way of opening, on any host."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from stratagate.events import EVENT_TYPES, decode_payload
from stratagate.events.codec import encode_all, open_data
from stratagate.events.content_fields import CONTENT, ERASED
from stratagate.events.encryption import open_content, open_content_text
from stratagate.store import DataKey
from stratagate.store.in_process import InProcessEventStore
from stratagate.store.keys import Keyring, MasterKey, keys_for
from tests.support.event_examples import build

SECRET = "sesame-xyzzy"
CONTENT_TYPES = sorted(CONTENT)
NOTHING_TO_SEAL = {"MemoryUseRecorded"}
"""Its example carries no audit assessment, so no content."""


def sealed_row(store: InProcessEventStore, name: str, text: str = SECRET) -> tuple[Any, str]:
    event = build(name, text)
    [row] = encode_all([event], ["e:0"], keys_for(store, "ns"))
    return event, row.payload


def model_has(model: type[BaseModel], path: tuple[str, ...]) -> bool:
    """Whether ``path`` (``*`` = list items) names fields of ``model`` and its nested models."""
    current: Any = model
    for step in path:
        if step == "*":
            continue
        fields = getattr(current, "model_fields", {})
        if step not in fields:
            return False
        annotation = fields[step].annotation
        nested = [
            arg
            for arg in (*getattr(annotation, "__args__", ()), annotation)
            if isinstance(arg, type) and issubclass(arg, BaseModel)
        ]
        for arg in getattr(annotation, "__args__", ()):  # list[Model] | None
            nested += [
                inner
                for inner in getattr(arg, "__args__", ())
                if isinstance(inner, type) and issubclass(inner, BaseModel)
            ]
        current = nested[0] if nested else None
    return True


@pytest.mark.parametrize("name", CONTENT_TYPES)
def test_every_content_path_names_real_fields(name: str) -> None:
    cls = EVENT_TYPES[name]
    for group in CONTENT[name]:
        for path in group.fields:
            assert model_has(cls, group.at + path), (name, group.at + path)


@pytest.mark.parametrize("name", CONTENT_TYPES)
def test_content_is_sealed_and_opens_to_the_same_event(name: str) -> None:
    store = InProcessEventStore()
    event, payload = sealed_row(store, name)
    assert SECRET not in payload
    assert ('"$sealed"' in payload) is (name not in NOTHING_TO_SEAL)
    keys = keys_for(store, "ns")
    assert decode_payload(name, type(event).schema_version, payload, keys) == event
    fast = open_content_text(keys, payload) if name not in NOTHING_TO_SEAL else payload
    assert fast is not None and orjson.loads(fast) == event.model_dump(mode="json")
    slow = orjson.loads(payload)
    open_content(keys, name, slow)
    assert slow == event.model_dump(mode="json")


@pytest.mark.parametrize("name", CONTENT_TYPES)
def test_a_destroyed_key_reads_as_the_same_redaction_everywhere(name: str) -> None:
    store = InProcessEventStore()
    event, payload = sealed_row(store, name)
    store.shred("ns", None, "2026-01-01T00:00:00Z")
    version = type(event).schema_version
    opened = [
        decode_payload(name, version, payload, Keyring(store, master=None, encrypt=True).of("ns"))
        for _ in range(2)
    ]
    assert opened[0] == opened[1]
    assert SECRET not in orjson.dumps(opened[0].model_dump(mode="json")).decode()
    keys = keys_for(store, "ns")
    keys.forget()  # a host that cached the key before it went must re-read the key table
    data = open_data(name, payload, keys)
    assert data == opened[0].model_dump(mode="json")
    assert (ERASED in orjson.dumps(data).decode()) is (name not in NOTHING_TO_SEAL)


@given(st.text(min_size=1, max_size=200))
def test_any_text_round_trips_through_both_ways_of_opening(text: str) -> None:
    store = InProcessEventStore()
    event, payload = sealed_row(store, "BlockSealed", text)
    keys = keys_for(store, "ns")
    assert decode_payload("BlockSealed", 1, payload, keys) == event
    fast = open_content_text(keys, payload)
    slow = orjson.loads(payload)
    open_content(keys, "BlockSealed", slow)
    assert fast is not None and orjson.loads(fast) == slow


@pytest.mark.parametrize("index", ["7", "-1", "+0", " 0", "0.0", "\u00b2"])
def test_a_reference_the_row_did_not_seal_leaves_the_fast_path(index: str) -> None:
    """A reference to a value the row's sealed list lacks (or not written as canonical text
    writes an index) is never spliced: the fast path gives up and the table decides."""
    store = InProcessEventStore()
    _, payload = sealed_row(store, "BlockSealed")
    keys = keys_for(store, "ns")
    assert open_content_text(keys, payload) is not None
    assert payload.count(',"i":0}') == 1
    assert open_content_text(keys, payload.replace(',"i":0}', f',"i":{index}}}')) is None
    other = payload.replace('{"$enc":"', '{"$enc":"x', 1)
    assert open_content_text(keys, other) is None


def test_sealing_is_deterministic_so_a_retried_append_is_identical() -> None:
    store = InProcessEventStore()
    event = build("TurnAppended", SECRET)
    keys = keys_for(store, "ns")
    first = encode_all([event], ["e:0"], keys)
    again = encode_all([event], ["e:0"], keys)
    assert first == again


FROZEN_KEY = bytes(range(32))
FROZEN_PAYLOAD = (
    '{"$sealed":{"thread:@1":"8Tok9fHH9lHw0a9EgcRP+1YZQUXvK+finMC8RCvRS3bBkoI="},'
    '"at":"2026-03-02T09:30:15.123456Z","command_id":null,"messages":[{"content":'
    '{"$enc":"thread:@1","i":0},"created_at":"2026-03-02T09:30:15.123456Z","id":"msg_1",'
    '"name":"Lin","role":"user","thread_id":null,"tool_calls":null}],"receipt_id":null,'
    '"thread_id":null,"thread_turn":1,"turn":1,"type":"TurnAppended"}'
)


def test_a_frozen_sealed_payload_still_opens() -> None:
    """The sealed format of stored rows cannot drift: this text was written once."""
    store = InProcessEventStore()
    store.put_keys([DataKey("ns", "thread:@1", FROZEN_KEY, None, "2026-01-01T00:00:00Z")])
    event = decode_payload("TurnAppended", 1, FROZEN_PAYLOAD, keys_for(store, "ns"))
    assert event.messages[0].content == "hello"  # type: ignore[attr-defined]


def test_a_wrapped_key_needs_its_master_key() -> None:
    from stratagate.errors import MasterKeyError

    store = InProcessEventStore()
    master = MasterKey(bytes(32))
    event = build("TurnAppended", SECRET)
    [row] = encode_all([event], ["e:0"], Keyring(store, master=master, encrypt=True).of("ns"))
    assert (
        decode_payload(
            "TurnAppended", 1, row.payload, Keyring(store, master=master, encrypt=True).of("ns")
        )
        == event
    )
    with pytest.raises(MasterKeyError):
        decode_payload(
            "TurnAppended", 1, row.payload, Keyring(store, master=None, encrypt=True).of("ns")
        )
    with pytest.raises(MasterKeyError):
        decode_payload(
            "TurnAppended",
            1,
            row.payload,
            Keyring(store, master=MasterKey(bytes([1]) * 32), encrypt=True).of("ns"),
        )


def test_a_card_key_past_the_cipher_cache_still_opens_and_still_erases() -> None:
    """One key per card, more cards than ciphers kept ready: the first card's content opens
    on the same handle (its cipher rebuilt from its wrapped key row), and once the key table
    holds its tombstone, it reads as redacted there too."""
    from stratagate.events import EventAdded
    from stratagate.store.keys import CIPHER_CACHE

    store = InProcessEventStore()
    keys = Keyring(store, master=MasterKey(bytes(32)), encrypt=True).of("ns")
    card = build("EventAdded", SECRET).event  # type: ignore[attr-defined]
    events = [
        EventAdded(event=card.model_copy(update={"id": f"evt_{i}"}), at=card.created_at)
        for i in range(CIPHER_CACHE + 10)
    ]
    rows = encode_all(events, [f"e:{i}" for i in range(len(events))], keys)
    assert "event:evt_0@1" not in keys._ciphers  # evicted: the test covers the rebuild
    assert decode_payload("EventAdded", 1, rows[0].payload, keys) == events[0]
    store.shred("ns", ["event:evt_0@1"], "2026-01-01T00:00:00Z")
    keys.forget()
    erased = decode_payload("EventAdded", 1, rows[0].payload, keys)
    assert erased.event.title == ERASED  # type: ignore[attr-defined]
    assert decode_payload("EventAdded", 1, rows[-1].payload, keys) == events[-1]
