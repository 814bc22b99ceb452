"""The pipeline table: what follows each command, as data the runtimes apply. A recording
runner (the ``Runner`` protocol, no I/O) shows which messages a flow delivers, in what order,
what it leaves to the background, and the outcome it makes."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import pytest

from stratagate.actors import pipeline
from stratagate.actors.pipeline import DERIVED
from stratagate.errors import StaleHandleError
from stratagate.messages import (
    AddEvents,
    AppendTurn,
    AppendTurns,
    EraseThread,
    ExtractReady,
    LogCheckpoint,
    Message,
    Processing,
    QueueProjections,
    ResumePending,
    RunProjections,
    SealReady,
    TakeAnchor,
    TurnAck,
)
from stratagate.models import EventCardInput, RawMessage

AT = datetime(2024, 5, 1, tzinfo=UTC)


class RecordingRunner:
    """Answers each message from ``answers`` (by type) and records what was asked of it."""

    def __init__(self, answers: dict[type[Any], Any], *, writes: bool = True) -> None:
        self.answers = answers
        self.writes = writes
        self.retry_conflicts = False
        self.turns: list[int] = []
        self.delivered: list[Message[Any]] = []
        self.started: list[tuple[Message[Any], ...]] = []
        self.reloads = 0
        self.idle_stages: set[type[Any]] = set()

    def taking_turns(
        self, attempt: int, *, stage: bool = False
    ) -> AbstractContextManager[None] | None:
        if not stage:
            self.turns.append(attempt)
        return contextlib.nullcontext() if attempt else None

    def deliver(self, message: Message[Any]) -> Any:
        self.delivered.append(message)
        return self.answers.get(type(message), [])

    def idle(self, *stages: Message[Any]) -> bool:
        return all(type(stage) in self.idle_stages for stage in stages)

    def start(self, messages: Sequence[Message[Any]]) -> None:
        self.started.append(tuple(messages))

    def reload(self) -> None:
        self.reloads += 1


def turn(processing: Processing = "wait") -> AppendTurn:
    message = RawMessage(id="m1", role="user", content="hi", created_at=AT)
    return AppendTurn(
        command_id="c1", thread_id=None, receipt_id=None, messages=[message], at=AT,
        processing=processing,
    )  # fmt: skip


def test_a_turn_waits_for_seal_extract_project_in_that_order() -> None:
    runner = RecordingRunner({AppendTurn: TurnAck(turn=3)})
    result = pipeline.run(turn(), runner)
    assert [type(m) for m in runner.delivered] == [
        AppendTurn,
        SealReady,
        ExtractReady,
        RunProjections,
    ]
    assert result.turn == 3 and runner.started == []


def test_a_stage_the_runner_knows_to_be_idle_is_not_delivered() -> None:
    runner = RecordingRunner({AppendTurn: TurnAck(turn=3)})
    runner.idle_stages = {SealReady, RunProjections}
    result = pipeline.run(turn(), runner)
    assert [type(m) for m in runner.delivered] == [AppendTurn, ExtractReady]
    assert result.sealed_block is None and result.extracted_events == []


@pytest.mark.parametrize("processing", ["background", "defer"])
def test_a_turn_in_the_background_or_deferred_returns_once_durable(processing: Processing) -> None:
    runner = RecordingRunner({AppendTurn: TurnAck(turn=1)})
    result = pipeline.run(turn(processing), runner)
    assert [type(m) for m in runner.delivered] == [AppendTurn]
    assert runner.started == ([DERIVED] if processing == "background" else [])
    assert result.turn == 1


def test_a_duplicate_turn_sets_off_nothing() -> None:
    runner = RecordingRunner({AppendTurns: [TurnAck(turn=None, duplicate=True)]})
    result = pipeline.run(AppendTurns(turns=[turn()]), runner)
    assert [type(m) for m in runner.delivered] == [AppendTurns]
    assert result.duplicates == 1 and runner.started == []


def test_resume_retries_every_stage_and_no_role_answers_the_command() -> None:
    runner = RecordingRunner({})
    pipeline.run(ResumePending(retry_skipped=True), runner)
    assert runner.delivered == [
        SealReady(retry_failed=True),
        ExtractReady(retry_failed=True, retry_skipped=True),
        RunProjections(retry_failed=True),
    ]


def test_added_events_queue_their_projection() -> None:
    card = EventCardInput(title="t", summary="s", source_block_id="b", source_message_ids=["m"])
    runner = RecordingRunner({AddEvents: ["card"]})
    assert pipeline.run(AddEvents(events=[card]), runner) == ["card"]
    assert [type(m) for m in runner.delivered] == [AddEvents, QueueProjections]


def test_an_erasure_reloads_every_host() -> None:
    runner = RecordingRunner({EraseThread: "report"})
    assert pipeline.run(EraseThread(thread_id=None, reason="asked"), runner) == "report"
    assert runner.reloads == 1


def test_a_signed_anchor_is_logged_unless_read_only() -> None:
    from stratagate.anchors import Anchor

    signed = Anchor(
        namespace="n", position=4, head_hash="h", event_count=4, created_at="t", seal="s"
    )
    for writes, logged in (
        (True, [LogCheckpoint(position=4, head_hash="h", signature="s")]),
        (False, []),
    ):
        runner = RecordingRunner({TakeAnchor: signed}, writes=writes)
        assert pipeline.run(TakeAnchor(), runner) is signed
        assert runner.delivered[1:] == logged


class LosingRunner(RecordingRunner):
    """Loses the race with another writer on the first ``losses`` deliveries of each type."""

    def __init__(self, answers: dict[type[Any], Any], losses: int, *, retry: bool) -> None:
        super().__init__(answers)
        self.losses = losses
        self.retry_conflicts = retry
        self.lost: dict[type[Any], int] = {}

    def deliver(self, message: Message[Any]) -> Any:
        lost = self.lost.get(type(message), 0)
        if lost < self.losses:
            self.lost[type(message)] = lost + 1
            self.delivered.append(message)
            raise StaleHandleError("another writer appended first", namespace="ns")
        return super().deliver(message)


def test_a_lost_race_reaches_the_caller_unless_the_runtime_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "pause", lambda attempt: None)
    ack = TurnAck(turn=1, duplicate=False)
    raising = LosingRunner({AppendTurn: ack}, losses=1, retry=False)
    with pytest.raises(StaleHandleError):
        pipeline.run(turn(), raising)
    assert [type(m) for m in raising.delivered] == [AppendTurn]  # nothing followed
    retrying = LosingRunner({AppendTurn: ack}, losses=2, retry=True)
    result = pipeline.run(turn(), retrying)
    assert result.turn == 1
    assert retrying.turns == [0, 1, 2]  # each decision asked for its turn
    # the command decided three times, then each stage twice lost and once answered
    assert [type(m) for m in retrying.delivered] == [AppendTurn] * 3 + [
        type(stage) for stage in DERIVED for _ in range(3)
    ]


def test_stages_that_keep_losing_leave_the_work_to_the_winners(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "pause", lambda attempt: None)
    runner = LosingRunner({AppendTurn: TurnAck(turn=1, duplicate=False)}, losses=10**6, retry=False)
    runner.lost[AppendTurn] = 10**6  # the turn itself lands
    result = pipeline.run(turn(), runner)
    assert result.turn == 1 and result.sealed_block is None
    stages = [type(m) for m in runner.delivered[1:]]  # after the turn
    assert stages == [type(stage) for stage in DERIVED for _ in range(pipeline.CONFLICT_ATTEMPTS)]
