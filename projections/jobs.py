"""Job states: extraction per block and element projection per batch of events.

Also tracks which event cards are not yet covered by a projection job, grouped by the log
event that created them, so the projector can queue one job per group once it is durable.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field

from projections.read_model import ReadModel, Record, dump_records, handles, load_records
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
    UtcDatetime,
)

INTERRUPTED = (
    "interrupted: the worker stopped before the call finished (process died or was killed)"
)


class ExtractionJobRecord(Record):
    """Extraction state of one block."""

    block_id: str
    status: ExtractionJobStatus
    attempts: int = 0
    last_error: str | None = None
    reason: str | None = None
    updated_at: UtcDatetime
    worker: str | None = None
    """Who claimed the job when it last started (``ExtractionStarted.worker``)."""
    skip_retried: bool = False
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


class ProjectionJobRecord(Record):
    """Projection state of one batch of events."""

    id: str
    source_event_ids: list[str]
    status: ProjectionJobStatus = "pending"
    attempts: int = 0
    element_ids: list[str] = Field(default_factory=list)
    reason: str | None = None
    last_error: str | None = None
    diagnostic: str | None = None
    updated_at: UtcDatetime
    worker: str | None = None
    """Who claimed the job when it last ran (``ProjectionClaimed.worker``)."""

    def view(self) -> ElementProjectionJob:
        return ElementProjectionJob(
            id=self.id,
            source_event_ids=self.source_event_ids,
            status=self.status,
            attempts=self.attempts,
            element_ids=self.element_ids,
            reason=self.diagnostic or self.reason,
            last_error=self.last_error,
        )


class JobsModel(ReadModel):
    """Extraction jobs by block id, projection jobs by job id, and unqueued event groups."""

    name = "jobs"
    version = 2

    def __init__(self) -> None:
        self.extraction: dict[str, ExtractionJobRecord] = {}
        self.projection: dict[str, ProjectionJobRecord] = {}
        self.unqueued: dict[str, list[str]] = {}
        """Group key (log position of the creating event) → event ids awaiting a job."""

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
            self.unqueued[str(recorded.position)] = [card.id for card in event.events]

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
        self.unqueued[str(recorded.position)] = [event.event.id]

    # -- projection -------------------------------------------------------------------------

    @handles(ProjectionQueued)
    def _p_queued(self, event: ProjectionQueued, _: Recorded) -> None:
        self.projection[event.job_id] = ProjectionJobRecord(
            id=event.job_id, source_event_ids=event.source_event_ids, updated_at=event.at
        )
        queued = set(event.source_event_ids)
        for key in list(self.unqueued):
            rest = [e for e in self.unqueued[key] if e not in queued]
            if rest:
                self.unqueued[key] = rest
            else:
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
        job.element_ids = touched_elements(event.plan)
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
            "extraction": dump_records(self.extraction, ExtractionJobRecord),
            "projection": dump_records(self.projection, ProjectionJobRecord),
            "unqueued": [[key, ids] for key, ids in self.unqueued.items()],
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.extraction = load_records(ExtractionJobRecord, data["extraction"])
        model.projection = load_records(ProjectionJobRecord, data["projection"])
        model.unqueued = {key: list(ids) for key, ids in data["unqueued"]}
        return model


__all__ = ["INTERRUPTED", "ExtractionJobRecord", "JobsModel", "ProjectionJobRecord"]
