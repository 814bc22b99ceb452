"""The sealer: makes turns durable, seals full tails into blocks, lifts blocks.

Order of work for a seal (spec 000 "Storage adapters"): the turns are already durable; a
``SealStarted`` is appended; the summarizer runs outside any transaction; then either
``BlockSealed`` (all six views) or ``SealFailed`` is appended. A seal found started at hydration
is marked failed (interrupted) and retried by ``resume_pending_work``.
"""

from __future__ import annotations

from pydantic import Field

from projections.blocks import ThreadRecord
from projections.jobs import INTERRUPTED
from stratagate.actors.role import Role, error_text
from stratagate.callbacks import describe, invoke, resolve, validate_output
from stratagate.decay import normalize_level
from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.events import (
    INGEST,
    BlockLifted,
    BlockSealed,
    SealFailed,
    SealStarted,
    SettingsChanged,
    TurnAppended,
)
from stratagate.layers import deterministic_layers
from stratagate.models import BlockSummary, MemoryBlock, Model, RawMessage, UtcDatetime
from stratagate.options import DEFAULT_BLOCK_DECAY_LAMBDA, DEFAULT_BLOCK_TURN_SIZE
from stratagate.summary import default_summary


class TurnCommand(Model):
    """A validated turn, with ids and times already decided by the façade."""

    command_id: str
    thread_id: str | None
    receipt_id: str | None
    messages: list[RawMessage] = Field(min_length=1)
    at: UtcDatetime


class TurnAck(Model):
    """The sealer's answer once a turn is durable (or recognised as a duplicate)."""

    turn: int | None
    duplicate: bool = False


class Sealer(Role):
    """The only writer of the ingest stream."""

    stream = INGEST
    components = ("blocks", "decay")

    def settings(self) -> tuple[int, float]:
        """Block size and decay lambda in force (recorded, else the options, else defaults)."""
        blocks = self.state.blocks
        size = blocks.block_turn_size or self.options.block_turn_size or DEFAULT_BLOCK_TURN_SIZE
        lam = blocks.block_decay_lambda
        if lam is None:
            lam = self.options.block_decay_lambda
        return size, DEFAULT_BLOCK_DECAY_LAMBDA if lam is None else lam

    def apply_settings(self) -> bool:
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

    def append_turn(self, command: TurnCommand) -> TurnAck:
        """Make one turn durable; a known receipt id or command id appends nothing."""
        self.refresh()
        blocks = self.state.blocks
        if command.receipt_id is not None and command.receipt_id in blocks.receipts:
            return TurnAck(turn=None, duplicate=True)
        if command.command_id in blocks.commands:
            return TurnAck(turn=blocks.commands[command.command_id])
        taken = [m.id for m in command.messages if m.id in blocks.messages]
        if taken or len({m.id for m in command.messages}) != len(command.messages):
            raise InvalidInputError(
                f"message ids already used: {', '.join(taken) or 'repeated in the turn'}"
            )
        events = []
        if blocks.block_turn_size is None:
            size, lam = self.settings()
            events.append(
                SettingsChanged(block_turn_size=size, block_decay_lambda=lam, at=command.at)
            )
        thread = blocks.thread(command.thread_id)
        turn = blocks.turn + 1
        events.append(
            TurnAppended(
                turn=turn,
                thread_id=command.thread_id,
                thread_turn=(thread.turns if thread else 0) + 1,
                receipt_id=command.receipt_id,
                command_id=command.command_id,
                messages=command.messages,
                at=command.at,
            )
        )
        self._append(*events)
        return TurnAck(turn=turn)

    def seal_ready(self, *, retry_failed: bool = False) -> list[MemoryBlock]:
        """Seal every full tail (oldest turns first); failed seals only when retrying."""
        self.refresh()
        size, _ = self.settings()
        sealed: list[MemoryBlock] = []
        for thread in list(self.state.blocks.conversation_threads()):
            current: ThreadRecord | None = thread
            while current is not None and len(current.tail) >= size:
                if current.seal_status == "failed" and not retry_failed:
                    break
                sealed.append(self._seal(current, size))
                current = self.state.blocks.thread(current.thread_id)
        return sealed

    def _seal(self, thread: ThreadRecord, size: int) -> MemoryBlock:
        turns = thread.tail[:size]
        messages = [m for t in turns for m in t.messages]
        start, end = turns[0].thread_turn, turns[-1].thread_turn
        self._append(
            SealStarted(
                thread_id=thread.thread_id,
                start_turn=start,
                end_turn=end,
                attempt=thread.seal_attempts + 1,
                at=self.options.now(),
            )
        )
        summarizer = resolve("summarizer", self.options.summarizer)
        try:
            if summarizer is None:
                summary = default_summary(messages)
            else:
                summary = validate_output(BlockSummary, invoke(summarizer, messages), "summarizer")
        except Exception as exc:
            self._append(
                SealFailed(
                    thread_id=thread.thread_id,
                    start_turn=start,
                    end_turn=end,
                    error=error_text(exc),
                    at=self.options.now(),
                )
            )
            raise
        layers = deterministic_layers(messages)
        block_id = self.options.make_id("blk")
        self._append(
            BlockSealed(
                block_id=block_id,
                thread_id=thread.thread_id,
                position=len(thread.block_ids) + 1,
                start_turn=start,
                end_turn=end,
                summary=summary,
                summarizer=describe(summarizer),
                l3_condensed=layers.l3_condensed,
                l4_readable=layers.l4_readable,
                l5_raw=layers.l5_raw,
                at=self.options.now(),
            )
        )
        return self.view.block(block_id)

    def lift(self, block_id: str, target: int | str = "next", source: str = "agent") -> MemoryBlock:
        """Re-anchor a block's pointer at the chosen level and its thread's latest position."""
        self.refresh()
        if source not in ("user", "agent"):
            raise InvalidInputError(f"source must be 'user' or 'agent', got {source!r}")
        record = self.state.blocks.blocks.get(block_id)
        if record is None:
            raise UnknownIdError(f"unknown block id {block_id!r}")
        level = normalize_level(target, self.state.decay.level(block_id))
        latest = self.state.decay.latest[self.state.decay.pointers[block_id].thread]
        self._append(
            BlockLifted(
                block_id=block_id,
                level=level,
                anchor_position=latest,
                source=source,  # type: ignore[arg-type]
                at=self.options.now(),
            )
        )
        return self.view.block(block_id)

    def recover(self) -> int:
        """Seals found started at hydration become failed (interrupted)."""
        self.refresh()
        running = [
            t for t in self.state.blocks.conversation_threads() if t.seal_status == "running"
        ]
        for thread in running:
            size, _ = self.settings()
            turns = thread.tail[:size]
            self._append(
                SealFailed(
                    thread_id=thread.thread_id,
                    start_turn=turns[0].thread_turn if turns else 0,
                    end_turn=turns[-1].thread_turn if turns else 0,
                    error=INTERRUPTED,
                    interrupted=True,
                    at=self.options.now(),
                )
            )
        return len(running)


__all__ = ["Sealer", "TurnAck", "TurnCommand"]
