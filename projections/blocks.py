"""Turns, open tails, sealed blocks and ingestion receipts, per thread.

The fold of the ingest stream (plus the source blocks of external imports). Thread ``None`` is
kept under the key ``""``; import source blocks live in pseudo-threads ``import:<batch id>`` so
they never take part in a conversation's decay or context.

Layout, for memory: a namespace holds every message it was ever told, so each is kept as one
``MessageRow`` tuple (the pydantic ``RawMessage`` is made when a message is read), tails,
threads and blocks are slotted classes, and a block's L4 text is its L3 text object when the
two are equal. A snapshot restores the same compact form; sealed blocks a chunk at a time, when
one of them is first read (``projections.lazy.LazyMap``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NamedTuple, Self, overload

from projections.lazy import LazyMap, keyed_of
from projections.read_model import ReadModel, handles
from projections.sealed_turns import SealedTurn
from stratagate.errors import LogIntegrityError
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
from stratagate.events.payloads import MessageData, convert
from stratagate.models import BlockSummary, RawMessage, Role, ToolTrace, trusted

DEFAULT_THREAD = ""
"""Key of the unthreaded conversation (``thread_id=None``)."""


def thread_key(thread_id: str | None) -> str:
    """The storage key of a thread id."""
    return thread_id or DEFAULT_THREAD


_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}
"""Each role's one string object."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class MessageRow(NamedTuple):
    """One raw message as the read model keeps it (a tuple: no per-message object overhead)."""

    id: str
    role: Role
    content: str
    created_us: int
    """``created_at`` as whole microseconds since the epoch (smaller than a datetime, and a
    snapshot writes and reads it as a plain number)."""
    thread_id: str | None
    tool_calls: tuple[ToolTrace, ...] | None
    name: str | None

    @property
    def created_at(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.created_us)

    def message(self) -> RawMessage:
        """The message as the API shows it (its values were validated when folded)."""
        return trusted(
            RawMessage,
            {
                "id": self.id,
                "role": self.role,
                "content": self.content,
                "created_at": _EPOCH + timedelta(microseconds=self.created_us),
                "thread_id": self.thread_id,
                "tool_calls": None if self.tool_calls is None else list(self.tool_calls),
                "name": self.name,
            },
        )


def message_row(message: MessageData, strings: dict[str, str] | None = None) -> MessageRow:
    """The row of a stored (decoded) message; its role, thread id and speaker name are the
    equal objects of ``strings`` when given (a namespace repeats them in every message)."""
    traces = message.tool_calls
    thread_id, name = message.thread_id, message.name
    if strings is not None:
        thread_id = None if thread_id is None else strings.setdefault(thread_id, thread_id)
        name = None if name is None else strings.setdefault(name, name)
    return MessageRow(
        message.id,
        _ROLES[message.role],
        message.content,
        (message.created_at - _EPOCH) // _MICROSECOND,
        thread_id,
        None if traces is None else tuple(convert(ToolTrace, t) for t in traces),
        name,
    )


class LazyRows(Sequence[MessageRow]):
    """A turn's rows with its content still sealed (``SealedTurn``), or a block's made of such
    turns' rows: made when first read; their ids and count are known before."""

    __slots__ = ("_rows", "_source", "ids")

    def __init__(
        self, ids: tuple[str, ...], source: SealedTurn | tuple[Sequence[MessageRow], ...]
    ) -> None:
        self.ids = ids
        self._source: SealedTurn | tuple[Sequence[MessageRow], ...] | None = source
        self._rows: tuple[MessageRow, ...] = ()

    @classmethod
    def of_turn(cls, turn: SealedTurn) -> LazyRows:
        return cls(tuple(part[0] for part in turn.parts), turn)

    @property
    def rows(self) -> tuple[MessageRow, ...]:
        """The rows, made now if they are not yet."""
        source = self._source
        if source is not None:
            if isinstance(source, SealedTurn):
                self._rows = tuple(
                    MessageRow(message_id, _ROLES[role], content, created_us, thread_id, None, name)
                    for (message_id, role, created_us, thread_id, name, _), content in zip(
                        source.parts, source.contents(), strict=True
                    )
                )
            else:
                self._rows = tuple(row for part in source for row in part)
            self._source = None
        return self._rows

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> MessageRow: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[MessageRow, ...]: ...
    def __getitem__(self, index: int | slice) -> MessageRow | tuple[MessageRow, ...]:
        return self.rows[index]

    def __iter__(self) -> Iterator[MessageRow]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        """Equal to the tuple of the same rows (as a record holding either compares)."""
        if isinstance(other, LazyRows):
            other = other.rows
        return self.rows == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows)


def row_ids(rows: Sequence[MessageRow]) -> Iterable[str]:
    """The ids of rows, in order, without making lazy ones."""
    return rows.ids if isinstance(rows, LazyRows) else (row.id for row in rows)


def joined_rows(parts: Sequence[Sequence[MessageRow]]) -> Sequence[MessageRow]:
    """The rows of ``parts`` in order: one tuple, or lazy while any part is."""
    if not any(isinstance(part, LazyRows) for part in parts):
        return tuple(row for part in parts for row in part)
    return LazyRows(tuple(i for part in parts for i in row_ids(part)), tuple(parts))


def messages_of_rows(rows: Iterable[MessageRow]) -> list[RawMessage]:
    """The API messages of rows, in order."""
    return [row.message() for row in rows]


@dataclass(slots=True)
class TailTurn:
    """A completed turn not yet sealed into a block."""

    turn: int
    thread_turn: int
    rows: Sequence[MessageRow]
    """A tuple, or ``LazyRows`` when the turn was replayed with its content sealed."""
    at: datetime

    @property
    def messages(self) -> list[RawMessage]:
        return messages_of_rows(self.rows)


@dataclass(slots=True)
class ThreadRecord:
    """One conversation thread: its turn count, open tail, blocks and pending seal."""

    thread_id: str | None
    turns: int = 0
    tail: list[TailTurn] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    seal_status: Literal["running", "failed"] | None = None
    seal_attempts: int = 0
    seal_error: str | None = None
    seal_worker: str | None = None
    """Who claimed the running seal (``SealStarted.worker``)."""
    seal_started_at: datetime | None = None


@dataclass(slots=True)
class BlockRecord:
    """A sealed block's immutable content (the decay pointer lives in the decay model)."""

    id: str
    thread_id: str | None
    origin: Literal["conversation", "import"]
    sequence: int
    position: int
    start_turn: int
    end_turn: int
    created_at: datetime
    summary: BlockSummary
    summarizer: str
    l3_condensed: str
    l4_readable: str
    rows: Sequence[MessageRow]
    """A tuple, or ``LazyRows`` when sealed turns' content is still sealed."""

    @property
    def l5_raw(self) -> list[RawMessage]:
        return messages_of_rows(self.rows)


def _shared_l4(l3: str, l4: str) -> str:
    """L4 as L3's own text object when the two are equal (one copy held, not two)."""
    return l3 if l4 == l3 else l4


def _same_or_rows(
    turns: Sequence[TailTurn], stored: Sequence[MessageData] | None
) -> Sequence[MessageRow]:
    """A block's rows: the tail's already folded ones when the seal stored none (v2) or the
    same messages (as a v1 seal's always are), else made from what the v1 block stored."""
    if stored is None:
        return joined_rows([turn.rows for turn in turns])
    folded = [row for turn in turns for row in turn.rows]
    if [m.id for m in folded] == [m.id for m in stored] and all(
        a.content == b.content for a, b in zip(folded, stored, strict=True)
    ):
        return tuple(folded)
    return tuple(message_row(m) for m in stored)


def _check_sealed_tail(turns: Sequence[TailTurn], event: BlockSealed, at: Recorded) -> None:
    """A seal's turns must be its thread's first open ones, else the log is damaged: a v2 seal
    stores no messages to fall back on (a v1 seal fell back to the list it stored)."""
    if [turn.thread_turn for turn in turns] != list(range(event.start_turn, event.end_turn + 1)):
        raise LogIntegrityError(
            f"the BlockSealed event at global position {at.position} seals turns "
            f"{event.start_turn}-{event.end_turn} of its thread, which are not its open turns",
            at.position,
        )


MessageRef = tuple[str, int, str | None]
"""Where a raw message lives: its thread key, turn and (once sealed) block. One per message
for the whole history, so a plain tuple of strings and an int: the garbage collector stops
tracking such a tuple, and a full collection does not walk it (an object of a class, slotted
or named tuple, it walks every time)."""


def turn_digest(thread_id: str | None, messages: Sequence[MessageData]) -> str:
    """What a receipt id vouches for: the turn's thread and its messages' roles, names, texts
    and tool calls (not their ids or times, which a retry draws anew). The last answer is
    kept for the same (frozen) message objects: the sealer asks before it appends a turn,
    and the fold of that very turn asks again."""
    last = _last_digest
    if (
        last is not None
        and last[0] == thread_id
        and len(last[1]) == len(messages)
        and all(a is b for a, b in zip(last[1], messages, strict=False))
    ):
        return last[2]
    content = [
        [m.role, m.name, m.content, [t.model_dump(mode="json") for t in m.tool_calls or []]]
        for m in messages
    ]
    digest = hashlib.sha256(canonical_json([thread_id, content]).encode()).hexdigest()[:16]
    _remember_digest((thread_id, tuple(messages), digest))
    return digest  # 64 bits tell a retry from another turn; snapshots stay small


_last_digest: tuple[str | None, tuple[MessageData, ...], str] | None = None
"""The last ``turn_digest``: its thread, its messages (held, so no other object takes their
identity) and the digest."""


def _remember_digest(entry: tuple[str | None, tuple[MessageData, ...], str] | None) -> None:
    global _last_digest
    _last_digest = entry


def forget_turn_digest() -> None:
    """Drop the remembered digest and the messages it holds (an erasure leaves no copy)."""
    _remember_digest(None)


class BlocksModel(ReadModel):
    """Threads, tails, blocks, message locations, receipts and block settings."""

    name = "blocks"
    version = 5
    """2: message locations as lists; 3: each receipt with its turn's content digest; 5:
    threads, blocks and messages as positional rows (see ``snapshot``)."""
    keyed_sections = frozenset({"blocks", "messages"})

    def __init__(self) -> None:
        self.block_turn_size: int | None = None
        self.block_decay_lambda: float | None = None
        self.turn = 0
        self.receipts: dict[str, str] = {}
        """Receipt id → digest of its turn's content (``turn_digest``)."""
        self.commands: dict[str, int] = {}
        self.threads: dict[str, ThreadRecord] = {}
        self.blocks: LazyMap[BlockRecord] = LazyMap()
        """Block id → block, in sealing order (restored lazily: see ``restore``)."""
        self.messages: LazyMap[MessageRef] = LazyMap()
        self._strings: dict[str, str] = {}
        """Thread keys and ids and speaker names, one object each (not state: memory only)."""

    # -- fold -------------------------------------------------------------------------------

    @handles(SettingsChanged)
    def _settings(self, event: SettingsChanged, _: Recorded) -> None:
        self.block_turn_size = event.block_turn_size
        self.block_decay_lambda = event.block_decay_lambda

    @handles(TurnAppended)
    def _turn(self, event: TurnAppended | SealedTurn, _: Recorded) -> None:
        self.turn = event.turn
        if event.receipt_id is not None:
            assert isinstance(event, TurnAppended), "a sealed turn has no receipt id"
            self.receipts[event.receipt_id] = turn_digest(event.thread_id, event.messages)
        if event.command_id is not None:
            self.commands[event.command_id] = event.turn
        strings = self._strings
        key = thread_key(event.thread_id)
        key = strings.setdefault(key, key)
        thread = self.threads.get(key)
        if thread is None:
            thread = self.threads[key] = ThreadRecord(event.thread_id and key)
        thread.turns = event.thread_turn
        rows: Sequence[MessageRow]
        if isinstance(event, SealedTurn):
            rows = LazyRows.of_turn(event)
        else:
            rows = tuple(message_row(m, strings) for m in event.messages)
        thread.tail.append(TailTurn(event.turn, event.thread_turn, rows, event.at))
        ref = (key, event.turn, None)
        for message_id in row_ids(rows):
            self.messages[message_id] = ref

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
    def _sealed(self, event: BlockSealed, recorded: Recorded) -> None:
        key = thread_key(event.thread_id)
        thread = self.threads.get(key)
        sealed_turns = event.end_turn - event.start_turn + 1
        turns = thread.tail[:sealed_turns] if thread else []
        if thread is None or event.l5_raw is None:  # v2: L5 is these turns of the open tail
            _check_sealed_tail(turns, event, recorded)
        assert thread is not None
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
                l4_readable=_shared_l4(event.l3_condensed, event.l4_readable),
                rows=_same_or_rows(turns, event.l5_raw),
            )
        )

    @handles(ExternalImportRecorded)
    def _imported(self, event: ExternalImportRecorded, _: Recorded) -> None:
        thread_id = f"import:{event.batch_id}"
        self.threads[thread_id] = ThreadRecord(
            thread_id=thread_id, turns=1, block_ids=[event.block_id]
        )
        for message in event.messages:
            self.messages[message.id] = (thread_id, 1, None)
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
                l4_readable=_shared_l4(event.l3_condensed, event.l4_readable),
                rows=tuple(message_row(m, self._strings) for m in event.messages),
            )
        )

    def _add_block(self, block: BlockRecord) -> None:
        self.blocks[block.id] = block
        messages = self.messages
        for message_id in row_ids(block.rows):
            ref = messages.get(message_id)
            if ref is not None:
                messages[message_id] = (ref[0], ref[1], block.id)

    # -- queries ----------------------------------------------------------------------------

    def thread(self, thread_id: str | None) -> ThreadRecord | None:
        """The thread record, or ``None`` when the thread has no turns yet."""
        return self.threads.get(thread_key(thread_id))

    def thread_turns(self, thread_id: str | None) -> int:
        """Turns appended so far to the thread (``core.ingest.TurnsSoFar``)."""
        thread = self.threads.get(thread_key(thread_id))
        return 0 if thread is None else thread.turns

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

    def tail_rows(self, thread_id: str | None) -> list[MessageRow]:
        """Rows of the open tail of one thread, in order."""
        thread = self.thread(thread_id)
        if thread is None:
            return []
        return [row for turn in thread.tail for row in turn.rows]

    def tail_messages(self, thread_id: str | None) -> list[RawMessage]:
        """Messages of the open tail of one thread, in order."""
        return messages_of_rows(self.tail_rows(thread_id))

    def message(self, message_id: str) -> RawMessage | None:
        """A raw message by id, from its block or the open tail."""
        ref = self.messages.get(message_id)
        if ref is None:
            return None
        thread, _, block_id = ref
        source: Iterable[MessageRow]
        if block_id is not None:
            source = self.blocks[block_id].rows
        else:
            source = (row for turn in self.threads[thread].tail for row in turn.rows)
        return next((row.message() for row in source if row.id == message_id), None)

    def block_created(self, block_id: str) -> datetime:
        """When a block was sealed."""
        return self.blocks[block_id].created_at

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Positional rows (see ``_dump_thread``, ``_dump_block``, ``_dump_row``); a block's L4
        is ``None`` when it equals its L3."""
        return {
            "block_turn_size": self.block_turn_size,
            "block_decay_lambda": self.block_decay_lambda,
            "turn": self.turn,
            "receipts": sorted(self.receipts.items()),
            "commands": sorted(self.commands.items()),
            "threads": [[key, *_dump_thread(t)] for key, t in self.threads.items()],
            "blocks": [_dump_block(b) for b in self.blocks.values()],
            "messages": [[m, *ref] for m, ref in self.messages.items()],
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any]) -> Self:
        """The model ``data`` was taken from; sealed blocks are built when first read."""
        model = cls()
        model.block_turn_size = data["block_turn_size"]
        model.block_decay_lambda = data["block_decay_lambda"]
        model.turn = data["turn"]
        model.receipts = dict(data["receipts"])
        model.commands = dict(data["commands"])
        loader = _RowLoader(model._strings)
        strings = loader.strings
        model.threads = {
            strings.setdefault(key, key): loader.thread(rest) for key, *rest in data["threads"]
        }
        model.blocks = keyed_of(data, "blocks", loader.block)
        model.messages = keyed_of(
            data,
            "messages",
            lambda row: (strings.setdefault(row[1], row[1]), row[2], row[3]),
        )
        return model


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dump_row(row: MessageRow) -> list[Any]:
    traces = row.tool_calls
    return [
        row.id,
        row.role,
        row.content,
        row.created_us,
        row.thread_id,
        None if traces is None else [t.model_dump(mode="json") for t in traces],
        row.name,
    ]


def _dump_thread(thread: ThreadRecord) -> list[Any]:
    return [
        thread.thread_id,
        thread.turns,
        [
            [t.turn, t.thread_turn, t.at.isoformat(), [_dump_row(r) for r in t.rows]]
            for t in thread.tail
        ],
        thread.block_ids,
        thread.seal_status,
        thread.seal_attempts,
        thread.seal_error,
        thread.seal_worker,
        _time(thread.seal_started_at),
    ]


def _dump_block(block: BlockRecord) -> list[Any]:
    return [
        block.id,
        block.thread_id,
        block.origin,
        block.sequence,
        block.position,
        block.start_turn,
        block.end_turn,
        block.created_at.isoformat(),
        block.summary.model_dump(mode="json"),
        block.summarizer,
        block.l3_condensed,
        None if block.l4_readable == block.l3_condensed else block.l4_readable,
        [_dump_row(r) for r in block.rows],
    ]


class _RowLoader:
    """Rebuilds rows from snapshot lists, sharing repeated small strings (roles, thread ids,
    names) as the fold does, so a restored model is as compact as a replayed one."""

    def __init__(self, strings: dict[str, str]) -> None:
        self.strings = strings

    def share(self, value: str | None) -> str | None:
        return None if value is None else self.strings.setdefault(value, value)

    def row(self, data: list[Any]) -> MessageRow:
        message_id, role, content, created_us, thread_id, traces, name = data
        strings = self.strings
        return MessageRow(
            message_id,
            _ROLES[role],
            content,
            created_us,
            None if thread_id is None else strings.setdefault(thread_id, thread_id),
            None if traces is None else tuple(ToolTrace.model_validate(t) for t in traces),
            None if name is None else strings.setdefault(name, name),
        )

    def thread(self, data: list[Any]) -> ThreadRecord:
        thread_id, turns, tail, block_ids, status, attempts, error, worker, started = data
        row = self.row
        return ThreadRecord(
            self.share(thread_id),
            turns,
            [
                TailTurn(turn, thread_turn, tuple(row(r) for r in rows), datetime.fromisoformat(at))
                for turn, thread_turn, at, rows in tail
            ],
            block_ids,
            status,
            attempts,
            error,
            worker,
            None if started is None else datetime.fromisoformat(started),
        )

    def block(self, data: list[Any]) -> BlockRecord:
        block_id, thread_id, origin, sequence, position, start, end = data[:7]
        created_at, summary, summarizer, l3, l4, rows = data[7:]
        row = self.row
        return BlockRecord(
            block_id,
            self.share(thread_id),
            origin,
            sequence,
            position,
            start,
            end,
            datetime.fromisoformat(created_at),
            BlockSummary.model_validate(summary),
            summarizer,
            l3,
            l3 if l4 is None else l4,
            tuple(row(r) for r in rows),
        )


__all__ = [
    "DEFAULT_THREAD",
    "BlockRecord",
    "BlocksModel",
    "LazyRows",
    "MessageRef",
    "MessageRow",
    "TailTurn",
    "ThreadRecord",
    "forget_turn_digest",
    "message_row",
    "messages_of_rows",
    "thread_key",
    "turn_digest",
]
