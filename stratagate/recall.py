"""Automatic activation: the long-term memories worth showing a model before it answers.

Candidates come from event and element search; each list is re-ranked by reciprocal-rank
fusion of relevance and current weight, then packed greedily within the token budget (by
``estimate_tokens``), at most ``max_events`` events and ``max_elements`` facts. The thread's
blocks are added at their decayed levels. Nothing here reinforces anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagate.errors import InvalidInputError
from stratagate.models import EventCard
from stratagate.ranking import rrf_rank
from stratagate.results import BlockContextEntry, ElementHit, EventHit, RecallContext, RecallEntry
from stratagate.tokens import estimate_tokens
from stratagate.view import MemoryView
from stratagate.weights import SUPERSEDED_CAP, memory_weight

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


def _fuse(ids: Sequence[str], weights: dict[str, float]) -> list[str]:
    by_weight = sorted(ids, key=lambda i: (-weights[i], i))
    fused = rrf_rank([[{"id": i} for i in ids], [{"id": i} for i in by_weight]])
    return [hit.item["id"] for hit in fused]


def recall(
    view: MemoryView,
    query: str,
    *,
    thread_id: str | None,
    max_events: int,
    max_elements: int,
    token_budget: int,
) -> RecallContext:
    """Pick and pack the context (``batch_id`` is filled in by whoever logs the batch)."""
    for name, value in (
        ("max_events", max_events),
        ("max_elements", max_elements),
        ("token_budget", token_budget),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidInputError(f"{name} must be a non-negative integer, got {value!r}")
    event_hits: list[EventHit] = []
    fact_hits: list[ElementHit] = []
    if query.strip():
        if max_events:
            event_hits = view.search_events(query, limit=max_events * CANDIDATE_FACTOR)
        if max_elements:
            fact_hits = view.search_elements(query, limit=max_elements * CANDIDATE_FACTOR)
    events = {hit.id: hit for hit in event_hits}
    facts = {hit.id: hit for hit in fact_hits}
    element_weight = {
        hit.element_id: memory_weight(view.element(hit.element_id).weight, "active", view.turn)
        for hit in fact_hits
    }
    fact_weights = {
        hit.id: element_weight[hit.element_id]
        * (1.0 if hit.fact.status == "active" else SUPERSEDED_CAP)
        for hit in fact_hits
    }
    used = 0
    chosen_events: list[RecallEntry] = []
    for event_id in _fuse(list(events), {i: h.weight for i, h in events.items()}):
        if len(chosen_events) >= max_events:
            break
        hit = events[event_id]
        text = event_line(hit.event)
        cost = estimate_tokens(text)
        if used + cost <= token_budget:
            used += cost
            chosen_events.append(
                RecallEntry(
                    kind="event",
                    id=event_id,
                    text=text,
                    tokens=cost,
                    relevance=hit.score,
                    weight=hit.weight,
                )
            )
    chosen_facts: list[RecallEntry] = []
    for fact_id in _fuse(list(facts), fact_weights):
        if len(chosen_facts) >= max_elements:
            break
        hit = facts[fact_id]
        text = fact_line(hit)
        cost = estimate_tokens(text)
        if used + cost <= token_budget:
            used += cost
            chosen_facts.append(
                RecallEntry(
                    kind="fact",
                    id=fact_id,
                    text=text,
                    tokens=cost,
                    relevance=hit.score,
                    weight=fact_weights[fact_id],
                )
            )
    blocks = view.block_context(thread_id)
    return RecallContext(
        query=query,
        batch_id=None,
        events=chosen_events,
        elements=chosen_facts,
        blocks=blocks,
        tokens=used,
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
