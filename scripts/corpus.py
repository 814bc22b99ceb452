"""Logs of any size made from the LoCoMo conversations, for the search and replay benchmarks.

The five conversations hold about 2,800 messages; larger corpora cycle through them, each pass
("copy") shifted by 400 days so that dates keep spreading. The events are the ones the pipeline
writes (turns; seal started and block sealed every ``BLOCK_TURNS`` turns of a thread, with the
deterministic summary and layers the sealer uses; extraction of each block one block late, with
cards made from its messages), so folding them exercises the real read models without paying
for the actors or a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from stratagate.core.default_summary import default_summary
from stratagate.core.layers import deterministic_layers
from stratagate.events import (
    BlockSealed,
    DomainEvent,
    EventAdded,
    ExtractionStarted,
    ExtractionSucceeded,
    Recorded,
    SealStarted,
    TurnAppended,
)
from stratagate.events.payloads import CardData, MessageData, SummaryData, convert, convert_all
from stratagate.formats.locomo import default_data_dir, load_conversation, message_content
from stratagate.models import EventCard, EventTemporal, RawMessage
from stratagate.timeutil import format_utc

BLOCK_TURNS = 12
COPY_SHIFT = timedelta(days=400)
EVENT_TYPES = ("plan", "decision", "activity", "milestone", "preference")


@dataclass(frozen=True, slots=True)
class Line:
    """One LoCoMo message: who said it, what, and when."""

    conversation: str
    speaker: str
    text: str
    at: datetime


def locomo_lines(data_dir: Path | None = None) -> list[Line]:
    """Every message of the LoCoMo samples in order (one second apart within a session)."""
    lines = []
    for path in sorted((data_dir or default_data_dir()).glob("*.json")):
        conversation = load_conversation(path)
        for session in conversation.sessions:
            for i, message in enumerate(session.messages):
                lines.append(
                    Line(
                        conversation.sample_id,
                        message.speaker,
                        message_content(message),
                        session.datetime + timedelta(seconds=i),
                    )
                )
    if not lines:
        raise SystemExit(f"no LoCoMo conversations in {data_dir or default_data_dir()}")
    return lines


def cycled(lines: list[Line], index: int) -> tuple[Line, int, datetime]:
    """Line ``index`` of the endless cycle, its copy number and its shifted time."""
    copy, at = divmod(index, len(lines))
    line = lines[at]
    return line, copy, line.at + copy * COPY_SHIFT


def card(lines: list[Line], index: int, block_id: str, message_id: str) -> EventCard:
    """An event card made from message ``index`` (title, summary, speaker, date, type)."""
    line, _, at = cycled(lines, index)
    title = line.text.split(". ")[0][:80].strip() or "(empty)"
    words = [w.strip(".,!?").lower() for w in line.text.split() if len(w) > 4][:4]
    return EventCard(
        id=f"evt-{index}",
        title=title,
        summary=line.text or title,
        tags=words,
        quotes=[line.text[:160]] if line.text else [],
        source_block_id=block_id,
        source_message_ids=[message_id],
        temporal=EventTemporal(
            mentioned_at=format_utc(at),
            happened_start=at.date().isoformat(),
            happened_end=at.date().isoformat(),
            precision="day",
            basis="inferred",
            status="occurred",
            participants=[line.speaker],
            event_type=EVENT_TYPES[index % len(EVENT_TYPES)],
        ),
        created_at=at,
        updated_at=at,
    )


@dataclass
class _Thread:
    thread_id: str
    turns: int = 0
    tail: list[tuple[int, list[RawMessage]]] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    pending: tuple[str, list[RawMessage]] | None = None
    """The last sealed block, extracted when the next one seals."""


@dataclass
class LogWriter:
    """Turns out domain events for a growing conversation corpus, continuing where it stopped."""

    lines: list[Line]
    cards_per_block: int = 4
    next_line: int = 0
    turn: int = 0
    threads: dict[str, _Thread] = field(default_factory=dict)

    def turns(self, count: int) -> Iterator[DomainEvent]:
        """Events for the next ``count`` turns, with the seals and extractions they cause."""
        for _ in range(count):
            yield from self._turn()

    def _turn(self) -> Iterator[DomainEvent]:
        first, copy, at = cycled(self.lines, self.next_line)
        thread_id = f"{first.conversation}-{copy}"
        thread = self.threads.setdefault(thread_id, _Thread(thread_id))
        messages = []
        for role in ("user", "assistant"):
            line, _, when = cycled(self.lines, self.next_line)
            messages.append(
                RawMessage(
                    id=f"m{self.next_line}",
                    role=role,
                    content=line.text,
                    created_at=when,
                    thread_id=thread_id,
                    name=line.speaker,
                )
            )
            self.next_line += 1
        self.turn += 1
        thread.turns += 1
        thread.tail.append((thread.turns, messages))
        yield TurnAppended(
            turn=self.turn,
            thread_id=thread_id,
            thread_turn=thread.turns,
            messages=convert_all(MessageData, messages),
            at=at,
        )
        if len(thread.tail) == BLOCK_TURNS:
            yield from self._seal(thread, at)

    def _seal(self, thread: _Thread, at: datetime) -> Iterator[DomainEvent]:
        start, end = thread.tail[0][0], thread.tail[-1][0]
        messages = [m for _, turn in thread.tail for m in turn]
        yield SealStarted(
            thread_id=thread.thread_id, start_turn=start, end_turn=end, attempt=1, at=at
        )
        layers = deterministic_layers(messages)
        block_id = f"blk-{thread.thread_id}-{len(thread.block_ids) + 1}"
        yield BlockSealed(
            block_id=block_id,
            thread_id=thread.thread_id,
            position=len(thread.block_ids) + 1,
            start_turn=start,
            end_turn=end,
            summary=convert(SummaryData, default_summary(messages)),
            summarizer="default",
            l3_condensed=layers.l3_condensed,
            l4_readable=layers.l4_readable,
            at=at,
        )
        thread.block_ids.append(block_id)
        thread.tail = []
        if thread.pending is not None and self.cards_per_block:  # N waits for block N+1
            yield from self._extract(*thread.pending, at)
        thread.pending = (block_id, messages)

    def _extract(
        self, block_id: str, messages: list[RawMessage], at: datetime
    ) -> Iterator[DomainEvent]:
        yield ExtractionStarted(block_id=block_id, attempt=1, at=at)
        longest = sorted(messages, key=lambda m: -len(m.content))[: self.cards_per_block]
        cards = [card(self.lines, int(m.id[1:]), block_id, m.id) for m in longest]
        yield ExtractionSucceeded(
            block_id=block_id,
            reason=f"{len(cards)} event(s)",
            events=convert_all(CardData, cards),
            at=at,
        )


def added_cards(lines: list[Line], start: int, count: int) -> Iterator[EventAdded]:
    """``count`` manually added cards from message ``start`` on (the events-search corpus)."""
    for index in range(start, start + count):
        _, _, at = cycled(lines, index)
        stored = convert(CardData, card(lines, index, "blk-cards", f"m{index}"))
        yield EventAdded(event=stored, at=at)


@dataclass
class Folder:
    """Wraps events as ``Recorded`` with consecutive positions and per-stream versions."""

    namespace: str
    position: int = 0
    versions: dict[str, int] = field(default_factory=dict)

    def record(self, event: DomainEvent) -> Recorded:
        self.position += 1
        version = self.versions[event.stream] = self.versions.get(event.stream, 0) + 1
        return Recorded(self.position, self.namespace, event.stream, version, event)


__all__ = ["BLOCK_TURNS", "Folder", "Line", "LogWriter", "added_cards", "card", "locomo_lines"]
