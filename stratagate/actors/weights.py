"""The weight keeper: serves queries, logs retrieval batches and assessments, records use,
and governs events (pin, forget, restore, archive).

It holds every read model, so searches run here and their batch is logged in the same call.
A search never reinforces: it only sets ``last_retrieved_at``. Recorded use reinforces, once
per receipt id, and — when the audit names a batch — only refs that passed a ``sufficient``
assessment of that batch.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from stratagate.actors.role import Role
from stratagate.errors import InvalidInputError, StrataGateError, UnknownIdError
from stratagate.events import (
    WEIGHTS,
    AssessmentRecorded,
    EventArchived,
    EventForgotten,
    EventPinned,
    EventRestored,
    EventUnpinned,
    MemoryUseRecorded,
    RetrievalBatchRecorded,
)
from stratagate.events.weights import BatchKind
from stratagate.external_import import (
    ExternalMemoryDocument,
    ImportPlan,
    PlannedItem,
    candidate,
    item_hash,
)
from stratagate.gate import normalize_assessment
from stratagate.models import (
    RawMessage,
    RetrievalAssessment,
    UsageAudit,
    UsageReceipt,
    parse_input,
)
from stratagate.recall import recall
from stratagate.results import ElementHit, EventHit, HitList, RawHit, RecallContext
from stratagate.timeutil import format_utc

Governance = Literal["pin", "unpin", "forget", "restore", "archive"]
QUERIES = frozenset(
    {
        "current_turn",
        "block",
        "blocks",
        "open_tail",
        "block_context",
        "event",
        "events",
        "event_weight",
        "expand_event",
        "timeline",
        "element",
        "elements",
        "extraction_jobs",
        "projection_jobs",
        "usage_receipts",
        "has_receipt",
        "stats",
    }
)
"""The ``MemoryView`` methods the façade may ask for."""


def _jsonable(options: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            value = format_utc(value)
        elif isinstance(value, tuple | list | set | frozenset):
            value = list(value)
        out[key] = value
    return out


class WeightKeeper(Role):
    """The only writer of the weights stream, and the namespace's query server."""

    stream = WEIGHTS
    components = ("blocks", "decay", "events", "weights", "jobs", "elements", "search")

    # -- queries ----------------------------------------------------------------------------

    def query(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Answer one read-only ``MemoryView`` query after catching up with the log."""
        if name not in QUERIES:
            raise InvalidInputError(f"unknown query {name!r}")
        self.refresh()
        return getattr(self.view, name)(*args, **kwargs)

    # -- retrieval --------------------------------------------------------------------------

    def _log_batch(
        self,
        kind: BatchKind,
        query: str,
        options: Mapping[str, Any],
        refs: Sequence[str],
        *,
        event_ids: Sequence[str] = (),
        element_ids: Sequence[str] = (),
    ) -> str:
        batch_id = self.options.make_id("batch")
        self._append(
            RetrievalBatchRecorded(
                batch_id=batch_id,
                kind=kind,
                query=query,
                options=_jsonable(options),
                refs=list(dict.fromkeys(refs)),
                event_ids=list(dict.fromkeys(event_ids)),
                element_ids=list(dict.fromkeys(element_ids)),
                at=self.options.now(),
            )
        )
        return batch_id

    def search_events(self, query: str, **options: Any) -> HitList[EventHit]:
        """Ranked event hits; the batch (query, options, refs) is logged."""
        self.refresh()
        _check_query(query)
        hits = self.view.search_events(query, **options)
        ids = [hit.id for hit in hits]
        batch_id = self._log_batch("events", query, options, ids, event_ids=ids)
        return HitList(hits, batch_id)

    def search_elements(self, query: str, **options: Any) -> HitList[ElementHit]:
        """Fact-level element hits; refs are fact ids and element ids."""
        self.refresh()
        _check_query(query)
        hits = self.view.search_elements(query, **options)
        refs = [ref for hit in hits for ref in (hit.id, hit.element_id)]
        batch_id = self._log_batch(
            "elements", query, options, refs, element_ids=[hit.element_id for hit in hits]
        )
        return HitList(hits, batch_id)

    def search_raw_memory(self, query: str, **options: Any) -> HitList[RawHit]:
        """Ranked source messages; refs are message ids and block ids."""
        self.refresh()
        _check_query(query)
        hits = self.view.search_raw(query, **options)
        refs = [ref for hit in hits for ref in (hit.id, hit.block_id) if ref is not None]
        return HitList(hits, self._log_batch("raw", query, options, refs))

    def recall_context(self, query: str, **options: Any) -> RecallContext:
        """Automatic activation; logged as a ``context`` batch, never reinforced."""
        self.refresh()
        _check_query(query)
        context = recall(self.view, query, **options)
        event_ids = [entry.id for entry in context.events]
        fact_ids = [entry.id for entry in context.elements]
        element_ids = [self.state.elements.fact_owner[f] for f in fact_ids]
        batch_id = self._log_batch(
            "context",
            query,
            options,
            [*event_ids, *fact_ids, *element_ids],
            event_ids=event_ids,
            element_ids=element_ids,
        )
        return context.model_copy(update={"batch_id": batch_id})

    def assess(self, raw: Mapping[str, Any], batch: str | Collection[str]) -> RetrievalAssessment:
        """Normalise an assessment against a logged batch (or explicit refs) and log it."""
        self.refresh()
        if isinstance(batch, str):
            record = self.state.weights.batches.get(batch)
            if record is None:
                raise UnknownIdError(f"unknown retrieval batch id {batch!r}")
            batch_id: str | None = batch
            refs: Collection[str] = record.refs
        else:
            batch_id, refs = None, [str(ref) for ref in batch]
        assessment = normalize_assessment(raw, refs, batch_id=batch_id)
        self._append(
            AssessmentRecorded(
                assessment_id=self.options.make_id("assess"),
                batch_id=batch_id,
                assessment=assessment,
                at=self.options.now(),
            )
        )
        return assessment

    def plan_import(self, document: ExternalMemoryDocument, top_k: int) -> ImportPlan:
        """Skip exact duplicates and pair each new item with its top-k similar events (not logged)."""
        self.refresh()
        known = self.state.events.imported_hashes()
        batch_id = self.options.make_id("import")
        block_id = self.options.make_id("blk")
        now = self.options.now()
        items: list[PlannedItem] = []
        skipped = 0
        for item in document.items:
            digest = item_hash(item)
            if digest in known:
                skipped += 1
                continue
            known.add(digest)
            message = RawMessage(
                id=self.options.make_id("msg"),
                role="user",
                name=document.source,
                content=item.text,
                created_at=now,
                thread_id=f"import:{batch_id}",
            )
            proposal = candidate(item, block_id=block_id, message_id=message.id)
            matches = [hit.event for hit in self.view.search_events(proposal.summary, limit=top_k)]
            items.append(
                PlannedItem(
                    item=item, digest=digest, message=message, candidate=proposal, matches=matches
                )
            )
        return ImportPlan(
            batch_id=batch_id,
            block_id=block_id,
            format=document.format,
            source=document.source,
            items=items,
            skipped_duplicates=skipped,
        )

    # -- adoption ---------------------------------------------------------------------------

    def record_use(
        self,
        *,
        event_ids: Sequence[str],
        element_ids: Sequence[str],
        receipt_id: str | None,
        audit: UsageAudit | Mapping[str, Any] | None,
    ) -> UsageReceipt:
        """Record that an answer used these memories (see the module rule on batches)."""
        self.refresh()
        events, elements = list(dict.fromkeys(event_ids)), list(dict.fromkeys(element_ids))
        audit_model = parse_input(UsageAudit, audit, what="audit") if audit is not None else None
        if receipt_id is None:
            if self.options.persistent:
                raise InvalidInputError(
                    "record_memory_use needs a stable receipt_id in persistent mode"
                )
            receipt_id = self.options.make_id("use")
        if not isinstance(receipt_id, str) or not receipt_id.strip():
            raise InvalidInputError("receipt_id must be a non-empty string")
        for event_id in events:
            if event_id not in self.state.events.records:
                raise UnknownIdError(f"unknown event id {event_id!r}")
        for element_id in elements:
            if element_id not in self.state.elements.elements:
                raise UnknownIdError(f"unknown element id {element_id!r}")
        existing = self.state.weights.receipts.get(receipt_id)
        if existing is not None:
            same = (
                sorted(existing.event_ids) == sorted(events)
                and sorted(existing.element_ids) == sorted(elements)
                and existing.audit == audit_model
            )
            if same:
                return existing
            raise StrataGateError(
                f"receipt id {receipt_id!r} was already used for different memories"
            )
        reinforced_events, reinforced_elements = self._reinforceable(events, elements, audit_model)
        receipt = UsageReceipt(
            id=receipt_id,
            event_ids=events,
            element_ids=elements,
            audit=audit_model,
            reinforced_event_ids=reinforced_events,
            reinforced_element_ids=reinforced_elements,
            turn=self.state.blocks.turn,
            created_at=self.options.now(),
        )
        self._append(MemoryUseRecorded(receipt=receipt, at=receipt.created_at))
        return receipt

    def _reinforceable(
        self, events: list[str], elements: list[str], audit: UsageAudit | None
    ) -> tuple[list[str], list[str]]:
        """Which ids a receipt reinforces (the adoption rule).

        Only retrievable events (active or superseded) are ever reinforced. Without an audited
        batch every requested id is. With one (``audit.batch_id``), an id is reinforced only when
        a ``sufficient`` assessment of that batch accepted it: an event by its id, or through a
        source message it cites (the raw message vouched for the card); an element by its id or
        the id of one of its facts.
        """
        retrievable = [e for e in events if self.state.events.retrievable(e)]
        if audit is None or audit.batch_id is None:
            return retrievable, elements
        batch = self.state.weights.batches.get(audit.batch_id)
        if batch is None:
            raise UnknownIdError(f"unknown retrieval batch id {audit.batch_id!r}")
        accepted = set(batch.sufficient_refs)
        records = self.state.events.records
        vouched = [
            e
            for e in retrievable
            if e in accepted or accepted & set(records[e].card.source_message_ids)
        ]
        owners = self.state.elements.fact_owner
        accepted_elements = accepted | {owners[ref] for ref in accepted if ref in owners}
        return vouched, [e for e in elements if e in accepted_elements]

    # -- governance -------------------------------------------------------------------------

    def govern(self, action: Governance, event_id: str) -> bool:
        """Pin, unpin, forget, restore or archive an event; returns False when already so."""
        self.refresh()
        record = self.state.events.records.get(event_id)
        if record is None:
            raise UnknownIdError(f"unknown event id {event_id!r}")
        pinned = self.state.weights.weights[event_id].pinned
        retired = record.status in ("forgotten", "archived")
        event_type, needed = {
            "pin": (EventPinned, not pinned),
            "unpin": (EventUnpinned, pinned),
            "forget": (EventForgotten, record.status != "forgotten"),
            "archive": (EventArchived, record.status != "archived"),
            "restore": (EventRestored, retired),
        }[action]
        if needed:
            self._append(event_type(event_id=event_id, at=self.options.now()))
        return needed


def _check_query(query: object) -> None:
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")


__all__ = ["Governance", "WeightKeeper"]
