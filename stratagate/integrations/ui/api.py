"""The Memory UI's JSON API (``/api/v1``): pure handlers from a caught-up reader and the query
string to a JSON-ready dict. Nothing here appends: reads go through the memory's ``view()``
(searches log no retrieval batch) and past states through ``NamespaceReader.at``.

Every list is a page: ``offset`` (default 0) and ``limit`` (default 50, at most 500; searches at
most 50) in, ``items``, ``total`` (when known), ``offset`` and ``next`` (the next page's offset,
or ``null``) out; the log pages by position (``after``). Bad parameters raise
``InvalidInputError`` (400), unknown ids ``UnknownIdError`` (404).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

from stratagate.errors import InvalidInputError, UnknownIdError
from stratagate.integrations.tools import dump
from stratagate.integrations.ui.catalog import Catalog, NamespaceReader, Verification
from stratagate.memory import MAX_POSITION
from stratagate.models import ElementCard, EventCard, RawMessage, UsageReceipt
from stratagate.read.view import LEVEL_LABELS, MemoryView, level_content
from stratagate.timeutil import format_utc

T = TypeVar("T")
Json = dict[str, Any]

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_SEARCH = 50
MAX_QUERY = 1000
MAX_IDS = 100
EVENT_STATUSES = ("active", "superseded", "forgotten", "archived")
STATE_KINDS = ("events", "elements", "blocks")


@dataclass(frozen=True)
class Params:
    """The query string of one request, read with typed, bounded getters."""

    values: Mapping[str, str]

    def text(self, name: str, *, max_chars: int = MAX_QUERY) -> str | None:
        value = self.values.get(name)
        if value is None or not value.strip():
            return None
        if len(value) > max_chars:
            raise InvalidInputError(f"{name} is longer than {max_chars} characters")
        return value

    def integer(self, name: str, default: int, *, low: int = 0, high: int = MAX_POSITION) -> int:
        raw = self.values.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise InvalidInputError(f"{name} must be an integer, got {raw!r:.40}") from None
        if not low <= value <= high:
            raise InvalidInputError(f"{name} must be from {low} to {high}, got {value}")
        return value

    def choice(self, name: str, options: tuple[str, ...], default: str | None = None) -> str | None:
        value = self.text(name)
        if value is None:
            return default
        if value not in options:
            raise InvalidInputError(
                f"{name} must be one of {', '.join(options)}, got {value!r:.40}"
            )
        return value

    def ids(self, name: str) -> list[str]:
        raw = self.text(name, max_chars=MAX_IDS * 80) or ""
        ids = [part.strip() for part in raw.split(",") if part.strip()]
        if len(ids) > MAX_IDS:
            raise InvalidInputError(f"{name} names more than {MAX_IDS} ids")
        return ids

    def window(self, *, search: bool = False) -> tuple[int, int]:
        """``(offset, limit)`` of a page (a search's window ends by hit 50)."""
        offset = self.integer("offset", 0, high=MAX_SEARCH - 1 if search else MAX_POSITION)
        limit = self.integer("limit", DEFAULT_LIMIT if not search else 10, low=1, high=MAX_LIMIT)
        return offset, min(limit, MAX_SEARCH - offset) if search else limit


def page(
    items: Iterable[T], total: int | None, offset: int, limit: int, show: Callable[[T], Any]
) -> Json:
    """One page of ``items`` (an iterable from the start) as the API answers it."""
    taken = list(islice(items, offset, offset + limit + 1))
    more = len(taken) > limit
    return {
        "items": [show(item) for item in taken[:limit]],
        "total": total,
        "offset": offset,
        "next": offset + limit if more else None,
    }


def search_page(
    params: Params, query: str, search: Callable[..., list[T]], show: Callable[[T], Any]
) -> Json:
    """One window of a search's ranked hits (``search(query, limit=…)``; nothing is logged)."""
    offset, limit = params.window(search=True)
    shown = page(search(query, limit=offset + limit), None, offset, limit, show)
    shown["next"] = None  # a search window ends by its last hit: there is no next page
    return shown


# -- shapes ----------------------------------------------------------------------------------


def event_json(view: MemoryView, card: EventCard) -> Json:
    """An event card with its weight now and where it came from."""
    data: Json = dump(card)
    data["memory_weight"] = view.event_weight(card.id)
    return data


def element_summary(card: ElementCard) -> Json:
    """An element without its facts (they may be many): counts and current state."""
    data: Json = dump(card)
    facts = data.pop("facts")
    data["fact_count"] = len(facts)
    data["superseded_facts"] = sum(1 for f in facts if f["status"] != "active")
    return data


BLOCK_TEXT_FIELDS = {"l1_summary", "l2_keypoints", "l3_condensed", "l4_readable", "l5_raw"}
"""A block's content fields, sent once as its six ``views`` (and its messages by id: the
messages themselves come from ``sources?ids=BLOCK``), so a page of blocks stays small."""


def block_json(view: MemoryView, block_id: str) -> Json:
    """A block with its six views (L0–L5) and the level decay has it at now."""
    block = view.get_block(block_id)
    record = view.state.blocks.blocks[block_id]
    data: Json = block.model_dump(mode="json", exclude=BLOCK_TEXT_FIELDS)
    data["message_ids"] = [message.id for message in block.l5_raw]
    data["views"] = [
        {"level": level, "label": LEVEL_LABELS[level], "content": level_content(record, level)}
        for level in range(6)
    ]
    return data


def message_json(message: RawMessage) -> Json:
    data: Json = dump(message)
    return data


# -- namespaces ------------------------------------------------------------------------------


def summary(reader: NamespaceReader) -> Json:
    """A namespace's health: counts, failed and pending jobs, log head, last verification."""
    stats = reader.memory.stats()
    extraction, projection = stats.extraction_jobs, stats.projection_jobs
    verified = reader.verified
    return {
        "namespace": reader.namespace,
        "turns": stats.turns,
        "threads": stats.threads,
        "blocks": stats.blocks,
        "open_tail_turns": stats.open_tail_turns,
        "events": stats.events,
        "events_by_status": stats.events_by_status,
        "elements": stats.elements,
        "facts": stats.facts,
        "receipts": stats.receipts,
        "batches": stats.batches,
        "jobs": {
            "extraction": extraction,
            "projection": projection,
            "failed": extraction.get("failed", 0) + projection.get("failed", 0),
            "pending": extraction.get("running", 0)
            + projection.get("pending", 0)
            + projection.get("running", 0),
        },
        "revision": stats.revision,
        "head": reader.head,
        "last_event_at": None if stats.last_event_at is None else format_utc(stats.last_event_at),
        "last_verify": None if verified is None else verification_json(verified, reader),
    }


def verification_json(verified: Verification, reader: NamespaceReader) -> Json:
    """A verification with what it covered, and whether the log has moved since."""
    return {
        **dump(verified.report),
        "revision": verified.revision,
        "position": verified.position,
        "checked_at": format_utc(verified.checked_at),
        "current": verified.revision == reader.revision,
    }


def list_namespaces(catalog: Catalog, params: Params) -> Json:
    """``GET /namespaces``: each served namespace with its health."""
    names = catalog.names()
    offset, limit = params.window()
    return page(names, len(names), offset, limit, lambda n: summary(catalog.reader(n)))


def namespace(reader: NamespaceReader, params: Params) -> Json:
    """``GET /namespaces/{ns}``: one namespace's health and its threads."""
    view = reader.now()
    threads = [
        {"thread_id": t.thread_id, "blocks": len(t.block_ids), "open_tail_turns": len(t.tail)}
        for t in view.state.blocks.conversation_threads()
    ]
    return {**summary(reader), "thread_list": threads}


# -- blocks, events, elements ----------------------------------------------------------------


def blocks(reader: NamespaceReader, params: Params) -> Json:
    """``GET blocks?thread=``: sealed blocks in sealing order, each with L0–L5 and its level."""
    view = reader.now()
    thread = params.text("thread")
    records = view.state.blocks.blocks.values()
    ids = [r.id for r in records if thread is None or r.thread_id == thread]
    offset, limit = params.window()
    return page(ids, len(ids), offset, limit, lambda i: block_json(view, i))


def events(reader: NamespaceReader, params: Params) -> Json:
    """``GET events?q=&status=``: ranked hits for ``q`` (nothing logged), else every card in
    creation order."""
    view = reader.now()
    query = params.text("q")
    if query is not None:
        return search_page(
            params,
            query,
            view.search_events,
            lambda h: {**event_json(view, h.event), "score": h.score},
        )
    status = params.choice("status", EVENT_STATUSES)
    records = view.state.events.records
    ids: Iterable[str] = (
        records if status is None else (i for i, r in records.items() if r.status == status)
    )
    total = len(records) if status is None else None
    offset, limit = params.window()
    return page(ids, total, offset, limit, lambda i: event_json(view, view.get_event(i)))


def elements(reader: NamespaceReader, params: Params) -> Json:
    """``GET elements?q=``: fact-level hits for ``q`` (nothing logged), else every element."""
    view = reader.now()
    query = params.text("q")
    if query is not None:
        return search_page(params, query, view.search_elements, dump)
    found = view.state.elements.elements
    offset, limit = params.window()
    return page(found, len(found), offset, limit, lambda i: element_summary(view.expand_element(i)))


def element(reader: NamespaceReader, params: Params, element_id: str) -> Json:
    """``GET elements/{id}?at=``: the element with every fact, as of ``at`` (ISO time)."""
    view = reader.now()
    card = view.expand_element(element_id, params.text("at", max_chars=64))
    return {**dump(card), "relations": relations(view, card)}


def relations(view: MemoryView, card: ElementCard) -> list[Json]:
    """The element's relation facts, each with the element its value names (when known)."""
    names = element_names(view)
    found = []
    for fact in card.facts:
        if fact.mode != "relation":
            continue
        for value in [fact.value] if isinstance(fact.value, str) else fact.value:
            found.append(
                {
                    "fact_id": fact.id,
                    "key": fact.key,
                    "value": value,
                    "target_id": names.get(value.casefold()),
                    "status": fact.status,
                    "valid_from": None if fact.valid_from is None else format_utc(fact.valid_from),
                    "valid_to": None if fact.valid_to is None else format_utc(fact.valid_to),
                }
            )
    return found


def element_names(view: MemoryView) -> dict[str, str]:
    """Element id by case-folded name and alias."""
    names: dict[str, str] = {}
    for record in view.state.elements.elements.values():
        for name in (record.name, *record.aliases):
            names.setdefault(name.casefold(), record.id)
    return names


def graph(reader: NamespaceReader, params: Params) -> Json:
    """``GET graph``: elements as nodes, relation facts as edges (superseded ones too)."""
    view = reader.now()
    found = view.state.elements.elements
    offset, limit = params.window()
    shown = page(found, len(found), offset, limit, lambda i: view.expand_element(i))
    cards: list[ElementCard] = shown.pop("items")
    nodes = [element_summary(card) for card in cards]
    edges = [
        {"source": card.id, **relation} for card in cards for relation in relations(view, card)
    ]
    return {**shown, "nodes": nodes, "edges": edges}


# -- provenance ------------------------------------------------------------------------------


def sources(reader: NamespaceReader, params: Params) -> Json:
    """``GET sources?ids=`` (events, elements, facts, blocks, messages): the source messages of
    each; or ``?q=``: ranked source messages with their neighbours (nothing logged)."""
    view = reader.now()
    query = params.text("q")
    if query is not None:
        return search_page(params, query, view.search_raw_memory, dump)
    ids = params.ids("ids")
    if not ids:
        raise InvalidInputError(
            "give ids=ID,ID… (events, elements, facts, blocks or messages) or q="
        )
    return {"items": [{"id": i, **source_of(view, i)} for i in ids]}


def source_of(view: MemoryView, memory_id: str) -> Json:
    """What kind of memory an id names and the messages it was derived from."""
    state = view.state
    if memory_id in state.events.records:
        expanded = view.expand_event(memory_id)
        shown = dump(expanded.source_messages)
        return {"kind": "event", "block_id": expanded.source_block.id, "messages": shown}
    if memory_id in state.elements.elements:
        card = view.expand_element(memory_id)
        shown = messages(view, card.source_message_ids)
        return {"kind": "element", "event_ids": card.source_event_ids, "messages": shown}
    if memory_id in state.elements.fact_owner:
        _, fact = state.elements.fact(memory_id)
        cited = [m for e in fact.source_event_ids for m in cited_messages(view, e)]
        shown = messages(view, dict.fromkeys(cited))
        return {"kind": "fact", "event_ids": fact.source_event_ids, "messages": shown}
    if memory_id in state.blocks.blocks:
        return {"kind": "block", "messages": dump(state.blocks.messages_of(memory_id))}
    message = state.blocks.message(memory_id)
    if message is not None:
        return {"kind": "message", "messages": [message_json(message)]}
    raise UnknownIdError(f"unknown memory id {memory_id!r}")


def cited_messages(view: MemoryView, event_id: str) -> list[str]:
    record = view.state.events.records.get(event_id)
    return [] if record is None else list(record.card.source_message_ids)


def messages(view: MemoryView, ids: Iterable[str]) -> list[Json]:
    found = (view.state.blocks.message(i) for i in ids)
    return [message_json(m) for m in found if m is not None]


# -- receipts: the usage-audit chain ---------------------------------------------------------


def receipts(reader: NamespaceReader, params: Params) -> Json:
    """``GET receipts``: recorded uses, newest first."""
    view = reader.now()
    found = list(reversed(view.list_usage_receipts()))
    offset, limit = params.window()
    return page(found, len(found), offset, limit, lambda r: receipt_summary(view, r))


def receipt_summary(view: MemoryView, receipt: UsageReceipt) -> Json:
    """A receipt with its batch and the evidence gate's verdict: the audit's own assessment,
    else the last one logged for its batch."""
    audit = receipt.audit
    batch_id = None if audit is None else audit.batch_id
    verdict = None if audit is None or audit.assessment is None else audit.assessment.verdict
    weights = view.state.weights
    batch = None if batch_id is None else weights.batches.get(batch_id)
    if verdict is None and batch is not None and batch.assessment_ids:
        verdict = weights.assessments[batch.assessment_ids[-1]].assessment.verdict
    return {**dump(receipt), "batch_id": batch_id, "verdict": verdict}


def receipt(reader: NamespaceReader, params: Params, receipt_id: str) -> Json:
    """``GET receipts/{id}``: an answer's use of memory traced back: the receipt, the evidence
    gate's verdict on its batch, the batch (query and refs), the memories it selected and the
    source messages of each."""
    view = reader.now()
    weights = view.state.weights
    found = weights.receipts.get(receipt_id)
    if found is None:
        raise UnknownIdError(f"unknown receipt id {receipt_id!r}")
    audit = found.audit
    batch = None if audit is None or audit.batch_id is None else weights.batches.get(audit.batch_id)
    assessments = [] if batch is None else [weights.assessments[a] for a in batch.assessment_ids]
    used = [("event", i, i in found.reinforced_event_ids) for i in found.event_ids] + [
        ("element", i, i in found.reinforced_element_ids) for i in found.element_ids
    ]
    return {
        "receipt": receipt_summary(view, found),
        "audit": dump(audit),
        "batch": None if batch is None else dump(batch),
        "assessments": [dump(a) for a in assessments],
        "memories": [
            {
                "kind": kind,
                "id": i,
                "reinforced": reinforced,
                "title": memory_title(view, kind, i),
                **source_of_known(view, i),
            }
            for kind, i, reinforced in used
        ],
    }


def memory_title(view: MemoryView, kind: str, memory_id: str) -> str | None:
    if kind == "event":
        record = view.state.events.records.get(memory_id)
        return None if record is None else record.card.title
    element_record = view.state.elements.elements.get(memory_id)
    return None if element_record is None else element_record.name


def source_of_known(view: MemoryView, memory_id: str) -> Json:
    """``source_of``, with a memory the state no longer holds shown as missing."""
    try:
        return source_of(view, memory_id)
    except UnknownIdError:
        return {"kind": "missing", "messages": []}


# -- the log, verification, time travel ------------------------------------------------------


def log(reader: NamespaceReader, params: Params) -> Json:
    """``GET log?after=&limit=``: the namespace's domain events after a position, paged."""
    after = params.integer("after", 0)
    limit = params.integer("limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT)
    records = reader.memory.history(since=after, limit=limit + 1)
    shown = records[:limit]
    return {
        "items": dump(shown),
        "after": after,
        "next": shown[-1].position if len(records) > limit else None,
        "head": reader.head,
        "revision": reader.revision,
    }


def verify(reader: NamespaceReader, params: Params) -> Json:
    """``GET verify``: the hash chain and a full replay (re-run once the log has moved)."""
    return verification_json(reader.verify(), reader)


def past_listing(view: MemoryView, kind: str | None) -> tuple[list[str], Callable[[str], Json]]:
    """The ids of one kind of memory in a state (in their order) and how each is shown."""
    state = view.state
    if kind == "elements":
        return list(state.elements.elements), lambda i: element_summary(view.expand_element(i))
    if kind == "blocks":
        return list(state.blocks.blocks), lambda i: block_json(view, i)
    return list(state.events.records), lambda i: event_json(view, view.get_event(i))


def state(reader: NamespaceReader, params: Params) -> Json:
    """``GET state?at=POSITION&kind=&order=``: the read models as of a global position —
    counts and one page of events, elements or blocks as they were then (oldest or newest
    first)."""
    at = params.integer("at", reader.head)
    kind = params.choice("kind", STATE_KINDS, "events")
    newest = params.choice("order", ("oldest", "newest"), "oldest") == "newest"
    view = reader.at(at)
    counts = view.stats(revision=0).model_dump(mode="json", exclude={"revision", "last_event_at"})
    ids, show = past_listing(view, kind)
    offset, limit = params.window()
    shown = page(reversed(ids) if newest else ids, len(ids), offset, limit, show)
    where = {"at": at, "position": view.position, "head": reader.head, "kind": kind}
    return {**where, "stats": counts, **shown}


NamespaceHandler = Callable[[NamespaceReader, Params], Json]
ItemHandler = Callable[[NamespaceReader, Params, str], Json]

NAMESPACE_ROUTES: dict[str, NamespaceHandler] = {
    "": namespace,
    "blocks": blocks,
    "events": events,
    "elements": elements,
    "graph": graph,
    "sources": sources,
    "receipts": receipts,
    "log": log,
    "verify": verify,
    "state": state,
}
"""``/api/v1/namespaces/{ns}/<name>`` → handler."""
ITEM_ROUTES: dict[str, ItemHandler] = {"elements": element, "receipts": receipt}
"""``/api/v1/namespaces/{ns}/<name>/{id}`` → handler."""


def iter_routes() -> Iterator[str]:
    """Every route path, for the docs test."""
    yield "/api/v1/namespaces"
    for name in NAMESPACE_ROUTES:
        yield f"/api/v1/namespaces/{{ns}}/{name}".rstrip("/")
    for name in ITEM_ROUTES:
        yield f"/api/v1/namespaces/{{ns}}/{name}/{{id}}"


__all__ = [
    "ITEM_ROUTES",
    "NAMESPACE_ROUTES",
    "Params",
    "iter_routes",
    "list_namespaces",
    "page",
    "source_of",
    "summary",
]
