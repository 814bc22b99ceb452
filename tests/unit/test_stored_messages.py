"""The turn path copies validated raw messages into their stored shape without validating
them again (``stored_messages``): the copy must equal the validated conversion, field for field
and byte for byte once encoded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from stratagate.events.codec import canonical_json
from stratagate.events.payloads import MessageData, convert_all, stored_messages
from stratagate.models import RawMessage

AT = datetime(2026, 12, 2, 15, 0, 0, 123456, tzinfo=UTC)

MESSAGES = [
    {"id": "m1", "role": "user", "content": "hello", "created_at": AT},
    {"id": "m2", "role": "assistant", "content": "", "created_at": AT, "thread_id": "t"},
    {"id": "m3", "role": "system", "content": "be brief", "created_at": "2026-01-01T00:00:00Z"},
    {
        "id": "m4",
        "role": "user",
        "content": "naïve 字 \u2028 text",
        "created_at": datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=5))),
        "name": "Caroline",
    },
    {"id": "m5", "role": "tool", "content": "{}", "created_at": datetime(2026, 1, 1)},
    {
        "id": "m6",
        "role": "assistant",
        "content": "called",
        "created_at": AT,
        "tool_calls": [{"name": "search", "arguments": {"z": 1, "a": [2]}, "result": {"y": 1}}],
    },
    {"id": "m7", "role": "assistant", "content": "none", "created_at": AT, "tool_calls": []},
]


@pytest.mark.parametrize("data", MESSAGES, ids=[m["id"] for m in MESSAGES])
def test_copy_equals_the_validated_conversion(data: dict[str, object]) -> None:
    raw = RawMessage.model_validate(data)
    (copied,) = stored_messages([raw])
    (converted,) = convert_all(MessageData, [raw])
    assert type(copied) is MessageData
    assert copied == converted
    assert copied.model_dump() == converted.model_dump()
    assert canonical_json(copied.model_dump(mode="json")) == canonical_json(
        converted.model_dump(mode="json")
    )


def test_both_models_share_every_field_and_rule() -> None:
    api, stored = RawMessage.model_fields, MessageData.model_fields
    assert api.keys() == stored.keys()
    for name in api.keys() - {"tool_calls"}:  # tool calls are converted, not copied
        assert api[name].annotation == stored[name].annotation, name
        assert api[name].metadata == stored[name].metadata, name
        assert repr(api[name].default) == repr(stored[name].default), name
