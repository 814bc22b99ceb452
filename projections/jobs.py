"""Job states: extraction per block and element projection per batch of events.

Also tracks which event cards are not yet covered by a projection job, grouped by the append
that created them (an extraction, an ``add_events`` call, an import), so the projector can queue
one job per group once it is durable. Every step is linear in the events it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Self

import orjson

from projections.read_model import ReadModel, handles
from stratagate.core.facts import touched_elements
from stratagate.events import (
    EventAdded,
    ExtractionFailed,
    ExtractionInterrupted,
    ExtractionSkipped,
    ExtractionStarted,
    ExtractionSucceeded,
    ProjectionClaimed,
    ProjectionCompleted,
    ProjectionFailed,
    ProjectionInterrupted,
    ProjectionQueued,
    Recorded,
)
from stratagate.models import (
    ElementProjectionJob,
    ExtractionJob,
    ExtractionJobStatus,
    ProjectionJobStatus,
)

INTERRUPTED = (
    "interrupted: the worker stopped before the call finished (process died or was killed)"
)


class ExtractionJobRecord:
    """Extraction state of one block: a slotted row (one per sealed block)."""

    __slots__ = (
        "attempts",
        "block_id",
        "last_error",
        "reason",
        "skip_retried",
        "status",
        "updated_at",
        "worker",
    )

    def __init__(
        self,
        *,
        block_id: str,
        status: ExtractionJobStatus,
        updated_at: datetime,
        attempts: int = 0,
        last_error: str | None = None,
        reason: str | None = None,
        worker: str | None = None,
        skip_retried: bool = False,
    ) -> None:
        self.block_id = block_id
        self.status: ExtractionJobStatus = status
        self.attempts = attempts
        self.last_error = last_error
        self.reason = reason
        self.updated_at = updated_at
        self.worker = worker
        """Who claimed the job when it last started (``ExtractionStarted.worker``)."""
        self.skip_retried = skip_retried
        """A skipped job is retried at most once on request (``retry_skipped``)."""

    def view(self) -> ExtractionJob:
        return ExtractionJob(
            block_id=self.block_id,
            status=self.status,
            attempts=self.attempts,
            last_error=self.last_error,
            reason=self.reason,
            updated_at=self.updated_at,
        )

    def data(self) -> list[Any]:
        """The snapshot form: the values in ``__init__``'s order, the time as ISO text."""
        return [
            self.block_id,
            self.status,
            self.updated_at.isoformat(),
            self.attempts,
            self.last_error,
            self.reason,
            self.worker,
            self.skip_retried,
        ]

    @classmethod
    def of(cls, values: list[Any]) -> ExtractionJobRecord:
        """The inverse of ``data``."""
        block_id, status, updated_at, attempts, last_error, reason, worker, skip_retried = values
        return cls(
            block_id=block_id,
            status=status,
            updated_at=datetime.fromisoformat(updated_at),
            attempts=attempts,
            last_error=last_error,
            reason=reason,
            worker=worker,
            skip_retried=skip_retried,
        )


class ProjectionJobRecord:
    """Projection state of one batch of events: a slotted row (an ``add_event`` call is a job
    of its own, so a namespace may hold as many jobs as cards)."""

    __slots__ = (
        "attempts",
        "diagnostic",
        "element_ids",
        "id",
        "last_error",
        "reason",
        "source_event_ids",
        "status",
        "updated_at",
        "worker",
    )

    def __init__(
        self,
        *,
        id: str,
        source_event_ids: Sequence[str],
        updated_at: datetime,
        status: ProjectionJobStatus = "pending",
        attempts: int = 0,
        element_ids: Sequence[str] = (),
        reason: str | None = None,
        last_error: str | None = None,
        diagnostic: str | None = None,
        worker: str | None = None,
    ) -> None:
        self.id = id
        self.source_event_ids = tuple(source_event_ids)
        """A tuple, like ``element_ids``: a tuple of texts leaves the collector's watch, so the
        rows of many jobs (one per ``add_event``) add nothing to each full collection."""
        self.status: ProjectionJobStatus = status
        self.attempts = attempts
        self.element_ids = tuple(element_ids)
        self.reason = reason
        self.last_error = last_error
        self.diagnostic = diagnostic
        self.updated_at = updated_at
        self.worker = worker
        """Who claimed the job when it last ran (``ProjectionClaimed.worker``)."""

    def view(self) -> ElementProjectionJob:
        return ElementProjectionJob(
            id=self.id,
            source_event_ids=list(self.source_event_ids),
            status=self.status,
            attempts=self.attempts,
            element_ids=list(self.element_ids),
            reason=self.diagnostic or self.reason,
            last_error=self.last_error,
        )

    def data(self) -> list[Any]:
        """The snapshot form: the values in ``__init__``'s order, the time as ISO text."""
        return [
            self.id,
            self.source_event_ids,
            self.updated_at.isoformat(),
            self.status,
            self.attempts,
            self.element_ids,
            self.reason,
            self.last_error,
            self.diagnostic,
            self.worker,
        ]

    @classmethod
    def of(cls, values: list[Any]) -> ProjectionJobRecord:
        """The inverse of ``data``."""
        id_, source_event_ids, updated_at, status, attempts, element_ids = values[:6]
        reason, last_error, diagnostic, worker = values[6:]
        return cls(
            id=id_,
            source_event_ids=source_event_ids,
            updated_at=datetime.fromisoformat(updated_at),
            status=status,
            attempts=attempts,
            element_ids=element_ids,
            reason=reason,
            last_error=last_error,
            diagnostic=diagnostic,
            worker=worker,
        )


def added_batch(event: EventAdded) -> list[Any]:
    """What the cards of one append share: ``EventAdded`` events of one ``add_events`` call or
    one import carry the same origin, import batch and time."""
    return [event.origin, event.import_batch_id, event.at.isoformat()]


class JobsModel(ReadModel):
    """Extraction jobs by block id, projection jobs by job id, and unqueued event groups."""

    name = "jobs"
    version = 5
    """4: projection jobs as slotted rows, snapshotted as plain values; 5: extraction jobs too
    (a restore built 6,000 pydantic records at 100k events, for a tail that reads few)."""

    def __init__(self) -> None:
        self.extraction: dict[str, ExtractionJobRecord] = {}
        self.projection: dict[str, ProjectionJobRecord] = {}
        self.unqueued: dict[str, dict[str, None]] = {}
        """Group key (log position of the group's first event) → event ids awaiting a job (an
        ordered set: a job per card of an old log's batch takes its card out in one step)."""
        self.open_batch: tuple[str, list[Any]] | None = None
        """The group the next ``EventAdded`` joins when it shares the batch (``added_batch``):
        the last group added cards opened, until another group or any job is queued."""
        self.group_of: dict[str, str] = {}
        """Event id → its unqueued group key: derived from ``unqueued``, not snapshotted."""

    # -- extraction -------------------------------------------------------------------------

    @handles(ExtractionStarted)
    def _x_started(self, event: ExtractionStarted, _: Recorded) -> None:
        job = self.extraction.get(event.block_id)
        if job is None:
            job = self.extraction[event.block_id] = ExtractionJobRecord(
                block_id=event.block_id, status="running", updated_at=event.at
            )
        elif job.status == "skipped":
            job.skip_retried = True
        job.status = "running"
        job.attempts = event.attempt
        job.updated_at = event.at
        job.worker = event.worker

    @handles(ExtractionSucceeded)
    def _x_succeeded(self, event: ExtractionSucceeded, recorded: Recorded) -> None:
        self._x_finish(event.block_id, "succeeded", event.at, reason=event.reason)
        if event.events:
            self._open_group(str(recorded.position), [card.id for card in event.events])

    @handles(ExtractionSkipped)
    def _x_skipped(self, event: ExtractionSkipped, _: Recorded) -> None:
        self._x_finish(event.block_id, "skipped", event.at, reason=event.reason)

    @handles(ExtractionFailed)
    def _x_failed(self, event: ExtractionFailed, _: Recorded) -> None:
        self._x_finish(event.block_id, "failed", event.at, error=event.error)

    @handles(ExtractionInterrupted)
    def _x_interrupted(self, event: ExtractionInterrupted, _: Recorded) -> None:
        self._x_finish(event.block_id, "failed", event.at, error=INTERRUPTED)

    def _x_finish(
        self,
        block_id: str,
        status: ExtractionJobStatus,
        at: Any,
        *,
        reason: str | None = None,
        error: str | None = None,
    ) -> None:
        job = self.extraction.get(block_id)
        if job is None:  # skipped without a start: the summarizer ruled the block out
            job = self.extraction[block_id] = ExtractionJobRecord(
                block_id=block_id, status=status, updated_at=at
            )
        job.status = status
        job.updated_at = at
        job.reason = reason
        job.last_error = error

    @handles(EventAdded)
    def _event_added(self, event: EventAdded, recorded: Recorded) -> None:
        batch, event_id = added_batch(event), event.event.id
        if self.open_batch is not None and self.open_batch[1] == batch:
            key = self.open_batch[0]
            self.unqueued[key][event_id] = None
            self.group_of[event_id] = key
        else:
            self._open_group(str(recorded.position), [event_id])
            self.open_batch = (str(recorded.position), batch)

    def _open_group(self, key: str, event_ids: list[str]) -> None:
        """A new group of unqueued events; added cards start a new group after it."""
        self.unqueued[key] = dict.fromkeys(event_ids)
        self.group_of.update(dict.fromkeys(event_ids, key))
        self.open_batch = None

    # -- projection -------------------------------------------------------------------------

    @handles(ProjectionQueued)
    def _p_queued(self, event: ProjectionQueued, _: Recorded) -> None:
        self.projection[event.job_id] = ProjectionJobRecord(
            id=event.job_id, source_event_ids=event.source_event_ids, updated_at=event.at
        )
        self.open_batch = None
        for event_id in event.source_event_ids:
            key = self.group_of.pop(event_id, None)
            if key is None:
                continue
            group = self.unqueued[key]
            del group[event_id]
            if not group:
                del self.unqueued[key]

    @handles(ProjectionClaimed)
    def _p_claimed(self, event: ProjectionClaimed, _: Recorded) -> None:
        job = self.projection[event.job_id]
        job.status = "running"
        job.attempts = event.attempt
        job.last_error = None
        job.updated_at = event.at
        job.worker = event.worker

    @handles(ProjectionCompleted)
    def _p_completed(self, event: ProjectionCompleted, _: Recorded) -> None:
        job = self.projection[event.job_id]
        job.status = "completed"
        job.element_ids = tuple(touched_elements(event.plan))
        job.reason = event.reason
        job.diagnostic = event.diagnostic
        job.updated_at = event.at

    @handles(ProjectionFailed, ProjectionInterrupted)
    def _p_failed(self, event: ProjectionFailed | ProjectionInterrupted, _: Recorded) -> None:
        job = self.projection[event.job_id]
        job.status = "failed"
        job.last_error = event.error if isinstance(event, ProjectionFailed) else INTERRUPTED
        job.updated_at = event.at

    # -- queries ----------------------------------------------------------------------------

    def next_pending_projection(self) -> ProjectionJobRecord | None:
        """The oldest pending projection job."""
        return next((j for j in self.projection.values() if j.status == "pending"), None)

    def snapshot(self) -> dict[str, Any]:
        return {
            "extraction": [job.data() for job in self.extraction.values()],
            "projection": orjson.dumps([job.data() for job in self.projection.values()]).decode(),
            "unqueued": [[key, list(ids)] for key, ids in self.unqueued.items()],
            "open_batch": list(self.open_batch) if self.open_batch else None,
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        jobs_of = ExtractionJobRecord.of
        model.extraction = {row[0]: jobs_of(row) for row in data["extraction"]}
        jobs = (ProjectionJobRecord.of(values) for values in orjson.loads(data["projection"]))
        model.projection = {job.id: job for job in jobs}
        model.unqueued = {key: dict.fromkeys(ids) for key, ids in data["unqueued"]}
        model.group_of = {e: key for key, ids in model.unqueued.items() for e in ids}
        if data["open_batch"] is not None:
            key, batch = data["open_batch"]
            model.open_batch = (key, list(batch))
        return model


__all__ = [
    "INTERRUPTED",
    "ExtractionJobRecord",
    "JobsModel",
    "ProjectionJobRecord",
    "added_batch",
]
