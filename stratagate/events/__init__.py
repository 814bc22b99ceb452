"""Domain events: what happened to a namespace, typed and versioned, and their canonical encoding.

The store (``stratagate.store``) knows nothing of these types; it keeps the encoded rows."""

from stratagate.events import elements, extraction, ingest, weights
from stratagate.events.codec import canonical_json, decode, decode_payload, encode
from stratagate.events.domain import (
    ELEMENTS,
    EVENT_TYPES,
    EXTRACTION,
    INGEST,
    STREAMS,
    WEIGHTS,
    DomainEvent,
    Recorded,
)
from stratagate.events.elements import *  # noqa: F403
from stratagate.events.extraction import *  # noqa: F403
from stratagate.events.ingest import *  # noqa: F403
from stratagate.events.weights import *  # noqa: F403

__all__ = [
    "ELEMENTS",
    "EVENT_TYPES",
    "EXTRACTION",
    "INGEST",
    "STREAMS",
    "WEIGHTS",
    "DomainEvent",
    "Recorded",
    "canonical_json",
    "decode",
    "decode_payload",
    "encode",
    *elements.__all__,
    *extraction.__all__,
    *ingest.__all__,
    *weights.__all__,
]
