"""Turns, open tails, sealed blocks and ingestion receipts, per thread.

The fold of the ingest stream (plus the source blocks of external imports). Thread ``None`` is
kept under the key ``""``; import source blocks live in pseudo-threads ``import:<batch id>`` so
they never take part in a conversation's decay or context.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import Field

from projections.read_model import ReadModel, Record, dump_records, handles, load_records
from stratagate.events import (
    BlockSealed,
    ExternalImportRecorded,
    Recorded,
    SealFailed,
    SealStarted,
    SettingsChanged,
    TurnAppended,
    canonical_json,
)
from stratagate.events.payloads import MessageData, convert, convert_all
from stratagate.models import BlockSummary, RawMessage, UtcDatetime

DEFAULT_THREAD = ""
"""Key of the unthreaded conversation (``thread_id=None``)."""


def thread_key(thread_id: str | None) -> str:
    """The storage key of a thread id."""
    return thread_id or DEFAULT_THREAD


class TailTurn(Record):
    """A completed turn not yet sealed into a block."""

    turn: int
    thread_turn: int
    messages: list[RawMessage]
    at: UtcDatetime


class ThreadRecord(Record):
    """One conversation thread: its turn count, open tail, blocks and pending seal."""

    thread_id: str | None
    turns: int = 0
    tail: list[TailTurn] = Field(default_factory=list)
    block_ids: list[str] = Field(default_factory=list)
    seal_status: Literal["running", "failed"] | None = None
    seal_attempts: int = 0
    seal_error: str | None = None
    seal_worker: str | None = None
    """Who claimed the running seal (``SealStarted.worker``)."""
    seal_started_at: UtcDatetime | None = None


class BlockRecord(Record):
    """A sealed block's immutable content (the decay pointer lives in the decay model)."""

    id: str
    thread_id: str | None
    origin: Literal["conversation", "import"]
    sequence: int
    position: int
    start_turn: int
    end_turn: int
    created_at: UtcDatetime
    summary: BlockSummary
    summarizer: str
    l3_condensed: str
    l4_readable: str
    l5_raw: list[RawMessage]


def _same_or_converted(folded: list[RawMessage], stored: list[MessageData]) -> list[RawMessage]:
    """A block's raw messages: the tail's already folded ones when they are the same messages
    (as a seal's always are), else converted from what the block stored."""
    if [m.id for m in folded] == [m.id for m in stored] and all(
        a.content == b.content for a, b in zip(folded, stored, strict=True)
    ):
        return folded
    return convert_all(RawMessage, stored)


@dataclass(slots=True)
class MessageRef:
    """Where a raw message lives: its thread, turn and (once sealed) block (one per message, so
    a slotted dataclass rather than a pydantic record)."""

    thread: str
    turn: int
    block_id: str | None = None


def turn_digest(thread_id: str | None, messages: Sequence[MessageData]) -> str:
    """What a receipt id vouches for: the turn's thread and its messages' roles, names, texts
    and tool calls (not their ids or times, which a retry draws anew)."""
    content = [
        [m.role, m.name, m.content, [t.model_dump(mode="json") for t in m.tool_calls or []]]
        for m in messages
    ]
    digest = hashlib.sha256(canonical_json([thread_id, content]).encode()).hexdigest()
    return digest[:16]  # 64 bits tell a retry from another turn; snapshots stay small


class BlocksModel(ReadModel):
    """Threads, tails, blocks, message locations, receipts and block settings."""

    name = "blocks"
    version = 4
    """2: message locations as lists; 3: each receipt with its turn's content digest."""

    def __init__(self) -> None:
        self.block_turn_size: int | None = None
        self.block_decay_lambda: float | None = None
        self.turn = 0
        self.receipts: dict[str, str] = {}
        """Receipt id → digest of its turn's content (``turn_digest``)."""
        self.commands: dict[str, int] = {}
        self.threads: dict[str, ThreadRecord] = {}
        self.blocks: dict[str, BlockRecord] = {}
        self.messages: dict[str, MessageRef] = {}

    # -- fold -------------------------------------------------------------------------------

    @handles(SettingsChanged)
    def _settings(self, event: SettingsChanged, _: Recorded) -> None:
        self.block_turn_size = event.block_turn_size
        self.block_decay_lambda = event.block_decay_lambda

    @handles(TurnAppended)
    def _turn(self, event: TurnAppended, _: Recorded) -> None:
        self.turn = event.turn
        if event.receipt_id is not None:
            self.receipts[event.receipt_id] = turn_digest(event.thread_id, event.messages)
        if event.command_id is not None:
            self.commands[event.command_id] = event.turn
        key = thread_key(event.thread_id)
        thread = self.threads.setdefault(key, ThreadRecord(thread_id=event.thread_id))
        thread.turns = event.thread_turn
        thread.tail.append(
            TailTurn(
                turn=event.turn,
                thread_turn=event.thread_turn,
                messages=convert_all(RawMessage, event.messages),
                at=event.at,
            )
        )
        for message in event.messages:
            self.messages[message.id] = MessageRef(thread=key, turn=event.turn)

    @handles(SealStarted)
    def _seal_started(self, event: SealStarted, _: Recorded) -> None:
        thread = self.threads[thread_key(event.thread_id)]
        thread.seal_status = "running"
        thread.seal_attempts += 1
        thread.seal_error = None
        thread.seal_worker = event.worker
        thread.seal_started_at = event.at

    @handles(SealFailed)
    def _seal_failed(self, event: SealFailed, _: Recorded) -> None:
        thread = self.threads[thread_key(event.thread_id)]
        thread.seal_status = "failed"
        thread.seal_error = event.error

    @handles(BlockSealed)
    def _sealed(self, event: BlockSealed, _: Recorded) -> None:
        key = thread_key(event.thread_id)
        thread = self.threads[key]
        sealed_turns = event.end_turn - event.start_turn + 1
        folded = [m for turn in thread.tail[:sealed_turns] for m in turn.messages]
        thread.tail = thread.tail[sealed_turns:]
        thread.block_ids.append(event.block_id)
        thread.seal_status = None
        thread.seal_attempts = 0
        thread.seal_error = None
        self._add_block(
            BlockRecord(
                id=event.block_id,
                thread_id=event.thread_id,
                origin="conversation",
                sequence=len(self.blocks) + 1,
                position=event.position,
                start_turn=event.start_turn,
                end_turn=event.end_turn,
                created_at=event.at,
                summary=convert(BlockSummary, event.summary),
                summarizer=event.summarizer,
                l3_condensed=event.l3_condensed,
                l4_readable=event.l4_readable,
                l5_raw=_same_or_converted(folded, event.l5_raw),
            )
        )

    @handles(ExternalImportRecorded)
    def _imported(self, event: ExternalImportRecorded, _: Recorded) -> None:
        thread_id = f"import:{event.batch_id}"
        self.threads[thread_id] = ThreadRecord(
            thread_id=thread_id, turns=1, block_ids=[event.block_id]
        )
        for message in event.messages:
            self.messages[message.id] = MessageRef(thread=thread_id, turn=1)
        self._add_block(
            BlockRecord(
                id=event.block_id,
                thread_id=thread_id,
                origin="import",
                sequence=len(self.blocks) + 1,
                position=1,
                start_turn=1,
                end_turn=1,
                created_at=event.at,
                summary=convert(BlockSummary, event.summary),
                summarizer="import",
                l3_condensed=event.l3_condensed,
                l4_readable=event.l4_readable,
                l5_raw=convert_all(RawMessage, event.messages),
            )
        )

    def _add_block(self, block: BlockRecord) -> None:
        self.blocks[block.id] = block
        for message in block.l5_raw:
            ref = self.messages.get(message.id)
            if ref is not None:
                ref.block_id = block.id

    # -- queries ----------------------------------------------------------------------------

    def thread(self, thread_id: str | None) -> ThreadRecord | None:
        """The thread record, or ``None`` when the thread has no turns yet."""
        return self.threads.get(thread_key(thread_id))

    def latest_position(self, thread_id: str | None) -> int:
        """Position of the newest sealed block of the thread (0 when none)."""
        thread = self.thread(thread_id)
        return len(thread.block_ids) if thread else 0

    def block_at(self, thread_id: str | None, position: int) -> BlockRecord | None:
        """The block at a 1-based position of a thread."""
        thread = self.thread(thread_id)
        if thread is None or not 1 <= position <= len(thread.block_ids):
            return None
        return self.blocks[thread.block_ids[position - 1]]

    def conversation_threads(self) -> list[ThreadRecord]:
        """Every conversation thread (import pseudo-threads excluded), in first-turn order."""
        return [t for key, t in self.threads.items() if not key.startswith("import:")]

    def messages_of(self, block_id: str) -> list[RawMessage]:
        """L5 messages of a block."""
        return self.blocks[block_id].l5_raw

    def tail_messages(self, thread_id: str | None) -> list[RawMessage]:
        """Messages of the open tail of one thread, in order."""
        thread = self.thread(thread_id)
        if thread is None:
            return []
        return [m for turn in thread.tail for m in turn.messages]

    def message(self, message_id: str) -> RawMessage | None:
        """A raw message by id, from its block or the open tail."""
        ref = self.messages.get(message_id)
        if ref is None:
            return None
        source: list[RawMessage]
        if ref.block_id is not None:
            source = self.blocks[ref.block_id].l5_raw
        else:
            source = [m for turn in self.threads[ref.thread].tail for m in turn.messages]
        return next((m for m in source if m.id == message_id), None)

    def block_created(self, block_id: str) -> datetime:
        """When a block was sealed."""
        return self.blocks[block_id].created_at

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "block_turn_size": self.block_turn_size,
            "block_decay_lambda": self.block_decay_lambda,
            "turn": self.turn,
            "receipts": sorted(self.receipts.items()),
            "commands": sorted(self.commands.items()),
            "threads": dump_records(self.threads, ThreadRecord),
            "blocks": dump_records(self.blocks, BlockRecord),
            "messages": [[m, r.thread, r.turn, r.block_id] for m, r in self.messages.items()],
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.block_turn_size = data["block_turn_size"]
        model.block_decay_lambda = data["block_decay_lambda"]
        model.turn = data["turn"]
        model.receipts = dict(data["receipts"])
        model.commands = dict(data["commands"])
        model.threads = load_records(ThreadRecord, data["threads"])
        model.blocks = load_records(BlockRecord, data["blocks"])
        model.messages = {
            m: MessageRef(thread, turn, block) for m, thread, turn, block in data["messages"]
        }
        return model


__all__ = [
    "DEFAULT_THREAD",
    "BlockRecord",
    "BlocksModel",
    "MessageRef",
    "TailTurn",
    "ThreadRecord",
    "thread_key",
    "turn_digest",
]
