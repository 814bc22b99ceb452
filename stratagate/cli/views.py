"""Human-readable renderings of what the memory returns (hits, cards, blocks, stats, history),
as lists of lines at most ``WIDTH`` columns wide. Pure functions over the API's models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stratagate.cli.formatting import (
    fact_value,
    happened,
    history_gist,
    instant,
    mentioned,
    validity,
)
from stratagate.cli.render import WIDTH, clip, table, wrap
from stratagate.models import ElementCard, ElementFact, EventCard, RawMessage
from stratagate.results import (
    BlockContextEntry,
    ElementHit,
    EventHit,
    ExpandedEvent,
    HistoryRecord,
    NamespaceStats,
    RawHit,
)

DETAIL = " " * 8
"""Indent of a hit's detail lines (under its title, past the score column)."""


def event_hit_lines(hits: Sequence[EventHit], *, turn: int) -> list[str]:
    """Score, id and title per hit, then its time axes, its status and weight, its provenance.

    ``turn`` is the namespace's current turn, from which a weight's age is told.
    """
    lines = [f"{'SCORE':<6}  {'EVENT':<36}  TITLE"]
    for hit in hits:
        card = hit.event
        lines.append(clip(f"{hit.score:.4f}  {card.id}  {card.title}", WIDTH))
        lines.append(
            clip(
                f"{DETAIL}happened {happened(card.temporal)} · mentioned "
                f"{mentioned(card.temporal)}",
                WIDTH,
            )
        )
        lines.append(clip(f"{DETAIL}{card.status} · {weight_note(card, hit.weight, turn)}", WIDTH))
        lines.append(clip(f"{DETAIL}from {provenance(card)}", WIDTH))
    return lines


def element_hit_lines(hits: Sequence[ElementHit]) -> list[str]:
    """Score and fact id per hit, then the element, the fact, its validity and sources."""
    lines = [f"{'SCORE':<6}  {'FACT':<36}  ELEMENT"]
    for hit in hits:
        fact = hit.fact
        lines.append(clip(f"{hit.score:.4f}  {hit.id}  {hit.name} ({hit.type})", WIDTH))
        lines.append(clip(f"{DETAIL}{fact.key} = {fact_value(fact.value)}", WIDTH))
        lines.append(
            clip(
                f"{DETAIL}{fact.status}, valid {validity(fact)} · {hit.element_id} · "
                f"from {', '.join(fact.source_event_ids)}",
                WIDTH,
            )
        )
    return lines


def raw_hit_lines(hits: Sequence[RawHit]) -> list[str]:
    """Score and message id per hit, then the message and where it lives."""
    lines = [f"{'SCORE':<6}  {'MESSAGE':<36}  TEXT"]
    for hit in hits:
        message = hit.message
        lines.append(
            clip(f"{hit.score:.4f}  {message.id}  {message.role}: {message.content}", WIDTH)
        )
        place = hit.block_id or "open tail"
        start, end = hit.turn_range
        lines.append(
            clip(
                f"{DETAIL}{instant(message.created_at)} · thread {hit.thread_id or '(none)'} · "
                f"{place} · turns {start}-{end}",
                WIDTH,
            )
        )
    return lines


def weight_note(card: EventCard, weight: float, turn: int) -> str:
    """The event's memory weight with what it comes from: ``weight 0.41 (used 2×, last 6 turns
    ago)``, ``weight 0.02 (never used, created 30 turns ago)``, ``weight 1.00 (pinned)``.

    A weight decays with the turns since the memory was created or last used in an answer
    (``record_memory_use``); search alone never raises it.
    """
    state = card.weight
    uses = state.mention_count - 1
    used = f"used {uses}×" if uses else "never used"
    if card.status in ("forgotten", "archived"):
        reason: str = card.status
    elif state.pinned:
        reason = "pinned" + (f", {used}" if uses else "")
    else:
        age = max(0, turn - state.last_adopted_turn)
        reason = f"{used}, {'last' if uses else 'created'} {age} turns ago"
        if state.floor_weight > 0:
            reason += f", floor {state.floor_weight:.2f}"
    return f"weight {weight:.2f} ({reason})"


def provenance(card: EventCard) -> str:
    """``blk_… · msg_…, msg_…``: the source block and the cited messages."""
    return f"{card.source_block_id} · {', '.join(card.source_message_ids) or 'no messages cited'}"


def event_lines(card: EventCard, *, indent: str = "") -> list[str]:
    """An event card in four lines: id and status, title, the two time axes, provenance."""
    extra = f" · superseded by {card.superseded_by}" if card.superseded_by else ""
    return [
        clip(f"{indent}{card.id}  [{card.status}{extra}]", WIDTH),
        clip(f"{indent}  {card.title}", WIDTH),
        clip(
            f"{indent}  happened {happened(card.temporal)} · mentioned {mentioned(card.temporal)}",
            WIDTH,
        ),
        clip(f"{indent}  from {provenance(card)}", WIDTH),
    ]


def expanded_event_lines(expanded: ExpandedEvent) -> list[str]:
    """The whole card, its source block and the exact source messages."""
    card, block = expanded.event, expanded.source_block
    temporal = card.temporal
    lines = [
        f"event {card.id}  [{card.status}]",
        *wrap(card.title, WIDTH, indent="  title      "),
        *wrap(card.summary, WIDTH, indent="  summary    "),
        clip(f"  happened   {happened(temporal)}", WIDTH),
        f"  mentioned  {mentioned(temporal)}",
        clip(
            f"  kind       {card.criticality}, confidence {card.confidence:.2f}, "
            f"weight: mentioned {card.weight.mention_count}x"
            + (", pinned" if card.weight.pinned else ""),
            WIDTH,
        ),
    ]
    if temporal is not None and (temporal.participants or temporal.event_type):
        who = ", ".join(temporal.participants) or "—"
        lines.append(clip(f"  who/what   {who} · {temporal.event_type or '—'}", WIDTH))
    if card.superseded_by:
        lines.append(f"  superseded by {card.superseded_by}")
    thread = block.thread_id or "(none)"
    lines.append(
        clip(
            f"  source     {block.id} · thread {thread} · block #{block.position} · "
            f"turns {block.start_turn}-{block.end_turn}",
            WIDTH,
        )
    )
    if expanded.erased:
        lines.extend(erased_event_note(card.title, block.thread_id))
    lines.append(f"source messages ({len(expanded.source_messages)}):")
    for message in expanded.source_messages:
        lines.extend(message_lines(message, indent="  "))
    return lines


def erased_event_note(erased: str, thread_id: str | None) -> list[str]:
    """What an erased card's expansion must say: what went, and what stays until when."""
    thread = thread_id or "(none)"
    erase = f"stratagate erase thread {thread_id}" if thread_id else "stratagate erase namespace"
    return wrap(
        f"erased: this card (and the facts drawn from it) reads {erased}; its source messages "
        f"belong to thread {thread} and stay readable until that thread is erased "
        f"(`{erase} --yes`)",
        WIDTH,
        indent="  ",
    )


def message_lines(
    message: RawMessage, *, indent: str = "", max_lines: int | None = None
) -> list[str]:
    """A source message: id, role and time, then its content wrapped."""
    speaker = f"{message.role} ({message.name})" if message.name else message.role
    head = clip(f"{indent}{message.id} · {speaker} · {instant(message.created_at)}", WIDTH)
    body = wrap(message.content, WIDTH, indent=indent + "  ", max_lines=max_lines)
    return [head, *body]


def element_lines(
    card: ElementCard,
    *,
    max_facts: int | None = None,
    as_of: str | None = None,
    event_titles: Mapping[str, str] | None = None,
) -> list[str]:
    """An element: name, type and id; its state (``now``, or ``then`` as of ``as_of``); its facts
    with validity intervals.

    Closed facts (superseded, disputed or ended) come first: they are the element's history;
    links to events come last. With ``max_facts`` the rest of the facts is summarised in one
    line. Values that are event ids (``participated_in``, ``mentioned_in``) are shown as the
    events' titles when ``event_titles`` knows them.
    """
    titles = event_titles or {}

    def shown(value: str) -> str:
        return f'"{titles[value]}"' if value in titles else value

    when = f" · as of {as_of}" if as_of else ""
    state_label = "then" if as_of else "now"
    lines = [clip(f"{card.name} ({card.type})  {card.id}{when}", WIDTH)]
    if card.aliases:
        lines.append(clip(f"  aliases  {', '.join(card.aliases)}", WIDTH))
    for key, value in card.current_state.items():
        if isinstance(value, str):
            now = shown(value)
        else:
            noun = "event(s)" if value and all(v in titles for v in value) else "value(s)"
            now = f"{len(value)} {noun}: {'; '.join(shown(v) for v in value)}"
        lines.append(clip(f"  {state_label:<8} {key}: {now}", WIDTH))
    facts = sorted(
        card.facts,
        key=lambda f: (not _is_closed(f), isinstance(f.value, str) and f.value in titles),
    )
    shown_facts = facts if max_facts is None else facts[:max_facts]
    if shown_facts:
        rows = [
            [
                fact.status,
                validity(fact),
                fact.key,
                shown(fact.value) if isinstance(fact.value, str) else fact_value(fact.value),
            ]
            for fact in shown_facts
        ]
        lines.append("  facts")
        lines.extend(
            "    " + line
            for line in table(["STATUS", "VALID", "KEY", "VALUE"], rows, width=WIDTH - 4)
        )
    if len(facts) > len(shown_facts):
        lines.append(f"    … and {len(facts) - len(shown_facts)} more fact(s)")
    return lines


def _is_closed(fact: ElementFact) -> bool:
    return fact.status != "active" or fact.valid_to is not None


def block_entry_lines(entry: BlockContextEntry, *, max_lines: int | None = None) -> list[str]:
    """A block (or open tail) at its decayed level: id, turns and level, then its content."""
    start, end = entry.turn_range
    head = f"{entry.label:<14} turns {start}-{end}  {entry.id}"
    return [clip(head, WIDTH), *wrap(entry.content, WIDTH, indent="    ", max_lines=max_lines)]


def stats_lines(stats: NamespaceStats) -> list[str]:
    """``NamespaceStats`` as a two-column table."""
    rows = [
        ["namespace", stats.namespace],
        ["revision", str(stats.revision)],
        ["turns", str(stats.turns)],
        ["threads", str(stats.threads)],
        ["blocks", str(stats.blocks)],
        ["open tail turns", str(stats.open_tail_turns)],
        ["events", f"{stats.events} ({_counts(stats.events_by_status) or 'none'})"],
        ["elements", str(stats.elements)],
        ["facts", str(stats.facts)],
        ["extraction jobs", _counts(stats.extraction_jobs) or "none"],
        ["projection jobs", _counts(stats.projection_jobs) or "none"],
        ["usage receipts", str(stats.receipts)],
        ["retrieval batches", str(stats.batches)],
    ]
    if stats.last_event_at is not None:
        rows.append(["last event at", instant(stats.last_event_at)])
    return table(["WHAT", "COUNT"], rows)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))


def history_lines(records: Sequence[HistoryRecord]) -> list[str]:
    """Position, stream, type and a one-line gist per logged event."""
    rows = [
        [str(record.position), record.stream, record.type, history_gist(record.data, WIDTH)]
        for record in records
    ]
    return table(["POSITION", "STREAM", "TYPE", "GIST"], rows)


__all__ = [
    "block_entry_lines",
    "element_hit_lines",
    "element_lines",
    "event_hit_lines",
    "event_lines",
    "expanded_event_lines",
    "history_lines",
    "message_lines",
    "provenance",
    "raw_hit_lines",
    "stats_lines",
    "weight_note",
]
