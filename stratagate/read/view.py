"""Read-only queries over a namespace's read models, answered as API models.

The same view serves the live memory (inside the weight keeper, which also logs retrieval
batches) and ``state_at`` (time travel for audits, which logs nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from projections.blocks import BlockRecord, thread_key
from projections.state import NamespaceState
from stratagate.core.filters import (
    ElementFilters,
    EventFilters,
    RawFilters,
    checked,
    hit_limit,
    query_text,
)
from stratagate.core.layers import readable_transcript, render_raw
from stratagate.core.memory_weight import memory_weight
from stratagate.core.ranking import DEFAULT_RRF_K
from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.models import (
    ElementCard,
    ElementProjectionJob,
    EventCard,
    ExtractionJob,
    MemoryBlock,
    MemoryWeight,
    RawMessage,
    TimelineEntry,
    UsageReceipt,
)
from stratagate.results import (
    BlockContextEntry,
    ElementHit,
    EventHit,
    ExpandedEvent,
    NamespaceStats,
    RawHit,
)
from stratagate.timeutil import parse_datetime

MAX_SUPERSESSION_STEPS = 16
"""How far a ``superseded_by`` chain is followed to its current card (a guard, not a limit
real chains reach)."""

LEVEL_LABELS = {
    0: "L0 title",
    1: "L1 summary",
    2: "L2 key points",
    3: "L3 condensed",
    4: "L4 readable",
    5: "L5 raw",
}


def level_content(block: BlockRecord, level: int) -> str:
    """The text of a block at one of its six views."""
    summary = block.summary
    if level == 0:
        tags = f" [{', '.join(summary.l0_tags)}]" if summary.l0_tags else ""
        return f"{summary.l0_title}{tags}"
    if level == 1:
        return summary.l1_summary
    if level == 2:
        return "\n".join(f"- {point}" for point in summary.l2_keypoints)
    if level == 3:
        return block.l3_condensed
    if level == 4:
        return block.l4_readable
    return render_raw(block.l5_raw)


class MemoryView:
    """Queries over one ``NamespaceState`` (which must hold every read model)."""

    def __init__(self, state: NamespaceState) -> None:
        self.state = state

    @property
    def namespace(self) -> str:
        return self.state.namespace

    @property
    def position(self) -> int:
        return self.state.position

    @property
    def turn(self) -> int:
        return self.state.blocks.turn

    def current_turn(self) -> int:
        """Turns appended so far (all threads)."""
        return self.turn

    # -- blocks -----------------------------------------------------------------------------

    def get_block(self, block_id: str) -> MemoryBlock:
        return self.sealed_block(block_id, None)

    def sealed_block(self, block_id: str, l5_raw: list[RawMessage] | None) -> MemoryBlock:
        """``get_block``, with the block's messages when the caller holds them already (the
        seal that just made it), so they are not made again from the block's rows."""
        record = self.state.blocks.blocks.get(block_id)
        if record is None:
            raise UnknownIdError(f"unknown block id {block_id!r}")
        return self._memory_block(record, l5_raw)

    def _memory_block(
        self, record: BlockRecord, l5_raw: list[RawMessage] | None = None
    ) -> MemoryBlock:
        pointer = self.state.decay.pointers[record.id]
        summary = record.summary
        return MemoryBlock(
            id=record.id,
            thread_id=record.thread_id,
            sequence=record.sequence,
            position=record.position,
            start_turn=record.start_turn,
            end_turn=record.end_turn,
            created_at=record.created_at,
            should_extract=summary.should_extract,
            l0_title=summary.l0_title,
            l0_tags=summary.l0_tags,
            l1_summary=summary.l1_summary,
            l2_keypoints=summary.l2_keypoints,
            l3_condensed=record.l3_condensed,
            l4_readable=record.l4_readable,
            l5_raw=record.l5_raw if l5_raw is None else l5_raw,
            pointer_current_level=self.state.decay.level(record.id),
            pointer_anchor_level=pointer.anchor_level,
            pointer_anchor_position=pointer.anchor_position,
            last_lifted_at=pointer.last_lifted_at,
            last_lift_source=pointer.last_lift_source,
        )

    def list_blocks(self, thread_id: str | None = None) -> list[MemoryBlock]:
        """Every block in sealing order, or the blocks of one thread."""
        records = self.state.blocks.blocks.values()
        return [
            self._memory_block(r) for r in records if thread_id is None or r.thread_id == thread_id
        ]

    def list_open_tail(self, thread_id: str | None = None) -> list[RawMessage]:
        """Unsealed messages: of every conversation thread, or of one thread."""
        blocks = self.state.blocks
        if thread_id is not None:
            return blocks.tail_messages(thread_id)
        return [m for t in blocks.conversation_threads() for turn in t.tail for m in turn.messages]

    def block_entry(self, block_id: str) -> BlockContextEntry:
        """One block as the context shows it: at its current (decayed or lifted) level."""
        record = self.state.blocks.blocks.get(block_id)
        if record is None:
            raise UnknownIdError(f"unknown block id {block_id!r}")
        level = self.state.decay.level(block_id)
        return BlockContextEntry(
            id=block_id,
            thread_id=record.thread_id,
            turn_range=(record.start_turn, record.end_turn),
            level=level,
            label=LEVEL_LABELS[level],
            content=level_content(record, level),
        )

    def get_block_context(self, thread_id: str | None = None) -> list[BlockContextEntry]:
        """A thread's blocks at their decayed levels, then its open tail (thread ``None`` is the
        unthreaded conversation)."""
        blocks = self.state.blocks
        thread = blocks.thread(thread_id)
        if thread is None:
            return []
        entries = [self.block_entry(block_id) for block_id in thread.block_ids]
        if thread.tail:
            messages = [m for turn in thread.tail for m in turn.messages]
            entries.append(
                BlockContextEntry(
                    id=f"tail:{thread_key(thread_id)}",
                    thread_id=thread_id,
                    turn_range=(thread.tail[0].thread_turn, thread.tail[-1].thread_turn),
                    level=5,
                    label="open tail",
                    content=readable_transcript(messages),
                )
            )
        return entries

    # -- events -----------------------------------------------------------------------------

    def get_event(self, event_id: str) -> EventCard:
        record = self.state.events.records.get(event_id)
        if record is None:
            raise UnknownIdError(f"unknown event id {event_id!r}")
        return record.card.model(
            status=record.status,
            superseded_by=record.superseded_by,
            weight=self._weight(event_id, record.card.weight),
            updated_at=record.updated_at,
        )

    def _weight(self, memory_id: str, initial: MemoryWeight | None = None) -> MemoryWeight:
        """The memory's weight state (its initial one when this state has no weights model)."""
        fallback = initial or MemoryWeight()
        if "weights" not in self.state.models:
            return fallback
        return self.state.weights.weights.get(memory_id) or fallback

    def current_event(self, card: EventCard) -> EventCard | None:
        """The end of ``card``'s ``superseded_by`` chain, when that is an active card."""
        seen = {card.id}
        current = card
        for _ in range(MAX_SUPERSESSION_STEPS):
            if current.status != "superseded" or current.superseded_by is None:
                break
            if current.superseded_by in seen:
                return None
            seen.add(current.superseded_by)
            current = self.get_event(current.superseded_by)
        return current if current.status == "active" and current.id != card.id else None

    def list_events(self) -> list[EventCard]:
        """Every event card in creation order, whatever its status."""
        return [self.get_event(event_id) for event_id in self.state.events.records]

    def event_weight(self, event_id: str) -> float:
        """``memory_weight`` of the event at the current turn."""
        card = self.get_event(event_id)
        return memory_weight(card.weight, card.status, self.turn)

    def expand_event(self, event_id: str) -> ExpandedEvent:
        """The card, its source block and the exact messages it cites."""
        card = self.get_event(event_id)
        block = self.get_block(card.source_block_id)
        cited = set(card.source_message_ids)
        return ExpandedEvent(
            event=card,
            source_block=block,
            source_messages=[m for m in block.l5_raw if m.id in cited],
            erased=self.state.events.records[event_id].erased,
        )

    def timeline(self, *, limit: int | None = None, related_to: str = "") -> list[TimelineEntry]:
        """Existing active and superseded events as the extractor sees them, oldest first.

        With ``limit``, a compact timeline of at most that many: up to half of them the events
        most related to ``related_to`` (BM25, equally close ones latest first), the rest the
        latest ones. Its cost then follows the limit, not the history."""
        records = self.state.events.records
        shown = ("active", "superseded")
        if limit is None:
            chosen: list[str] = [i for i, r in records.items() if r.status in shown]
        else:
            related = (
                self.state.event_search.related_events(related_to, limit // 2)
                if related_to.strip() and limit > 1
                else []
            )
            picked = dict.fromkeys(i for i in related if records[i].status in shown)
            for event_id in reversed(records):
                if len(picked) >= limit:
                    break
                if records[event_id].status in shown:
                    picked[event_id] = None
            chosen = sorted(picked, key=self.state.events.rank.__getitem__)
        return [
            TimelineEntry(
                id=e, title=records[e].card.title, temporal=records[e].card.temporal_model()
            )
            for e in chosen
        ]

    # -- elements ---------------------------------------------------------------------------

    def expand_element(self, element_id: str, at: datetime | str | None = None) -> ElementCard:
        record = self.state.elements.elements.get(element_id)
        if record is None:
            raise UnknownIdError(f"unknown element id {element_id!r}")
        moment = None
        if at is not None:
            try:
                moment = parse_datetime(at)
            except ValueError as exc:
                raise InvalidInputError(f"at: not a datetime or ISO-8601 text: {at!r}") from exc
        return record.card(self._weight(element_id), at=moment)

    def list_elements(self) -> list[ElementCard]:
        return [r.card(self._weight(r.id)) for r in self.state.elements.elements.values()]

    # -- jobs and receipts ------------------------------------------------------------------

    def list_extraction_jobs(self) -> list[ExtractionJob]:
        return [job.view() for job in self.state.jobs.extraction.values()]

    def list_element_projection_jobs(self) -> list[ElementProjectionJob]:
        return [job.view() for job in self.state.jobs.projection.values()]

    def list_usage_receipts(self) -> list[UsageReceipt]:
        return list(self.state.weights.receipts.values())

    def has_ingestion_receipt(self, receipt_id: str) -> bool:
        return receipt_id in self.state.blocks.receipts

    # -- search (nothing is logged here: the reader logs the batches of the live memory) ----

    def search_events(
        self,
        query: str,
        *,
        limit: int = 6,
        temporal_intent: str | None = None,
        participants: Sequence[str] | None = None,
        event_type: str | None = None,
        happened_from: datetime | str | None = None,
        happened_to: datetime | str | None = None,
    ) -> list[EventHit]:
        """Ranked event hits (as ``StrataGate.search_events``, with no batch logged)."""
        filters = EventFilters(
            temporal_intent=temporal_intent,
            participants=participants,
            event_type=event_type,
            happened_from=happened_from,
            happened_to=happened_to,
        )
        return self.rank_events(checked(query_text, query), checked(hit_limit, limit), filters)

    def search_elements(
        self, query: str, *, limit: int = 8, name: str | None = None, type: str | None = None
    ) -> list[ElementHit]:
        """Ranked fact-level element hits (as ``StrataGate.search_elements``, not logged)."""
        filters = ElementFilters(name=name, type=type)
        return self.rank_elements(checked(query_text, query), checked(hit_limit, limit), filters)

    def search_raw_memory(
        self, query: str, *, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]:
        """Ranked source messages (as ``StrataGate.search_raw_memory``, not logged)."""
        filters = RawFilters(thread_id=thread_id)
        return self.rank_raw(checked(query_text, query), checked(hit_limit, limit), filters)

    def rank_events(self, query: str, limit: int, filters: EventFilters) -> list[EventHit]:
        """Ranked event hits of a validated search."""
        ranked = self.state.search.search_events(query, limit=limit, filters=filters)
        hits = []
        for event_id, score in ranked:
            card = self.get_event(event_id)
            weight = memory_weight(card.weight, card.status, self.turn)
            hits.append(EventHit(id=event_id, event=card, score=score, weight=weight))
        return self.current_first(hits)

    def current_first(self, hits: Sequence[EventHit]) -> list[EventHit]:
        """``hits`` with each current card that replaced a better-ranked superseded hit moved
        just before it, at its score: the decision in force comes before the one it replaced
        ("package manager": the switch to pnpm, then the npm decision)."""
        position = {hit.id: i for i, hit in enumerate(hits)}
        ahead: dict[str, str] = {}
        for hit in hits:
            if hit.event.status != "superseded":
                continue
            card = self.current_event(hit.event)
            later = card is not None and position.get(card.id, -1) > position[hit.id]
            if later and card is not None and card.id not in ahead.values():
                ahead[hit.id] = card.id
        moved = set(ahead.values())
        by_id = {hit.id: hit for hit in hits}
        ordered: list[EventHit] = []
        for hit in hits:
            if hit.id in moved:
                continue
            if hit.id in ahead:
                current = by_id[ahead[hit.id]]
                score = max(current.score, hit.score)
                ordered.append(current.model_copy(update={"score": score}))
            ordered.append(hit)
        return ordered

    def recall_events(self, query: str, limit: int, raw_ids: Sequence[str]) -> list[EventHit]:
        """Event hits for a recall: the event search's hits, each event that cites one of the
        raw messages ``raw_ids`` (the best raw hits, best first) adding
        ``1 / (DEFAULT_RRF_K + rank)`` for its rank in that list (one more ranking in the
        search's reciprocal-rank fusion), best first. A question worded like the conversation
        rather than the card still reaches the card that cites its answer."""
        search = self.state.search
        depth = max(limit, len(raw_ids))
        found = search.search_events(query, limit=depth, filters=EventFilters())
        scored = dict(found)
        if raw_ids:
            order = {event_id: rank for rank, (event_id, _) in enumerate(found)}
            bridged = search.events_citing(raw_ids, order)[:depth]
            for rank, event_id in enumerate(bridged, start=1):
                scored[event_id] = scored.get(event_id, 0.0) + 1 / (DEFAULT_RRF_K + rank)
        position = {event_id: i for i, event_id in enumerate(scored)}
        best = sorted(scored, key=lambda e: (-scored[e], position[e]))[:limit]
        hits = []
        for event_id in best:
            card = self.get_event(event_id)
            weight = memory_weight(card.weight, card.status, self.turn)
            hits.append(EventHit(id=card.id, event=card, score=scored[event_id], weight=weight))
        return hits

    def rank_elements(self, query: str, limit: int, filters: ElementFilters) -> list[ElementHit]:
        """Ranked fact-level hits of a validated search."""
        ranked = self.state.search.search_facts(query, limit=limit, filters=filters)
        hits = []
        for fact_id, score in ranked:
            element, fact = self.state.elements.fact(fact_id)
            hits.append(
                ElementHit(
                    id=fact_id,
                    element_id=element.id,
                    name=element.name,
                    type=element.type,
                    fact=fact,
                    score=score,
                )
            )
        return hits

    def rank_raw(self, query: str, limit: int, filters: RawFilters) -> list[RawHit]:
        """Ranked source messages of a validated search."""
        ranked = self.state.search.search_raw(query, limit=limit, filters=filters)
        return [self._raw_hit(message_id, score) for message_id, score in ranked]

    def following_message(self, message_id: str) -> RawMessage | None:
        """The message right after ``message_id`` in its thread's block or open tail (the reply
        to it, in a turn), or ``None`` at the end."""
        sequence = self._sequence(message_id)
        index = next(i for i, m in enumerate(sequence) if m.id == message_id)
        return sequence[index + 1] if index + 1 < len(sequence) else None

    def _sequence(self, message_id: str) -> list[RawMessage]:
        """The messages of the block (or open tail) that holds ``message_id``."""
        blocks = self.state.blocks
        thread, _, block_id = blocks.messages[message_id]
        if block_id is not None:
            return blocks.blocks[block_id].l5_raw
        return [m for turn in blocks.threads[thread].tail for m in turn.messages]

    def _raw_hit(self, message_id: str, score: float) -> RawHit:
        blocks = self.state.blocks
        key, _, block_id = blocks.messages[message_id]
        thread = blocks.threads[key]
        if block_id is not None:
            record = blocks.blocks[block_id]
            sequence = record.l5_raw
            turn_range = (record.start_turn, record.end_turn)
        else:
            sequence = [m for turn in thread.tail for m in turn.messages]
            turn_range = (thread.tail[0].thread_turn, thread.tail[-1].thread_turn)
        index = next(i for i, m in enumerate(sequence) if m.id == message_id)
        nearby = sequence[max(0, index - 1) : index] + sequence[index + 1 : index + 2]
        return RawHit(
            id=message_id,
            block_id=block_id,
            thread_id=thread.thread_id,
            turn_range=turn_range,
            message=sequence[index],
            nearby=nearby,
            score=score,
        )

    # -- statistics -------------------------------------------------------------------------

    def stats(self, revision: int) -> NamespaceStats:
        blocks = self.state.blocks
        events = self.state.events.records.values()
        elements = self.state.elements.elements.values()
        return NamespaceStats(
            namespace=self.namespace,
            revision=revision,
            turns=blocks.turn,
            threads=len(blocks.conversation_threads()),
            blocks=len(blocks.blocks),
            open_tail_turns=sum(len(t.tail) for t in blocks.conversation_threads()),
            events=len(self.state.events.records),
            events_by_status=dict(Counter(r.status for r in events)),
            elements=len(self.state.elements.elements),
            facts=sum(len(e.facts) for e in elements),
            extraction_jobs=dict(Counter(j.status for j in self.state.jobs.extraction.values())),
            projection_jobs=dict(Counter(j.status for j in self.state.jobs.projection.values())),
            receipts=len(self.state.weights.receipts),
            batches=len(self.state.weights.batches),
        )


__all__ = ["LEVEL_LABELS", "MemoryView", "level_content"]
