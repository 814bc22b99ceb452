"""What follows each command: one table, applied by every runtime, returning the outcome.

A runtime answers a message by its flow when ``FLOWS`` has one, else by delivering it to its
handler (``stratagate.actors.registry``). A flow delivers the command, decides from the answer
what work follows — the messages below, in order, now or in the background — and makes the
caller's outcome. The runtimes supply the ``Runner``: inline, delivery is a call in this
process and the background a worker thread; under Ray, delivery is an actor call and the
background a chain of nudges, each actor running its stage and passing the rest to the next.

Every stage is "do whatever is ready" (``DERIVED``), so running one twice, or after a crash,
is safe; ``drain`` finishes them once more after waiting for the background.

Other handles (other processes) may write the namespace too. A handler refreshes its state and
decides; if another writer appended first, the append raises ``StaleHandleError`` with nothing
written. A stage is then simply run again (it re-decides from the caught-up state) a bounded
number of times — and if the namespace stays that busy, the other writers are doing the work.
A command is re-run the same way when the runtime's ``retry_conflicts`` says so
(``on_conflict="retry"``) — from its first lost race on, and for a while after it, inside the
namespace's decision lock, so writers that collide take turns instead of colliding again (the
expected version still decides); otherwise the caller gets the error, as the reference does.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, TypeVar

from stratagate.anchors import Anchor
from stratagate.callbacks import invoke
from stratagate.errors import StaleHandleError
from stratagate.formats.external_memory import Decision, ImportPlan, check_decision
from stratagate.messages import (
    AddEvents,
    AppendTurn,
    AppendTurns,
    EraseEvent,
    EraseNamespace,
    EraseThread,
    ExtractReady,
    ImportExternal,
    ImportMemory,
    LogCheckpoint,
    Message,
    PlanImport,
    Processing,
    QueueProjections,
    Refresh,
    ResumePending,
    RunProjections,
    SealReady,
    TakeAnchor,
    TurnAck,
)
from stratagate.models import ElementCard, EventCard, MemoryBlock
from stratagate.results import (
    AppendTurnResult,
    AppendTurnsResult,
    ErasureReport,
    ImportResult,
    ResumePendingResult,
)

R = TypeVar("R")

DERIVED: tuple[Message[Any], ...] = (SealReady(), ExtractReady(), RunProjections())
"""The work a turn sets off: seal full tails, extract ready blocks, project queued events."""
QUEUE_LEFTOVERS = QueueProjections()
"""The look for cards another flow left without a job, after each ``add_events``."""


def retrying(*, retry_skipped: bool) -> tuple[Message[Any], ...]:
    """``DERIVED``, retrying what failed or was interrupted (and skipped extractions, once)."""
    return (
        SealReady(retry_failed=True),
        ExtractReady(retry_failed=True, retry_skipped=retry_skipped),
        RunProjections(retry_failed=True),
    )


CONFLICT_ATTEMPTS = 30
"""How many times a stage, or a command under ``on_conflict="retry"``, is decided again after
another writer appended first."""

MAX_PAUSE_S = 0.1
"""The longest pause before deciding again (jittered, doubling from 2 ms)."""

RETRIES: Counter[str] = Counter()
"""Decisions made again after a conflict, by message type (this process; for benchmarks)."""


def pause(attempt: int) -> None:
    """A random wait that grows with ``attempt``: writers that collided do not collide again."""
    time.sleep(random.uniform(0, min(MAX_PAUSE_S, 0.002 * 2**attempt)))


def retrying_stale(
    action: Callable[[], R],
    *,
    label: str,
    attempts: int = CONFLICT_ATTEMPTS,
    turns: Callable[[int], AbstractContextManager[None] | None] | None = None,
) -> R:
    """``action()``, run again while it raises ``StaleHandleError`` (at most ``attempts``):
    inside the lock ``turns(attempt)`` gives (the runner's decision lock: waiting for it is
    the pause), else after a random pause."""
    lock = None if turns is None else turns(0)
    for attempt in range(attempts):
        try:
            if lock is None:
                return action()
            with lock:
                return action()
        except StaleHandleError:
            if attempt == attempts - 1:
                raise
            RETRIES[label] += 1
            lock = None if turns is None else turns(attempt + 1)
            if lock is None:
                pause(attempt)
    raise AssertionError("unreachable")


class Runner(Protocol):
    """What a runtime lends a flow."""

    writes: bool
    """False for a read-only runtime: a flow then skips follow-up work that would append."""

    retry_conflicts: bool
    """Whether a command that lost a race with another writer is decided again
    (``on_conflict="retry"``) or its ``StaleHandleError`` reaches the caller."""

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        """The lock a command's (or a stage's) ``attempt`` runs inside: the namespace's decision
        lock (``EventLog.taking_turns``) once writers collided; ``None`` while they do not, and
        where the lock would be held over a model's call (a stage with remote models)."""
        ...

    def deliver(self, message: Message[Any]) -> Any:
        """The answer of the handler of ``message`` (the registry's), now."""
        ...

    def idle(self, *stages: Message[Any]) -> bool:
        """Whether every one of the derived ``stages`` is known to find nothing to do now,
        without delivering it (``False`` when the runner cannot tell: each is then run)."""
        ...

    def start(self, messages: Sequence[Message[Any]]) -> None:
        """Run ``messages`` in order in the background (``drain`` waits for them)."""
        ...

    def reload(self) -> None:
        """Have every host fold the log again with freshly loaded keys (after an erasure)."""
        ...


Derived = tuple[list[MemoryBlock], list[EventCard], list[ElementCard]]


def deliver_command(run: Runner, message: Message[Any]) -> Any:
    """Deliver a caller's command, deciding it again after a conflict when the runtime retries."""
    if not run.retry_conflicts:
        return run.deliver(message)
    return retrying_stale(
        lambda: run.deliver(message), label=type(message).__name__, turns=run.taking_turns
    )


def run_stage(run: Runner, stage: Message[Any]) -> Any:
    """Deliver a derived stage, run again after conflicts; when other writers keep winning, they
    are doing the work: nothing is reported (an empty result). A stage the runner knows has
    nothing to do (``Runner.idle``) is answered ``[]`` without a delivery."""
    if run.idle(stage):
        return []
    try:
        return retrying_stale(
            lambda: run.deliver(stage),
            label=type(stage).__name__,
            turns=lambda attempt: run.taking_turns(attempt, stage=True),
        )
    except StaleHandleError:
        return []


def _follow(run: Runner, processing: Processing, stages: Sequence[Message[Any]]) -> Derived:
    """Run the derived work as ``processing`` says; what it sealed, extracted and projected
    (nothing yet unless it ran now)."""
    if processing == "background":
        run.start(stages)
    if processing != "wait" or run.idle(*stages):  # the plain turn: one look for the three
        return [], [], []
    sealed, events, elements = (run_stage(run, stage) for stage in stages)
    return sealed, events, elements


def append_turn(command: AppendTurn, run: Runner) -> AppendTurnResult:
    """The turn is durable first (the sealer's answer); then the derived work."""
    ack: TurnAck = deliver_command(run, command)
    if ack.duplicate:
        return AppendTurnResult(duplicate=True)
    sealed, events, elements = _follow(run, command.processing, DERIVED)
    own = [block for block in sealed if block.thread_id == command.thread_id]
    return AppendTurnResult(
        turn=ack.turn,
        sealed_block=own[-1] if own else (sealed[-1] if sealed else None),
        extracted_events=events,
        projected_elements=elements,
    )


def append_turns(command: AppendTurns, run: Runner) -> AppendTurnsResult:
    """One commit for the batch; then the derived work, unless every turn was a duplicate."""
    acks: list[TurnAck] = deliver_command(run, command)
    duplicates = sum(1 for ack in acks if ack.duplicate)
    result = AppendTurnsResult(turns=[ack.turn for ack in acks], duplicates=duplicates)
    if duplicates == len(acks):
        return result
    sealed, events, elements = _follow(run, command.processing, DERIVED)
    return result.model_copy(
        update={"sealed_blocks": sealed, "extracted_events": events, "projected_elements": elements}
    )


def resume_pending(command: ResumePending, run: Runner) -> ResumePendingResult:
    """The derived work, retrying: no role answers the command itself."""
    sealed, events, elements = _follow(run, "wait", retrying(retry_skipped=command.retry_skipped))
    return ResumePendingResult(
        sealed_blocks=sealed, extracted_events=events, projected_elements=elements
    )


def add_events(command: AddEvents, run: Runner) -> list[EventCard]:
    """The cards with their projection job (one commit, the extractor's), then a job for any
    group of durable cards another flow left unqueued."""
    cards: list[EventCard] = deliver_command(run, command)
    run_stage(run, QUEUE_LEFTOVERS)
    return cards


def import_memory(command: ImportMemory, run: Runner) -> ImportResult:
    """Plan (the reader), decide (the caller's ``decide``, here, before anything is appended),
    append (the extractor), then project what was added."""
    plan: ImportPlan = run.deliver(PlanImport(document=command.document, top_k=command.top_k))
    decide = command.decide
    decisions = [
        Decision(action="add")
        if decide is None
        else check_decision(invoke(decide, planned.candidate, planned.matches), planned.matches)
        for planned in plan.items
    ]
    result: ImportResult = deliver_command(run, ImportExternal(plan=plan, decisions=decisions))
    if result.added:
        run_stage(run, RunProjections())
    return result


def erase(command: EraseThread | EraseEvent | EraseNamespace, run: Runner) -> ErasureReport:
    """Destroy the keys (the weight keeper), then have every host fold the log again."""
    report: ErasureReport = deliver_command(run, command)
    run.reload()
    return report


def take_anchor(command: TakeAnchor, run: Runner) -> Anchor:
    """The anchor (the auditor); a signed one is logged too, unless the memory is read-only."""
    anchor: Anchor = run.deliver(command)
    if anchor.seal is not None and run.writes:
        deliver_command(
            run,
            LogCheckpoint(
                position=anchor.position, head_hash=anchor.head_hash, signature=anchor.seal
            ),
        )
    return anchor


Flow = Callable[[Any, Runner], Any]

FLOWS: dict[type[Message[Any]], Flow] = {
    AppendTurn: append_turn,
    AppendTurns: append_turns,
    ResumePending: resume_pending,
    AddEvents: add_events,
    ImportMemory: import_memory,
    EraseThread: erase,
    EraseEvent: erase,
    EraseNamespace: erase,
    TakeAnchor: take_anchor,
}
"""Each command with follow-up work → its flow; every other message is delivered as it is."""


def run(message: Message[R], runner: Runner) -> R:
    """Answer ``message``: by its flow, or by its handler alone."""
    flow = FLOWS.get(type(message))
    if flow is None:
        result: R = deliver_command(runner, message)
        return result
    # a flow that collided lately runs whole inside the decision lock (its stages take it
    # again freely): one hand-over per command instead of one per stage
    lock = runner.taking_turns(0, stage=True) if runner.retry_conflicts else None
    if lock is not None:  # fold what the others wrote before queueing: not while they wait
        runner.deliver(Refresh())
    with lock or nullcontext():
        result = flow(message, runner)
    return result


__all__ = [
    "CONFLICT_ATTEMPTS",
    "DERIVED",
    "FLOWS",
    "RETRIES",
    "Flow",
    "Runner",
    "add_events",
    "append_turn",
    "append_turns",
    "deliver_command",
    "erase",
    "import_memory",
    "resume_pending",
    "retrying",
    "retrying_stale",
    "run",
    "run_stage",
    "take_anchor",
]
