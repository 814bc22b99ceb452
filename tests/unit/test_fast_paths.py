"""The hot path's shortcuts decide exactly as the general rules they stand in front of."""

from __future__ import annotations

import binascii
import hashlib
import hmac
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from projections.blocks import turn_digest
from stratagate.actors.extractor import added_by_caller, batch_job, batch_job_id
from stratagate.actors.sealer import stored_messages
from stratagate.core.arguments import check_argument
from stratagate.errors import InvalidInputError, StorageError
from stratagate.events import EventAdded, ProjectionQueued, SettingsChanged, canonical_json
from stratagate.events.codec import encode_all
from stratagate.events.payloads import CardData, MessageData
from stratagate.models import RawMessage, ToolTrace, trusted
from stratagate.options import new_id
from stratagate.store.in_process import InProcessEventStore
from stratagate.store.keys import DataCipher, canonical_text, keys_for
from stratagate.store.records import EncodedEvent, NewEvent
from stratagate.store.validation import check_batch, check_name
from stratagate.timeutil import STRFTIME_UTC, ensure_utc, format_utc

ZONES = st.sampled_from(
    [None, UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=9))]
)
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(" \t\n\x00\x1fab\u00e9\u3000\ud800")),
    st.sampled_from(["", " ", "\x00", "ns", "a\x00b", "\ud800", " \u3000 ", "é"]),
)


@given(st.datetimes(min_value=datetime(1000, 1, 2), timezones=ZONES))
def test_format_utc_writes_what_strftime_writes(value: datetime) -> None:
    assert format_utc(value) == ensure_utc(value).strftime(STRFTIME_UTC)


def verdict(check: object, *args: object) -> str | None:
    try:
        check(*args)  # type: ignore[operator]
    except InvalidInputError as exc:
        return str(exc)
    return None


def slow_check_name(what: str, value: object) -> None:
    """``check_name`` as it was before its shortcut."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, not {value!r}")
    if "\x00" in value:
        raise InvalidInputError(f"{what} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode text: {exc.reason}") from exc


@given(st.one_of(TEXT, st.none(), st.integers()))
def test_check_name_decides_as_the_full_rule(value: object) -> None:
    assert verdict(check_name, "name", value) == verdict(slow_check_name, "name", value)


@given(st.one_of(TEXT, st.lists(TEXT, max_size=3), st.dictionaries(TEXT, TEXT, max_size=3)))
def test_check_argument_refuses_exactly_the_text_that_is_not_utf8(value: object) -> None:
    texts = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    if isinstance(value, dict):
        texts = [*value.keys(), *value.values()]
    bad = any("\ud800" in text for text in texts)
    if bad:
        with pytest.raises(InvalidInputError, match="UTF-8"):
            check_argument("value", value)
    else:
        check_argument("value", value)


MESSAGES = st.builds(
    RawMessage,
    id=st.text(min_size=1, max_size=8),
    role=st.sampled_from(["user", "assistant", "system", "tool"]),
    content=st.text(max_size=40),
    created_at=st.datetimes(datetime(1900, 1, 1), datetime(2200, 1, 1), timezones=ZONES),
    thread_id=st.one_of(st.none(), st.text(min_size=1, max_size=8)),
    tool_calls=st.one_of(
        st.none(),
        st.lists(
            st.builds(
                ToolTrace,
                name=st.text(max_size=5),
                arguments=st.one_of(
                    st.none(), st.dictionaries(st.text(max_size=3), st.integers(-(2**53), 2**53))
                ),
            ),
            max_size=2,
        ),
    ),
    name=st.one_of(st.none(), st.text(max_size=8)),
)


@given(st.lists(MESSAGES, max_size=4))
def test_stored_messages_are_what_validation_makes(messages: list[RawMessage]) -> None:
    validated = TypeAdapter(list[MessageData]).validate_python(messages, from_attributes=True)
    stored = stored_messages(messages)
    assert stored == validated
    assert [m.model_dump(mode="json") for m in stored] == [
        m.model_dump(mode="json") for m in validated
    ]
    assert [m.model_fields_set for m in stored] == [m.model_fields_set for m in validated]


@given(MESSAGES)
def test_trusted_makes_what_model_construct_makes(message: RawMessage) -> None:
    made = trusted(RawMessage, dict(message.__dict__))
    constructed = RawMessage.model_construct(**message.__dict__)
    assert made == constructed == message
    assert made.model_fields_set == constructed.model_fields_set
    assert made.model_dump(mode="json") == constructed.model_dump(mode="json")
    assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None


def test_only_the_codec_s_rows_skip_the_json_check() -> None:
    event = SettingsChanged(block_turn_size=12, block_decay_lambda=0.1, at=datetime.now(UTC))
    [encoded] = encode_all([event], ["cmd:0"], None)
    assert type(encoded) is EncodedEvent and check_batch([encoded]) == [encoded]
    broken = NewEvent(encoded.event_id, encoded.event_type, 1, encoded.payload[:-1])
    with pytest.raises(InvalidInputError, match="not valid JSON"):
        check_batch([broken])


@given(
    st.lists(
        st.one_of(st.text(max_size=20), st.integers(-(2**53), 2**53), st.none()),
        min_size=1,
        max_size=3,
    )
)
def test_the_synthetic_nonce_is_the_hmac_of_the_values(values: list[object]) -> None:
    material = bytes(range(32))
    text = DataCipher("thread:t@1", material).encrypt(values)
    nonce_key = hmac.digest(material, b"stratagate synthetic nonce", "sha256")
    plaintext = "\n".join(canonical_text(value) for value in values).encode()
    expected = hmac.digest(nonce_key, plaintext, "sha256")[:12]
    assert binascii.a2b_base64(text)[:12] == expected
    assert DataCipher("thread:t@1", material).open(text) == values


def test_a_key_opened_first_still_encrypts_as_a_fresh_cipher_does() -> None:
    """A replay's ciphers are made to open only (no nonce key); asked for to encrypt, the
    key's cipher is a sealing one, writing what a fresh cipher writes, every time."""
    keys = keys_for(InProcessEventStore(), "ns")
    key_id = keys.cipher("thread:t").key_id
    keys.flush()
    keys.forget()
    opener = keys.opener(key_id)
    assert opener is not None and not opener.seals
    with pytest.raises(StorageError, match="open only"):
        opener.encrypt(["a"])
    text = keys.cipher("thread:t").encrypt(["a", 1, None])
    assert opener.open(text) == ["a", 1, None]
    assert keys.cipher("thread:t").encrypt(["a", 1, None]) == text


@pytest.mark.parametrize("prefix", ["evt", "msg", "blk"])
def test_default_ids_are_random_version_4_uuids(prefix: str) -> None:
    """``new_id`` without the ``UUID`` object still gives ``<prefix>_`` and a version 4
    (RFC 4122 variant) UUID's 32 hex digits, each id its own."""
    ids = [new_id(prefix) for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for value in ids:
        head, _, digits = value.partition("_")
        parsed = uuid.UUID(hex=digits)
        assert head == prefix and parsed.hex == digits
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert {value[-1] for value in ids} == set("0123456789abcdef")  # every bit varies


def test_a_callers_card_events_are_the_validated_ones() -> None:
    """``add_events`` builds its ``EventAdded`` and job without validating them again: they
    equal, field for field and in their stored text, what validation makes."""
    at = datetime(2026, 5, 1, 12, 30, tzinfo=UTC)
    card = CardData.model_validate(
        {
            "id": "evt_1",
            "title": "a title",
            "summary": "a summary",
            "source_block_id": "blk_1",
            "temporal": {"mentioned_at": "2026-05-01T12:00:00.000000Z"},
            "created_at": at,
            "updated_at": at,
        }
    )
    added, job = added_by_caller(card, at), batch_job(["evt_1", "evt_2"], at)
    expected_added = EventAdded(event=card, origin="manual", at=at)
    expected_job = ProjectionQueued(
        job_id=batch_job_id("evt_1"), source_event_ids=["evt_1", "evt_2"], at=at
    )
    for fast, slow in ((added, expected_added), (job, expected_job)):
        assert fast == slow
        assert list(fast.__dict__) == list(type(slow).model_fields)
        assert encode_all([fast], ["r:0"], None)[0] == encode_all([slow], ["r:0"], None)[0]
    with pytest.raises(ValueError, match="at least one card"):
        batch_job([], at)


def uncached_digest(thread_id: str | None, messages: list[MessageData]) -> str:
    """``turn_digest`` without its memory of the last call."""
    content = [
        [m.role, m.name, m.content, [t.model_dump(mode="json") for t in m.tool_calls or []]]
        for m in messages
    ]
    return hashlib.sha256(canonical_json([thread_id, content]).encode()).hexdigest()[:16]


@given(
    st.lists(st.lists(MESSAGES, min_size=1, max_size=3), min_size=1, max_size=3),
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from(["a", "b"])), st.integers(0, 2), st.booleans()
        ),
        max_size=8,
    ),
)
def test_turn_digest_answers_as_the_rule_whatever_it_was_asked_before(
    turns: list[list[RawMessage]], calls: list[tuple[str | None, int, bool]]
) -> None:
    stored = [stored_messages(messages) for messages in turns]
    for thread_id, index, shorter in calls:
        messages = stored[index % len(stored)]
        messages = messages[:-1] if shorter else messages
        assert turn_digest(thread_id, messages) == uncached_digest(thread_id, messages)


@given(st.datetimes(min_value=datetime(1, 1, 2), timezones=ZONES))
def test_ensure_utc_is_the_conversion_it_skips_for_utc_values(value: datetime) -> None:
    converted = ensure_utc(value)
    expected = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    assert converted == expected and converted.tzinfo is UTC
    assert (converted.year, converted.hour, converted.microsecond) == (
        expected.year,
        expected.hour,
        expected.microsecond,
    )
