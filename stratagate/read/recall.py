"""Automatic activation: the long-term memories worth showing a model before it answers.

Candidates come from event and element search; each list is re-ranked by reciprocal-rank
fusion of relevance and current weight, then packed greedily within the token budget (by
``estimate_tokens``), at most ``max_events`` events and ``max_elements`` facts. The thread's
blocks are added at their decayed levels. Nothing here reinforces anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagate.core.memory_weight import SUPERSEDED_CAP, memory_weight
from stratagate.core.ranking import rrf_rank
from stratagate.core.tokens import estimate_tokens
from stratagate.messages import MAX_LIMIT, Recall
from stratagate.models import EventCard
from stratagate.read.view import MemoryView
from stratagate.results import BlockContextEntry, ElementHit, EventHit, RecallContext, RecallEntry

CANDIDATE_FACTOR = 3


def event_line(card: EventCard) -> str:
    """One event as a context line: title, summary, its two time axes and its id."""
    temporal = card.temporal
    times = []
    if temporal is not None:
        if temporal.happened_start or temporal.happened_end:
            span = temporal.happened_start or ""
            if temporal.happened_end and temporal.happened_end != temporal.happened_start:
                span = f"{span}..{temporal.happened_end}"
            times.append(f"happened {span}")
        elif temporal.original_text:
            times.append(f'said "{temporal.original_text}"')
        if temporal.mentioned_at:
            times.append(f"mentioned {temporal.mentioned_at[:10]}")
        if temporal.status and temporal.status != "occurred":
            times.append(temporal.status)
    when = f" ({'; '.join(times)})" if times else ""
    return f"{card.title}: {card.summary}{when} [event {card.id}]"


def fact_line(hit: ElementHit) -> str:
    """One element fact as a context line."""
    fact = hit.fact
    value = fact.value if isinstance(fact.value, str) else ", ".join(fact.value)
    since = f" (since {fact.valid_from:%Y-%m-%d})" if fact.valid_from else ""
    status = "" if fact.status == "active" else f" [{fact.status}]"
    return f"{hit.name} ({hit.type}) {fact.key.replace('_', ' ')}: {value}{since}{status} [fact {fact.id}]"


class _Budget:
    """Greedy packing of entries, best first, while their tokens fit the remaining budget."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.used = 0

    def pack(self, entries: Sequence[RecallEntry], limit: int) -> list[RecallEntry]:
        """At most ``limit`` entries, in the order of fused relevance and weight, that fit."""
        by_weight = sorted(entries, key=lambda e: (-e.weight, e.id))
        fused = rrf_rank([list(entries), by_weight])
        chosen: list[RecallEntry] = []
        for hit in fused:
            if len(chosen) >= limit:
                break
            cost = estimate_tokens(hit.item.text)
            if self.used + cost <= self.tokens:
                self.used += cost
                chosen.append(hit.item.model_copy(update={"tokens": cost}))
        return chosen


def recall(view: MemoryView, request: Recall) -> RecallContext:
    """Pick and pack the context (``batch_id`` is filled in by whoever logs the batch)."""
    query, thread_id = request.query, request.thread_id
    max_events, max_elements = request.max_events, request.max_elements
    token_budget = request.token_budget
    event_hits: list[EventHit] = []
    fact_hits: list[ElementHit] = []
    if query.strip():
        if max_events:
            event_hits = view.search_events(
                query, limit=min(MAX_LIMIT, max_events * CANDIDATE_FACTOR)
            )
        if max_elements:
            fact_hits = view.search_elements(
                query, limit=min(MAX_LIMIT, max_elements * CANDIDATE_FACTOR)
            )
    element_weight = {
        hit.element_id: memory_weight(
            view.expand_element(hit.element_id).weight, "active", view.turn
        )
        for hit in fact_hits
    }
    event_entries = [
        RecallEntry(
            kind="event",
            id=h.id,
            text=event_line(h.event),
            tokens=0,
            relevance=h.score,
            weight=h.weight,
        )
        for h in event_hits
    ]
    fact_entries = [
        RecallEntry(
            kind="fact",
            id=h.id,
            text=fact_line(h),
            tokens=0,
            relevance=h.score,
            weight=element_weight[h.element_id]
            * (1.0 if h.fact.status == "active" else SUPERSEDED_CAP),
        )
        for h in fact_hits
    ]
    budget = _Budget(token_budget)
    chosen_events = budget.pack(event_entries, max_events)
    chosen_facts = budget.pack(fact_entries, max_elements)
    blocks = view.get_block_context(thread_id)
    return RecallContext(
        query=query,
        batch_id=None,
        events=chosen_events,
        elements=chosen_facts,
        blocks=blocks,
        tokens=budget.used,
        token_budget=token_budget,
        text=render(chosen_events, chosen_facts, blocks),
    )


def render(
    events: Sequence[RecallEntry], facts: Sequence[RecallEntry], blocks: Sequence[BlockContextEntry]
) -> str:
    """The context as text sections a model can read."""
    parts = []
    if events:
        parts.append("Relevant events:\n" + "\n".join(f"- {e.text}" for e in events))
    if facts:
        parts.append("Known facts:\n" + "\n".join(f"- {f.text}" for f in facts))
    if blocks:
        parts.append(
            "Conversation so far:\n"
            + "\n\n".join(
                f"[{b.label}, turns {b.turn_range[0]}-{b.turn_range[1]}]\n{b.content}"
                for b in blocks
            )
        )
    return "\n\n".join(parts)


__all__ = ["event_line", "fact_line", "recall", "render"]
