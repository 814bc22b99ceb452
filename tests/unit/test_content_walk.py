"""The content walk encrypts every event type's fields as it did field by field through
``field_slots``: the same values under the same keys in the same order, so the same payload
text (synthetic nonces make equal plaintexts equal ciphertexts) and the same hash."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.events import DomainEvent, TurnAppended
from stratagate.events.codec import canonical_json, encode_all
from stratagate.events.content_fields import CONTENT, field_slots, objects_at
from stratagate.events.encryption import ENCRYPTED, ENVELOPE
from stratagate.events.payloads import MessageData, ToolTraceData
from stratagate.store.in_process import InProcessEventStore
from stratagate.store.keys import NamespaceKeys, keys_for
from tests.support.event_examples import build

AT = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
TEXTS = st.text(max_size=12)
IDS = st.text(min_size=1, max_size=6)


def walked(keys: NamespaceKeys, event_type: str, data: dict[str, Any]) -> None:
    """The content walk as it was: every field of every group through ``field_slots``."""
    encrypted: dict[str, tuple[Any, list[Any]]] = {}
    for group in CONTENT.get(event_type, ()):
        for obj in objects_at(data, group.at):
            name = group.scope(data, obj)
            for path in group.fields:
                slot = field_slots(obj, path)
                if slot is None:
                    continue
                entry = encrypted.get(name)
                if entry is None:
                    entry = encrypted[name] = (keys.cipher(name), [])
                cipher, values = entry
                holder, field = slot
                values.append(holder[field])
                holder[field] = {ENVELOPE: cipher.key_id, "i": len(values) - 1}
    if encrypted:
        data[ENCRYPTED] = {c.key_id: c.encrypt(values) for c, values in encrypted.values()}
    keys.flush()


def walked_payload(event: DomainEvent, keys: NamespaceKeys) -> str:
    data = event.model_dump(mode="json")
    walked(keys, event.type, data)
    return canonical_json(data)


@pytest.mark.parametrize("name", sorted(CONTENT))
def test_every_content_type_encrypts_as_the_field_by_field_walk(name: str) -> None:
    keys = keys_for(InProcessEventStore(), "ns")
    event = build(name, "sesame")
    [row] = encode_all([event], ["c:0"], keys)
    assert row.payload == walked_payload(event, keys)


MESSAGES = st.builds(
    MessageData,
    id=IDS,
    role=st.sampled_from(["user", "assistant", "tool"]),
    content=TEXTS,
    created_at=st.just(AT),
    thread_id=st.one_of(st.none(), IDS),
    tool_calls=st.one_of(
        st.none(),
        st.lists(st.builds(ToolTraceData, name=IDS, result=st.one_of(st.none(), TEXTS))),
    ),
    name=st.one_of(st.none(), IDS),
)


@settings(max_examples=60)
@given(st.lists(MESSAGES, max_size=4), st.one_of(st.none(), IDS))
def test_a_turn_encrypts_as_the_field_by_field_walk(
    messages: list[MessageData], thread_id: str | None
) -> None:
    keys = keys_for(InProcessEventStore(), "ns")
    event = TurnAppended(turn=1, thread_id=thread_id, thread_turn=1, messages=messages, at=AT)
    [row] = encode_all([event], ["c:0"], keys)
    assert row.payload == walked_payload(event, keys)
