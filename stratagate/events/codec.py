"""Canonical encoding of domain events, and decoding through registered upcasters.

The canonical text is orjson with sorted keys over the event's JSON-mode dump (UTC timestamps
as ISO-8601 with ``Z``): the same text is stored in ``payload`` and hashed into the chain.
Decoding reads a row's ``event_type`` and ``schema_version``, applies the upcasters registered
for each older version in turn, and validates the result with the current event class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from stratagate.errors import StorageError
from stratagate.events.domain import EVENT_TYPES, DomainEvent, Recorded
from stratagate.events.encryption import (
    encrypt_content,
    is_encrypted,
    open_content,
    open_content_text,
)
from stratagate.store.records import EncodedEvent, NewEvent, StoredEvent

if TYPE_CHECKING:
    from stratagate.store.keys import NamespaceKeys

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a payload of schema version v into one of version v + 1."""

UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register ``fn`` as the upcaster of ``event_type`` payloads from ``from_version``."""

    def deco(fn: Upcaster) -> Upcaster:
        key = (event_type, from_version)
        if key in UPCASTERS:
            raise TypeError(f"duplicate upcaster for {key}")
        UPCASTERS[key] = fn
        return fn

    return deco


def canonical_json(data: Any) -> str:
    """Sorted-key orjson text: the one serialisation that is stored and hashed."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()


def encode(event: DomainEvent, event_id: str) -> NewEvent:
    """The row to append for ``event``, its content in clear."""
    return encode_all([event], [event_id], None)[0]


ENCODE_CHUNK = 512
"""Events dumped, encrypted and encoded together: a large batch's intermediate JSON data is
never held whole, only its final rows."""


def encode_all(
    events: Sequence[DomainEvent], event_ids: Sequence[str], keys: NamespaceKeys | None
) -> list[NewEvent]:
    """The rows to append for ``events``, content fields encrypted with ``keys`` (when
    given) before the payload text is made, so the hash chain covers the ciphertext."""
    if len(event_ids) != len(events):
        raise ValueError(f"{len(event_ids)} event ids for {len(events)} events")
    rows: list[NewEvent] = []
    for start in range(0, len(events), ENCODE_CHUNK):
        chunk = events[start : start + ENCODE_CHUNK]
        dumps = [event.model_dump(mode="json") for event in chunk]
        if keys is not None:
            encrypt_content(
                keys, ((event.type, data) for event, data in zip(chunk, dumps, strict=True))
            )
        rows.extend(
            EncodedEvent(event_id, event.type, type(event).schema_version, canonical_json(data))
            for event, event_id, data in zip(
                chunk, event_ids[start : start + ENCODE_CHUNK], dumps, strict=True
            )
        )
    return rows


def open_data(event_type: str, payload: str | bytes, keys: NamespaceKeys | None) -> dict[str, Any]:
    """A payload as JSON data with its content decrypted (erased content redacted)."""
    if keys is not None and is_encrypted(payload):
        text = open_content_text(keys, payload) if isinstance(payload, str) else None
        if text is not None:
            opened: dict[str, Any] = orjson.loads(text)
            return opened
        data: dict[str, Any] = orjson.loads(payload)
        open_content(keys, event_type, data)
        return data
    plain: dict[str, Any] = orjson.loads(payload)
    return plain


def decode_payload(
    event_type: str,
    schema_version: int,
    payload: str | bytes,
    keys: NamespaceKeys | None = None,
) -> DomainEvent:
    """Parse, decrypt (with ``keys``), upcast to the current schema version, and validate."""
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        raise StorageError(f"unknown event type {event_type!r} in the log")
    if schema_version > cls.schema_version:
        raise StorageError(
            f"{event_type} v{schema_version} is newer than this code (v{cls.schema_version})"
        )
    try:
        current = schema_version == cls.schema_version
        encrypted = is_encrypted(payload)
        if encrypted and keys is not None and isinstance(payload, str):
            opened = open_content_text(keys, payload)  # every key alive: values in place
            if opened is not None:
                if current:  # the common case: one pass of pydantic
                    return cls.__pydantic_validator__.validate_json(opened)  # type: ignore[no-any-return]
                payload = opened  # an older version: upcast below
        if current and not encrypted:
            return cls.__pydantic_validator__.validate_json(payload)  # type: ignore[no-any-return]
        data = open_data(event_type, payload, keys)
    except ValidationError as exc:
        raise StorageError(f"{event_type} payload does not validate: {exc}") from exc
    except orjson.JSONDecodeError as exc:
        raise StorageError(f"{event_type} payload is not JSON: {exc}") from exc
    version = schema_version
    while version < cls.schema_version:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise StorageError(f"no upcaster for {event_type} v{version}")
        data = step(data)
        version += 1
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise StorageError(f"{event_type} payload does not validate: {exc}") from exc


def decode(row: StoredEvent, keys: NamespaceKeys | None = None) -> Recorded:
    """A stored row as a typed, positioned domain event (content decrypted with ``keys``)."""
    event = decode_payload(row.event_type, row.schema_version, row.payload, keys)
    return Recorded(
        position=row.global_position,
        namespace=row.namespace,
        stream=row.stream,
        stream_version=row.stream_version,
        event=event,
    )


@upcaster("BlockLifted", 1)
def _block_lifted_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 lifts did not record who lifted; the source stays unknown (``None``)."""
    return {**data, "source": None}


@upcaster("BlockSealed", 1)
def _block_sealed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A v1 seal keeps the messages it stored: the fold reads them as before."""
    return data


@upcaster("ProjectionCompleted", 1)
def _projection_completed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 only encrypts element names and aliases: a v1 payload (names in clear) is a v2 one."""
    return data


@upcaster("RetrievalBatchRecorded", 1)
def _retrieval_batch_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 only encrypts the options: a v1 payload (options in clear) is a v2 one."""
    return data


def _claim_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 claims did not record their worker: unknown (``None``), recovered by age alone."""
    return {**data, "worker": None}


for _claim in ("SealStarted", "ExtractionStarted", "ProjectionClaimed"):
    upcaster(_claim, 1)(_claim_v1_v2)


__all__ = [
    "ENCODE_CHUNK",
    "UPCASTERS",
    "canonical_json",
    "decode",
    "decode_payload",
    "encode",
    "encode_all",
    "open_data",
    "upcaster",
]
