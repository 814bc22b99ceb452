"""The projector: queues projection jobs for durable events, claims, calls, completes or fails.

Only facts whose every cited event is in the claimed batch are applied (``plan_projection``);
what was applied is recorded in ``ProjectionCompleted`` so replay never re-runs the matching.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from projections.jobs import ProjectionJobRecord
from stratagate.actors.role import Role, Taken, error_text, handles
from stratagate.callbacks import invoke, is_local, validate_output
from stratagate.core.facts import plan_projection, projection_diagnostic, touched_elements
from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.events import (
    ELEMENTS,
    DomainEvent,
    ProjectionClaimed,
    ProjectionCompleted,
    ProjectionFailed,
    ProjectionInterrupted,
    ProjectionQueued,
)
from stratagate.events.payloads import PlanData, convert
from stratagate.messages import (
    ClaimProjection,
    CompleteProjection,
    FailProjection,
    QueueProjections,
    RunProjections,
)
from stratagate.models import (
    ElementCard,
    ElementProjectionContext,
    ElementProjectionJob,
    ElementProjectionResult,
    EventCard,
)
from stratagate.providers import resolve
from stratagate.timeutil import partial_bounds


def event_time(card: EventCard) -> datetime | None:
    """When an event happened (its start), else when it was mentioned."""
    temporal = card.temporal
    if temporal is None:
        return None
    for value in (temporal.happened_start, temporal.happened_end, temporal.mentioned_at):
        if value:
            return partial_bounds(value)[0]
    return None


class Projector(Role):
    """The only writer of the elements stream."""

    name = host = "projector"
    stream = ELEMENTS
    components = ("events", "weights", "jobs", "elements")

    @handles(QueueProjections)
    def queue_pending(self, _: QueueProjections | None = None) -> list[str]:
        """One job per group of durable events not yet queued, in one append; returns the new
        job ids."""
        self.refresh()
        taken = Taken(self.state.jobs.projection)
        now = self.options.now()
        queued = []
        for event_ids in self._unqueued():
            job_id = self.new_id("proj", taken)
            taken.add(job_id)
            queued.append(ProjectionQueued(job_id=job_id, source_event_ids=event_ids, at=now))
        if queued:
            self._append(*queued)
        return [q.job_id for q in queued]

    @handles(RunProjections)
    def run_pending(self, command: RunProjections) -> list[ElementCard]:
        """Queue, then claim → call → complete (or fail) every pending job, if a projector is set.

        With ``retry_failed`` each job that was failed when the run began is retried once. A
        local projector's job is queued, claimed and completed in one commit (see
        ``Sealer._seal``); a model's claim is durable before the model is called."""
        self.refresh()
        if command.retry_failed:
            self.recover()
        projector = resolve("element_projector", self.options.element_projector)
        touched: dict[str, None] = {}
        if projector is not None and is_local(projector):
            for event_ids in self._unqueued():
                job_id = self.new_id("proj", self.state.jobs.projection)
                queued = ProjectionQueued(
                    job_id=job_id, source_event_ids=event_ids, at=self.options.now()
                )
                touched.update(dict.fromkeys(self._run(projector, job_id, event_ids, 1, [queued])))
        else:
            self.queue_pending(QueueProjections())
        if projector is None:
            return []
        jobs = self.state.jobs.projection
        retries = (
            [j.id for j in jobs.values() if j.status == "failed"] if command.retry_failed else []
        )
        while (job := self._next_job(retries)) is not None:
            done = self._run(projector, job.id, job.source_event_ids, job.attempts + 1, [])
            touched.update(dict.fromkeys(done))
        return [self.view.expand_element(element_id) for element_id in touched]

    def _unqueued(self) -> list[list[str]]:
        """Each group of durable events not yet queued, with the ids still known."""
        records = self.state.events.records
        groups = ([e for e in ids if e in records] for ids in self.state.jobs.unqueued.values())
        return [group for group in groups if group]

    def _run(
        self,
        projector: Any,
        job_id: str,
        event_ids: Sequence[str],
        attempt: int,
        before: list[DomainEvent],
    ) -> list[str]:
        """Claim a job, call the projector, record its result; returns the elements touched."""
        claimed = ProjectionClaimed(
            job_id=job_id, attempt=attempt, worker=self.worker_token(), at=self.options.now()
        )
        pending: list[DomainEvent] = [*before, claimed]
        local = is_local(projector)
        if not local:
            self._append(*pending)
            pending = []
        context = self._context(job_id, event_ids)

        def failed(error: str) -> ProjectionFailed:
            return ProjectionFailed(job_id=job_id, error=error, at=self.options.now())

        try:
            result = validate_output(
                ElementProjectionResult, invoke(projector, context), "element_projector"
            )
        except Exception as exc:
            failure = failed(error_text(exc))
            if local:
                self._append(*pending, failure)
            else:
                self._append_claimed(lambda: [failure], failed)
            raise
        if local:
            completed = self._completion(job_id, event_ids, result)
            self._append(*pending, completed)
            return touched_elements(completed.plan)
        # planned again after each catch-up: other handles may have projected meanwhile
        outcome: list[ProjectionCompleted] = []

        def plan() -> list[DomainEvent]:
            outcome[:] = [self._completion(job_id, event_ids, result)]
            return [*outcome]

        return touched_elements(outcome[0].plan) if self._append_claimed(plan, failed) else []

    @handles(ClaimProjection)
    def claim_next(self, command: ClaimProjection) -> ElementProjectionContext | None:
        """Queue what is not queued yet, then claim the oldest pending job, else
        (``include_failed``) the oldest failed one: a manual loop retries a failed job by
        claiming it again (its attempts then count 2)."""
        self.queue_pending(QueueProjections())
        jobs = self.state.jobs.projection.values()
        failed = [j.id for j in jobs if j.status == "failed"] if command.include_failed else []
        job = self._next_job(failed)
        if job is None:
            return None
        self._append(
            ProjectionClaimed(
                job_id=job.id,
                attempt=job.attempts + 1,
                worker=self.worker_token(),
                at=self.options.now(),
            )
        )
        return self._context(job.id, job.source_event_ids)

    def _next_job(self, retries: list[str]) -> ProjectionJobRecord | None:
        """The oldest pending job, else the first of ``retries`` still failed."""
        jobs = self.state.jobs.projection
        job = next((j for j in jobs.values() if j.status == "pending"), None)
        while job is None and retries:
            candidate = jobs.get(retries.pop(0))
            if candidate is not None and candidate.status == "failed":
                job = candidate
        return job

    def _context(self, job_id: str, event_ids: Sequence[str]) -> ElementProjectionContext:
        view = self.view
        return ElementProjectionContext(
            job_id=job_id,
            events=[view.get_event(e) for e in event_ids if e in self.state.events.records],
            existing_elements=view.list_elements(),
        )

    def _running(self, job_id: str) -> None:
        job = self.state.jobs.projection.get(job_id)
        if job is None:
            raise UnknownIdError(f"unknown projection job id {job_id!r}")
        if job.status != "running":
            raise InvalidInputError(
                f"projection job {job_id} is {job.status}, not running (claim it first)"
            )

    @handles(CompleteProjection)
    def complete(self, command: CompleteProjection) -> list[ElementCard]:
        """Apply a result to a claimed job: only changes citing solely batch events survive;
        the element cards it applied come back (the reference's shape)."""
        self.refresh()
        self._running(command.job_id)
        job = self.state.jobs.projection[command.job_id]
        self._append(self._completion(job.id, job.source_event_ids, command.result))
        done = self.state.jobs.projection[command.job_id].view()
        return [self.view.expand_element(element_id) for element_id in done.element_ids]

    def _completion(
        self, job_id: str, event_ids: Sequence[str], outcome: ElementProjectionResult
    ) -> ProjectionCompleted:
        """What a job's result applies: the plan of facts citing only the batch's events."""
        view = self.view
        batch = [view.get_event(e) for e in event_ids if e in self.state.events.records]
        now = self.options.now()
        plan = plan_projection(
            view.list_elements(),
            outcome.changes,
            event_ids,
            at=now,
            new_id=self._element_id,
            event_times={card.id: event_time(card) for card in batch},
        )
        return ProjectionCompleted(
            job_id=job_id,
            reason=outcome.reason,
            plan=convert(PlanData, plan),
            diagnostic=projection_diagnostic(plan, len(event_ids), outcome.reason),
            at=now,
        )

    def _element_id(self, prefix: str) -> str:
        """A new element or fact id the namespace does not hold yet."""
        elements = self.state.elements
        return self.new_id(prefix, elements.fact_owner if prefix == "fact" else elements.elements)

    @handles(FailProjection)
    def fail(self, command: FailProjection) -> ElementProjectionJob:
        """Record a claimed job as failed (retryable)."""
        self.refresh()
        job_id = command.job_id
        self._running(job_id)
        error = command.error
        self._append(
            ProjectionFailed(job_id=job_id, error=error or "failed", at=self.options.now())
        )
        return self.state.jobs.projection[job_id].view()

    def recover(self) -> int:
        """Jobs left running by a handle that is gone become failed (interrupted)."""
        self.refresh()
        running = [
            j.id
            for j in self.state.jobs.projection.values()
            if j.status == "running" and self.abandoned(j.worker, j.updated_at)
        ]
        for job_id in running:
            self._append(ProjectionInterrupted(job_id=job_id, at=self.options.now()))
        return len(running)


__all__ = ["Projector", "event_time"]
