"""Automatic activation: the long-term memories worth showing a model before it answers.

Candidates come from event and element search (``CANDIDATE_FACTOR`` times the number shown).
Each candidate is scored ``relevance * (WEIGHT_FLOOR + (1 - WEIGHT_FLOOR) * weight)``: the
search relevance decides, and the current weight (decay, adoption, pins, caps) can take away at
most ``1 - WEIGHT_FLOOR`` of it, so weight orders memories of nearly equal relevance and never
hides the best match because it is old. A superseded candidate brings in the current card that
replaced it (the end of its ``superseded_by`` chain, or the active fact of the same key), which
inherits its relevance and is always placed before it; both are labelled. Entries are packed
greedily by score within the token budget (by ``estimate_tokens``), at most ``max_events``
events and ``max_elements`` facts; then, in what the budget leaves, the conversation turns
that match the query: the best ``RECALL_MESSAGES`` raw hits, each followed by the message
after it (the answer to a question sits in the reply), minus the thread's open tail (shown
whole). The text shows those turns first. The thread's blocks are added at their decayed
levels. Nothing here reinforces anything.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from stratagate.core.filters import MAX_LIMIT, RawFilters
from stratagate.core.memory_weight import SUPERSEDED_CAP, memory_weight
from stratagate.core.tokens import estimate_tokens
from stratagate.models import ElementFact, EventCard, RawMessage
from stratagate.read.view import MemoryView
from stratagate.results import (
    BlockContextEntry,
    ElementHit,
    EventHit,
    RawHit,
    RecallContext,
    RecallEntry,
)

CANDIDATE_FACTOR = 3
RECALL_RAW_HITS = 10
"""How many raw-search hits lend the events citing them a ranking in recall (0: none)."""
RECALL_MESSAGES = 4
"""How many of the best raw hits are shown as conversation turns (each with the reply that
follows it), in the budget the events and facts leave."""
MESSAGE_CHARS = 600
"""A message shown in the context is clipped to this many characters."""
WEIGHT_FLOOR = 0.9
"""The least share of its relevance a memory keeps at weight 0 (see the module docstring)."""


def blended_score(relevance: float, weight: float) -> float:
    """Relevance scaled by the weight into ``[WEIGHT_FLOOR, 1]`` of itself."""
    return relevance * (WEIGHT_FLOOR + (1.0 - WEIGHT_FLOOR) * min(1.0, max(0.0, weight)))


def _span(start: str | None, end: str | None) -> str:
    span = start or ""
    if end and end != start:
        span = f"{span}..{end}"
    return span


def event_line(card: EventCard) -> str:
    """One event as a context line: what it says, its two time axes and its id (``pack`` puts
    the status label in front).

    The summary alone when it already contains the title (the offline extractor's titles are
    its first sentence), else ``title: summary``."""
    temporal = card.temporal
    times = []
    if temporal is not None:
        if temporal.happened_start or temporal.happened_end:
            times.append(f"happened {_span(temporal.happened_start, temporal.happened_end)}")
        elif temporal.original_text:
            times.append(f'said "{temporal.original_text}"')
        if temporal.mentioned_at:
            times.append(f"mentioned {temporal.mentioned_at[:10]}")
        if temporal.status and temporal.status != "occurred":
            times.append(temporal.status)
    when = f" ({'; '.join(times)})" if times else ""
    title = card.title.rstrip("…").strip()
    text = card.summary if title and title in card.summary else f"{card.title}: {card.summary}"
    return f"{text}{when} [event {card.id}]"


def fact_line(hit: ElementHit) -> str:
    """One element fact as a context line: element, key, value and when it held."""
    fact = hit.fact
    value = fact.value if isinstance(fact.value, str) else ", ".join(fact.value)
    start = f"{fact.valid_from:%Y-%m-%d}" if fact.valid_from else ""
    if fact.valid_to is not None:
        since = f" ({start} → {fact.valid_to:%Y-%m-%d})"
    else:
        since = f" (since {start})" if start else ""
    key = fact.key.replace("_", " ")
    return f"{hit.name} ({hit.type}) {key}: {value}{since} [fact {fact.id}]"


def status_label(entry: RecallEntry) -> str:
    """What a reader must know before trusting an entry: replaced, or replacing others."""
    if entry.superseded_by:
        return f"[{entry.status}, replaced by {entry.superseded_by}] "
    if entry.status != "active":
        return f"[{entry.status}] "
    if entry.replaces:
        return f"[current, replaces {', '.join(entry.replaces)}] "
    return ""


def rank_candidates(
    entries: Sequence[RecallEntry], replaced_by: Mapping[str, str]
) -> list[RecallEntry]:
    """Entries best first by ``blended_score``, labelled with their supersessions.

    ``replaced_by`` maps a superseded entry's id to the id of the current entry that replaced
    it (both among ``entries``). The current entry inherits the old one's relevance when that
    is higher, ranks at least as high as it, and comes first on a tie. Other ties keep the
    order of ``entries`` (the search's)."""
    relevance = {e.id: e.relevance for e in entries}
    replaces: dict[str, list[str]] = {}
    for old, new in replaced_by.items():
        relevance[new] = max(relevance[new], relevance[old])
        replaces.setdefault(new, []).append(old)
    updated = [e.model_copy(update={"relevance": relevance[e.id]}) for e in entries]
    score = {e.id: blended_score(e.relevance, e.weight) for e in updated}
    for old, new in replaced_by.items():
        score[new] = max(score[new], score[old])
    order = {e.id: i for i, e in enumerate(entries)}
    ranked = sorted(updated, key=lambda e: (-score[e.id], e.id in replaced_by, order[e.id]))
    return [
        e.model_copy(
            update={"superseded_by": replaced_by.get(e.id), "replaces": replaces.get(e.id, [])}
        )
        for e in ranked
    ]


class _Budget:
    """Greedy packing of entries, best first, while their tokens fit the remaining budget."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.used = 0

    def pack(self, ranked: Sequence[RecallEntry], limit: int) -> list[RecallEntry]:
        """At most ``limit`` of ``ranked``, in order, that fit; each text gets its status label."""
        chosen: list[RecallEntry] = []
        for entry in ranked:
            if len(chosen) >= limit:
                break
            text = status_label(entry) + entry.text
            cost = estimate_tokens(text)
            if self.used + cost <= self.tokens:
                self.used += cost
                chosen.append(entry.model_copy(update={"text": text, "tokens": cost}))
        return chosen


def _event_entry(card: EventCard, relevance: float, weight: float) -> RecallEntry:
    return RecallEntry(
        kind="event",
        id=card.id,
        text=event_line(card),
        tokens=0,
        relevance=relevance,
        weight=weight,
        status=card.status,
    )


def spread_sources(
    ranked: Sequence[RecallEntry], sources: Mapping[str, Collection[str]]
) -> list[RecallEntry]:
    """``ranked`` with each entry whose source messages earlier entries already cite moved
    behind the others (in order): four sentences of one message show less than four messages.
    A current card that replaces another keeps its place."""
    seen: set[str] = set()
    first: list[RecallEntry] = []
    later: list[RecallEntry] = []
    for entry in ranked:
        cited = set(sources.get(entry.id, ()))
        if cited and cited <= seen and not entry.replaces:
            later.append(entry)
        else:
            first.append(entry)
            seen |= cited
    return first + later


def event_candidates(view: MemoryView, hits: Sequence[EventHit]) -> list[RecallEntry]:
    """Event hits plus the current cards of superseded ones, ranked, sources spread."""
    entries = {h.id: _event_entry(h.event, h.score, h.weight) for h in hits}
    sources = {h.id: h.event.source_message_ids for h in hits}
    replaced_by: dict[str, str] = {}
    for hit in hits:
        current = view.current_event(hit.event) if hit.event.status == "superseded" else None
        if current is not None:
            weight = memory_weight(current.weight, current.status, view.turn)
            entries.setdefault(current.id, _event_entry(current, 0.0, weight))
            sources.setdefault(current.id, current.source_message_ids)
            replaced_by[hit.id] = current.id
    return spread_sources(rank_candidates(list(entries.values()), replaced_by), sources)


def _fact_entry(hit: ElementHit, weight: float) -> RecallEntry:
    fact = hit.fact
    return RecallEntry(
        kind="fact",
        id=hit.id,
        text=fact_line(hit),
        tokens=0,
        relevance=hit.score,
        weight=weight * (1.0 if fact.status == "active" else SUPERSEDED_CAP),
        status=fact.status,
    )


def _current_fact(view: MemoryView, hit: ElementHit) -> ElementHit | None:
    """The active fact of the same element and key that replaced a superseded state fact."""
    if hit.fact.status != "superseded" or hit.fact.mode == "set":
        return None
    element = view.state.elements.elements[hit.element_id]
    current: ElementFact | None = next(
        (
            f
            for f in reversed(element.facts)
            if f.key == hit.fact.key and f.mode == hit.fact.mode and f.status == "active"
        ),
        None,
    )
    if current is None:
        return None
    return hit.model_copy(update={"id": current.id, "fact": current, "score": 0.0})


def fact_candidates(view: MemoryView, hits: Sequence[ElementHit]) -> list[RecallEntry]:
    """Fact hits plus the current facts of superseded ones, ranked."""
    element_weight = {
        h.element_id: memory_weight(view.expand_element(h.element_id).weight, "active", view.turn)
        for h in hits
    }
    entries = {h.id: _fact_entry(h, element_weight[h.element_id]) for h in hits}
    replaced_by: dict[str, str] = {}
    for hit in hits:
        current = _current_fact(view, hit)
        if current is not None:
            entries.setdefault(current.id, _fact_entry(current, element_weight[hit.element_id]))
            replaced_by[hit.id] = current.id
    return rank_candidates(list(entries.values()), replaced_by)


def message_line(message: RawMessage) -> str:
    """One source message as a context line: speaker, day, text (clipped) and id."""
    speaker = message.name or message.role
    text = " ".join(message.content.split())
    if len(text) > MESSAGE_CHARS:
        text = text[: MESSAGE_CHARS - 1].rstrip() + "…"
    return f"{speaker} ({message.created_at:%Y-%m-%d}): {text} [message {message.id}]"


def _message_entry(message: RawMessage, relevance: float) -> RecallEntry:
    return RecallEntry(
        kind="message",
        id=message.id,
        text=message_line(message),
        tokens=0,
        relevance=relevance,
        weight=1.0,
    )


def message_candidates(
    view: MemoryView, hits: Sequence[RawHit], hidden: Collection[str]
) -> list[RecallEntry]:
    """The raw hits as turns, best first: each hit followed by the message after it (where
    the answer to a question sits), each message once; messages in ``hidden`` (shown
    elsewhere in the context) and empty ones are left out."""
    shown: dict[str, RecallEntry] = {}
    for hit in hits:
        reply = view.following_message(hit.id)
        for message in (hit.message, reply):
            if message is None or message.id in shown or message.id in hidden:
                continue
            if message.content.strip():
                shown[message.id] = _message_entry(message, hit.score)
    return list(shown.values())


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
    event_hits: list[EventHit] = []
    fact_hits: list[ElementHit] = []
    raw_hits: list[RawHit] = []
    if query.strip():
        depth = max(RECALL_RAW_HITS, RECALL_MESSAGES)
        if depth:
            raw_hits = view.rank_raw(query, depth, RawFilters())
        if max_events:
            raw_ids = [hit.id for hit in raw_hits[:RECALL_RAW_HITS]]
            event_hits = view.recall_events(
                query, min(MAX_LIMIT, max_events * CANDIDATE_FACTOR), raw_ids
            )
        if max_elements:
            fact_hits = view.search_elements(
                query, limit=min(MAX_LIMIT, max_elements * CANDIDATE_FACTOR)
            )
    budget = _Budget(token_budget)
    chosen_events = budget.pack(event_candidates(view, event_hits), max_events)
    chosen_facts = budget.pack(fact_candidates(view, fact_hits), max_elements)
    blocks = view.get_block_context(thread_id)
    tail = {m.id for m in view.state.blocks.tail_messages(thread_id)}
    turns = message_candidates(view, raw_hits[:RECALL_MESSAGES], tail)
    chosen_messages = budget.pack(turns, len(turns))
    return RecallContext(
        query=query,
        batch_id=None,
        events=chosen_events,
        elements=chosen_facts,
        messages=chosen_messages,
        blocks=blocks,
        tokens=budget.used,
        token_budget=token_budget,
        text=render(chosen_events, chosen_facts, blocks, chosen_messages),
    )


def render(
    events: Sequence[RecallEntry],
    facts: Sequence[RecallEntry],
    blocks: Sequence[BlockContextEntry],
    messages: Sequence[RecallEntry] = (),
) -> str:
    """The context as text sections a model can read: the conversation turns that match the
    question first, then events, facts and the thread's blocks."""
    parts = []
    if messages:
        parts.append("Matching conversation turns:\n" + "\n".join(f"- {m.text}" for m in messages))
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


__all__ = [
    "WEIGHT_FLOOR",
    "blended_score",
    "event_line",
    "fact_line",
    "message_candidates",
    "message_line",
    "rank_candidates",
    "recall",
    "render",
    "spread_sources",
    "status_label",
]
