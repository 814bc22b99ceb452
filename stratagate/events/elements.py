"""Events of the elements stream (written by the projector): projection jobs and their facts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stratagate.events.domain import ELEMENTS, DomainEvent, register
from stratagate.events.payloads import PlanData


@register
class ProjectionQueued(DomainEvent):
    """A projection job for events that are already durable in the log, or made durable by
    the same append: the extractor appends an ``add_events`` batch's job with its cards, on
    the extraction stream (one commit); the projector queues every other group, on its own."""

    stream = ELEMENTS
    type: Literal["ProjectionQueued"] = "ProjectionQueued"
    job_id: str
    source_event_ids: list[str] = Field(min_length=1)


@register
class ProjectionClaimed(DomainEvent):
    """A job was claimed: the projector (or a caller's model loop) is working on it.
    v2: records the claiming ``worker``."""

    stream = ELEMENTS
    schema_version = 2
    type: Literal["ProjectionClaimed"] = "ProjectionClaimed"
    job_id: str
    attempt: int = Field(ge=1)
    worker: str | None = None
    """Who claimed it (``host:pid:start``, see ``stratagate.store.leases.Holder.token``): a
    claim whose process is gone is recovered by the next handle; a live one is left alone.
    v1 claims have none."""


@register
class ProjectionCompleted(DomainEvent):
    """A job's result was applied: exactly the facts and elements in ``plan``.

    v2: element names and aliases (and a dropped change's element name) are content, encrypted
    under the namespace's ``elements`` key; a v1 row holds them in clear and reads the same."""

    stream = ELEMENTS
    schema_version = 2
    type: Literal["ProjectionCompleted"] = "ProjectionCompleted"
    job_id: str
    reason: str = ""
    plan: PlanData
    diagnostic: str | None = None
    """"0 changes projected from N events: reason" when nothing applied."""


@register
class ProjectionFailed(DomainEvent):
    """The projector raised or its result was unusable; the job can be retried."""

    stream = ELEMENTS
    type: Literal["ProjectionFailed"] = "ProjectionFailed"
    job_id: str
    error: str


@register
class ProjectionInterrupted(DomainEvent):
    """A job found ``running`` at hydration: its process died mid-call; now failed."""

    stream = ELEMENTS
    type: Literal["ProjectionInterrupted"] = "ProjectionInterrupted"
    job_id: str


__all__ = [
    "ProjectionClaimed",
    "ProjectionCompleted",
    "ProjectionFailed",
    "ProjectionInterrupted",
    "ProjectionQueued",
]
