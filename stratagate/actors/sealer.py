"""The sealer: makes turns durable, seals full tails into blocks, lifts blocks.

Order of work for a seal (spec 000 "Storage adapters"): the turns are already durable; a
``SealStarted`` is appended; the summarizer runs outside any transaction; then either
``BlockSealed`` (all six views) or ``SealFailed`` is appended. A seal found started at hydration
is marked failed (interrupted) and retried by ``resume_pending_work``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter

from projections.blocks import TailTurn, ThreadRecord, turn_digest
from projections.jobs import INTERRUPTED
from stratagate.actors.role import Role, Taken, error_text, handles
from stratagate.callbacks import describe, invoke, is_local, validate_output
from stratagate.core.decay import DEFAULT_BLOCK_LAMBDA, normalize_level
from stratagate.core.default_summary import default_summary
from stratagate.core.ingest import TurnRequest, TurnVerdict, decide_turn, decide_turns
from stratagate.core.layers import deterministic_layers
from stratagate.errors import UnknownIdError
from stratagate.events import (
    INGEST,
    BlockLifted,
    BlockSealed,
    DomainEvent,
    SealFailed,
    SealStarted,
    SettingsChanged,
    TurnAppended,
)
from stratagate.events.payloads import MessageData, SummaryData, convert
from stratagate.messages import (
    AppendTurn,
    AppendTurns,
    ApplySettings,
    LiftBlock,
    SealReady,
    TurnAck,
)
from stratagate.models import BlockSummary, MemoryBlock, RawMessage, trusted
from stratagate.options import DEFAULT_BLOCK_TURN_SIZE
from stratagate.providers import Summarizer, resolve
from stratagate.results import BlockContextEntry


class _SealFailure(Exception):
    """A summarizer failed: the events that record it (the cause is the summarizer's error)."""

    def __init__(self, events: list[DomainEvent]) -> None:
        super().__init__("seal failed")
        self.events = events


_STORED_MESSAGES = TypeAdapter(list[MessageData])


def stored_messages(messages: Sequence[RawMessage]) -> list[MessageData]:
    """``messages`` (validated ``RawMessage``s) as their stored form. ``RawMessage``'s fields
    and rules are ``MessageData``'s, so a message without tool calls is copied as it is
    (``trusted``); tool calls are converted by one pydantic call for the list (their
    arguments are kept in canonical key order)."""
    if any(type(m) is not RawMessage or m.tool_calls is not None for m in messages):
        return _STORED_MESSAGES.validate_python(messages, from_attributes=True)
    return [trusted(MessageData, dict(m.__dict__)) for m in messages]


def _request(command: AppendTurn, messages: list[MessageData]) -> TurnRequest:
    """What the decider needs of one turn (its digest only with a receipt id)."""
    receipt = command.receipt_id
    return TurnRequest(
        receipt,
        command.command_id,
        command.thread_id,
        tuple(m.id for m in messages),
        None if receipt is None else turn_digest(command.thread_id, messages),
    )


def _turn_appended(
    command: AppendTurn, messages: list[MessageData], verdict: TurnVerdict
) -> TurnAppended:
    """The event of a new turn, not validated again: the command's fields are checked, the
    messages stored ones, the numbers the decider's (from 1 up)."""
    assert verdict.turn is not None and verdict.thread_turn is not None
    return trusted(
        TurnAppended,
        {
            "type": "TurnAppended",
            "at": command.at,
            "turn": verdict.turn,
            "thread_id": command.thread_id,
            "thread_turn": verdict.thread_turn,
            "receipt_id": command.receipt_id,
            "command_id": command.command_id,
            "messages": messages,
        },
    )


class Sealer(Role):
    """The only writer of the ingest stream."""

    name = host = "sealer"
    stream = INGEST
    components = ("blocks", "decay")

    def settings(self) -> tuple[int, float]:
        """Block size and decay lambda in force (recorded, else the options, else defaults)."""
        blocks = self.state.blocks
        size = blocks.block_turn_size or self.options.block_turn_size or DEFAULT_BLOCK_TURN_SIZE
        lam = blocks.block_decay_lambda
        if lam is None:
            lam = self.options.block_decay_lambda
        return size, DEFAULT_BLOCK_LAMBDA if lam is None else lam

    @handles(ApplySettings)
    def apply_settings(self, _: ApplySettings | None = None) -> bool:
        """Log explicit options that differ from what the namespace recorded; True if changed."""
        self.refresh()
        blocks = self.state.blocks
        explicit = (
            self.options.block_turn_size is not None or self.options.block_decay_lambda is not None
        )
        if blocks.block_turn_size is None and not explicit:
            return False  # a new namespace records its settings with its first turn
        size, lam = self.settings()
        wanted = (
            self.options.block_turn_size or size,
            lam if self.options.block_decay_lambda is None else self.options.block_decay_lambda,
        )
        if wanted == (blocks.block_turn_size, blocks.block_decay_lambda):
            return False
        self._append(
            SettingsChanged(
                block_turn_size=wanted[0], block_decay_lambda=wanted[1], at=self.options.now()
            )
        )
        return True

    @handles(AppendTurn)
    def append_turn(self, command: AppendTurn) -> TurnAck:
        """Make one turn durable; a known receipt id or command id appends nothing. The
        batch's rules (``decide_turn``) for a turn alone, without the batch's lists; the
        digest only for a receipt id (nothing else reads it)."""
        self.refresh()
        blocks = self.state.blocks
        messages = stored_messages(command.messages)
        verdict = decide_turn(_request(command, messages), blocks)
        if verdict.new:
            self._append(*self._with_settings([_turn_appended(command, messages, verdict)]))
        return trusted(TurnAck, {"turn": verdict.turn, "duplicate": verdict.duplicate})

    @handles(AppendTurns)
    def append_turns(self, command: AppendTurns) -> list[TurnAck]:
        """Make many turns durable in one atomic append (one commit); each turn is decided as
        if appended alone, after the turns before it in the batch (``core.ingest``)."""
        self.refresh()
        turns = command.turns
        stored = [stored_messages(item.messages) for item in turns]
        requests = [_request(item, messages) for item, messages in zip(turns, stored, strict=True)]
        verdicts = decide_turns(requests, self.state.blocks)
        events = [
            _turn_appended(item, messages, verdict)
            for item, messages, verdict in zip(turns, stored, verdicts, strict=True)
            if verdict.new
        ]
        if events:
            self._append(*self._with_settings(events))
        return [TurnAck(turn=v.turn, duplicate=v.duplicate) for v in verdicts]

    def _with_settings(self, events: list[TurnAppended]) -> list[SettingsChanged | TurnAppended]:
        """``events``, after the settings a new namespace records with its first turn."""
        if self.state.blocks.block_turn_size is not None:
            return [*events]
        size, lam = self.settings()
        settings = SettingsChanged(block_turn_size=size, block_decay_lambda=lam, at=events[0].at)
        return [settings, *events]

    @handles(SealReady)
    def seal_ready(self, command: SealReady) -> list[MemoryBlock]:
        """Seal every full tail (oldest turns first); failed seals only when retrying.

        A model's seal is bracketed by two commits — its start durable before the call, so a
        crash in between leaves it running, to be marked interrupted. A local, deterministic
        summarizer (none, or the offline one) cannot be left half-done but by the death of the
        process, so every block ready now is sealed in one commit."""
        self.refresh()
        size, _ = self.settings()
        summarizer = resolve("summarizer", self.options.summarizer)
        local = is_local(summarizer)
        pending: list[DomainEvent] = []
        block_ids: list[str] = []
        made: dict[str, list[RawMessage]] = {}
        """Each sealed block's messages, as the seal made them (the block hands them back)."""
        taken = Taken(self.state.blocks.blocks)
        try:
            if command.retry_failed:
                self.recover()
            for thread in list(self.state.blocks.conversation_threads()):
                if thread.seal_status == "failed" and not command.retry_failed:
                    continue
                if thread.seal_status == "running":
                    continue  # another handle claimed it (recover() frees abandoned claims)
                chunks = [thread.tail[i : i + size] for i in range(0, len(thread.tail), size)]
                for n, turns in enumerate(chunk for chunk in chunks if len(chunk) == size):
                    if not local:  # the state moves with each commit: look again
                        current = self.state.blocks.thread(thread.thread_id)
                        assert current is not None
                        thread, n, turns = current, 0, current.tail[:size]
                    attempt = thread.seal_attempts + 1 if n == 0 else 1
                    position = len(thread.block_ids) + 1 + n
                    events, made_from = self._seal(
                        summarizer, thread, turns, position, attempt, taken
                    )
                    block_ids.append(events[-1].block_id)  # type: ignore[attr-defined]
                    made[block_ids[-1]] = made_from
                    if local:
                        pending.extend(events)
                    elif not self._record_claimed(events[-1:], thread, turns):
                        block_ids.pop()  # erased meanwhile: recorded as failed
        except _SealFailure as failure:
            if local:
                self._append(*pending, *failure.events)
            else:
                self._record_claimed(failure.events, thread, turns)
            raise failure.__cause__ from None  # type: ignore[misc]
        if pending:
            self._append(*pending)
        view = self.view
        return [view.sealed_block(block_id, made[block_id]) for block_id in block_ids]

    def _seal(
        self,
        summarizer: Summarizer | None,
        thread: ThreadRecord,
        turns: list[TailTurn],
        position: int,
        attempt: int,
        taken: Taken,
    ) -> tuple[list[DomainEvent], list[RawMessage]]:
        """A block of ``turns``: its start and, after the summarizer, its sealed views, and
        the block's messages. A model's start is appended before it is called (the caller
        appends the rest)."""
        messages = [m for turn in turns for m in turn.messages]
        start, end = turns[0].thread_turn, turns[-1].thread_turn
        started = SealStarted(
            thread_id=thread.thread_id,
            start_turn=start,
            end_turn=end,
            attempt=attempt,
            worker=self.worker_token(),
            at=self.options.now(),
        )
        local = is_local(summarizer)
        if not local:
            self._append(started)
        try:
            if summarizer is None:
                summary = default_summary(messages)
            else:
                summary = validate_output(BlockSummary, invoke(summarizer, messages), "summarizer")
        except Exception as exc:
            failed = SealFailed(
                thread_id=thread.thread_id,
                start_turn=start,
                end_turn=end,
                error=error_text(exc),
                at=self.options.now(),
            )
            raise _SealFailure([started, failed] if local else [failed]) from exc
        layers = deterministic_layers(messages)
        block_id = self.new_id("blk", taken)
        taken.add(block_id)
        sealed = BlockSealed(
            block_id=block_id,
            thread_id=thread.thread_id,
            position=position,
            start_turn=start,
            end_turn=end,
            summary=convert(SummaryData, summary),
            summarizer=describe(summarizer),
            l3_condensed=layers.l3_condensed,
            l4_readable=layers.l4_readable,
            at=self.options.now(),
        )
        return [started, sealed], layers.l5_raw

    @handles(LiftBlock)
    def lift(self, command: LiftBlock) -> BlockContextEntry:
        """Re-anchor a block's pointer at the chosen level and its thread's latest position;
        returns the block's context entry at its new level."""
        self.refresh()
        block_id = command.block_id
        record = self.state.blocks.blocks.get(block_id)
        if record is None:
            raise UnknownIdError(f"unknown block id {block_id!r}")
        level = normalize_level(command.target, self.state.decay.level(block_id))
        latest = self.state.decay.latest[self.state.decay.pointers[block_id].thread]
        self._append(
            BlockLifted(
                block_id=block_id,
                level=level,
                anchor_position=latest,
                source=command.source,
                at=self.options.now(),
            )
        )
        return self.view.block_entry(block_id)

    def _record_claimed(
        self, events: list[DomainEvent], thread: ThreadRecord, turns: list[TailTurn]
    ) -> bool:
        """Append a model seal's outcome under its claim (``Role._append_claimed``)."""
        return self._append_claimed(
            lambda: events, lambda error: self._failed(thread, turns, error)
        )

    def _failed(
        self, thread: ThreadRecord, turns: list[TailTurn], error: str, *, interrupted: bool = False
    ) -> SealFailed:
        return SealFailed(
            thread_id=thread.thread_id,
            start_turn=turns[0].thread_turn if turns else 0,
            end_turn=turns[-1].thread_turn if turns else 0,
            error=error,
            interrupted=interrupted,
            at=self.options.now(),
        )

    def recover(self) -> int:
        """Seals left running by a handle that is gone become failed (interrupted)."""
        self.refresh()
        running = [
            t
            for t in self.state.blocks.conversation_threads()
            if t.seal_status == "running" and self.abandoned(t.seal_worker, t.seal_started_at)
        ]
        size, _ = self.settings()
        for thread in running:
            self._append(self._failed(thread, thread.tail[:size], INTERRUPTED, interrupted=True))
        return len(running)


__all__ = ["Sealer"]
