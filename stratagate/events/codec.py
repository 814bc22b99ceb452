"""Canonical encoding of domain events, and decoding through registered upcasters.

The canonical text is orjson with sorted keys over the event's JSON-mode dump (UTC timestamps
as ISO-8601 with ``Z``): the same text is stored in ``payload`` and hashed into the chain.
Decoding reads a row's ``event_type`` and ``schema_version``, applies the upcasters registered
for each older version in turn, and validates the result with the current event class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from pydantic import ValidationError

from stratagate.errors import StorageError
from stratagate.events.domain import EVENT_TYPES, DomainEvent, Recorded
from stratagate.store.records import NewEvent, StoredEvent

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
    """The row to append for ``event``."""
    payload = canonical_json(event.model_dump(mode="json"))
    return NewEvent(
        event_id=event_id,
        event_type=event.type,
        schema_version=type(event).schema_version,
        payload=payload,
    )


def decode_payload(event_type: str, schema_version: int, payload: str | bytes) -> DomainEvent:
    """Parse, upcast to the current schema version, and validate one payload."""
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        raise StorageError(f"unknown event type {event_type!r} in the log")
    if schema_version > cls.schema_version:
        raise StorageError(
            f"{event_type} v{schema_version} is newer than this code (v{cls.schema_version})"
        )
    try:
        if schema_version == cls.schema_version:  # the common case: one pass of pydantic's core
            return cls.model_validate_json(payload)
        data = orjson.loads(payload)
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


def decode(row: StoredEvent) -> Recorded:
    """A stored row as a typed, positioned domain event."""
    event = decode_payload(row.event_type, row.schema_version, row.payload)
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


__all__ = ["UPCASTERS", "canonical_json", "decode", "decode_payload", "encode", "upcaster"]
