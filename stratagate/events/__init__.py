"""The durable log: typed domain events, their canonical encoding, and the event store."""

from stratagate.events import elements, extraction, ingest, weights
from stratagate.events.base import (
    ELEMENTS,
    EVENT_TYPES,
    EXTRACTION,
    INGEST,
    STREAMS,
    WEIGHTS,
    DomainEvent,
    Recorded,
)
from stratagate.events.codec import canonical_json, decode, decode_payload, encode
from stratagate.events.elements import *  # noqa: F403
from stratagate.events.extraction import *  # noqa: F403
from stratagate.events.ingest import *  # noqa: F403
from stratagate.events.records import GENESIS_HASH, EventStore, NewEvent, Snapshot, StoredEvent
from stratagate.events.weights import *  # noqa: F403

__all__ = [
    "ELEMENTS",
    "EVENT_TYPES",
    "EXTRACTION",
    "GENESIS_HASH",
    "INGEST",
    "STREAMS",
    "WEIGHTS",
    "DomainEvent",
    "EventStore",
    "NewEvent",
    "Recorded",
    "Snapshot",
    "StoredEvent",
    "canonical_json",
    "decode",
    "decode_payload",
    "encode",
    *elements.__all__,
    *extraction.__all__,
    *ingest.__all__,
    *weights.__all__,
]
