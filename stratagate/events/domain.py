"""The base of every domain event, the stream families, and the registry of event types.

A domain event is a frozen pydantic model named in the past tense. ``type`` (a literal field)
is the discriminator stored in the ``event_type`` column; ``schema_version`` (a class variable)
is stored in the ``schema_version`` column and drives upcasting on read. ``stream`` names the
stream family, which is also the role that alone may append it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from stratagate.events.payloads import StoredDatetime

INGEST = "ingest"
"""Turns, blocks, lifts and settings: written by the sealer."""
EXTRACTION = "extraction"
"""Extraction jobs, event cards, supersession and external imports: written by the extractor."""
ELEMENTS = "elements"
"""Element-projection jobs and the facts they apply: written by the projector."""
WEIGHTS = "weights"
"""Retrieval batches, assessments, usage receipts and governance: written by the weight keeper."""

STREAMS: tuple[str, ...] = (INGEST, EXTRACTION, ELEMENTS, WEIGHTS)


class DomainEvent(BaseModel):
    """A fact that happened to a namespace; never changed once appended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stream: ClassVar[str]
    schema_version: ClassVar[int] = 1

    type: str
    at: StoredDatetime
    """When the shell decided this event (its clock, recorded once; replay never reads a clock)."""


EVENT_TYPES: dict[str, type[DomainEvent]] = {}
"""Every concrete domain event class by its ``type``."""


def register(cls: type[DomainEvent]) -> type[DomainEvent]:
    """Class decorator: add a concrete event class to ``EVENT_TYPES`` (names must be unique)."""
    name = cls.model_fields["type"].default
    if not isinstance(name, str) or name != cls.__name__:
        raise TypeError(f"{cls.__name__}: the type literal must equal the class name")
    if name in EVENT_TYPES:
        raise TypeError(f"duplicate event type {name}")
    if getattr(cls, "stream", None) not in STREAMS:
        raise TypeError(f"{name}: unknown stream family")
    EVENT_TYPES[name] = cls
    return cls


@dataclass(frozen=True, slots=True)
class Recorded:
    """A decoded domain event with where the log put it."""

    position: int
    namespace: str
    stream: str
    stream_version: int
    event: DomainEvent


__all__ = [
    "ELEMENTS",
    "EVENT_TYPES",
    "EXTRACTION",
    "INGEST",
    "STREAMS",
    "WEIGHTS",
    "DomainEvent",
    "Recorded",
    "register",
]
