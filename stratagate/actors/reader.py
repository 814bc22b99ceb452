"""The read side: answers every query from the read models, after catching up with the log.

The reader owns no stream. A search is a query whose batch must be citable by the evidence
gate, so it asks the weight keeper it is hosted beside to log the batch (``RecordBatch``) in
the same call; nothing else it does appends anything.
"""

from __future__ import annotations

from typing import Any

from stratagate.actors.live import LiveState
from stratagate.actors.role import MessageHandler, Taken, handles
from stratagate.actors.weight_keeper import WeightKeeper
from stratagate.audit import last_event_at
from stratagate.core.filters import MAX_QUERY_CHARS, EventFilters
from stratagate.formats.external_memory import (
    ImportPlan,
    PlannedItem,
    candidate,
    data_trace,
    item_hash,
)
from stratagate.messages import (
    GetStats,
    PlanImport,
    Recall,
    RecordBatch,
    Refresh,
    SearchElements,
    SearchEvents,
    SearchRaw,
    ViewRead,
    search_options,
)
from stratagate.models import (
    RawMessage,
)
from stratagate.read.recall import recall
from stratagate.read.view import MemoryView
from stratagate.results import (
    ElementHit,
    EventHit,
    HitList,
    NamespaceStats,
    RawHit,
    RecallContext,
)


class Reader(MessageHandler):
    """Query handler over one namespace's read models (every model), hosted beside the weight
    keeper (same process, same state)."""

    name = "reader"
    host = "weights"

    def __init__(self, live: LiveState, weights: WeightKeeper) -> None:
        self.live = live
        self.weights = weights

    @property
    def view(self) -> MemoryView:
        self.live.refresh()
        return self.live.view

    # -- plain reads ------------------------------------------------------------------------

    @handles(ViewRead)
    def view_read(self, query: ViewRead[Any]) -> Any:
        """A plain read: the view method the query names, with its fields."""
        return getattr(self.view, query.read)(**query.arguments())

    @handles(Refresh)
    def refresh(self, _: Refresh) -> int:
        """Catch up with the log now."""
        return self.live.refresh()

    @handles(GetStats)
    def stats(self, _: GetStats) -> NamespaceStats:
        store, namespace = self.live.store, self.live.namespace
        stats = self.view.stats(store.count(namespace))
        return stats.model_copy(update={"last_event_at": last_event_at(store, namespace)})

    # -- searches (each logs its batch) -----------------------------------------------------

    def _log(self, kind: Any, message: Any, refs: list[str], **ids: list[str]) -> str:
        return self.weights.handle(
            RecordBatch(
                kind=kind, query=message.query, options=search_options(message), refs=refs, **ids
            )
        )

    @handles(SearchEvents)
    def search_events(self, query: SearchEvents) -> HitList[EventHit]:
        """Ranked event hits; the batch (query, options, refs) is logged."""
        hits = self.view.rank_events(query.query, query.limit, query.filters)
        ids = [hit.id for hit in hits]
        return HitList(hits, self._log("events", query, ids, event_ids=ids))

    @handles(SearchElements)
    def search_elements(self, query: SearchElements) -> HitList[ElementHit]:
        """Fact-level element hits; refs are fact ids and element ids."""
        hits = self.view.rank_elements(query.query, query.limit, query.filters)
        refs = [ref for hit in hits for ref in (hit.id, hit.element_id)]
        element_ids = [hit.element_id for hit in hits]
        return HitList(hits, self._log("elements", query, refs, element_ids=element_ids))

    @handles(SearchRaw)
    def search_raw(self, query: SearchRaw) -> HitList[RawHit]:
        """Ranked source messages; refs are message ids and block ids."""
        hits = self.view.rank_raw(query.query, query.limit, query.filters)
        refs = [ref for hit in hits for ref in (hit.id, hit.block_id) if ref is not None]
        return HitList(hits, self._log("raw", query, refs))

    @handles(Recall)
    def recall(self, query: Recall) -> RecallContext:
        """Automatic activation; logged as a ``context`` batch, never reinforced."""
        view = self.view
        context = recall(
            view,
            query.query,
            thread_id=query.thread_id,
            max_events=query.max_events,
            max_elements=query.max_elements,
            token_budget=query.token_budget,
        )
        event_ids = [entry.id for entry in context.events]
        fact_ids = [entry.id for entry in context.elements]
        owners = view.state.elements.fact_owner
        element_ids = [owners[f] for f in fact_ids]
        message_ids = [entry.id for entry in context.messages]
        batch_id = self._log(
            "context",
            query,
            [*event_ids, *fact_ids, *element_ids, *message_ids],
            event_ids=event_ids,
            element_ids=element_ids,
        )
        return context.model_copy(update={"batch_id": batch_id})

    # -- external memory --------------------------------------------------------------------

    @handles(PlanImport)
    def plan_import(self, query: PlanImport) -> ImportPlan:
        """Skip exact duplicates and pair each new item with its top-k similar events (not
        logged: nothing is decided until the caller's decider has answered)."""
        view = self.view
        state = view.state
        known = state.events.imported_hashes()
        blocks = state.blocks
        batch_id = self.weights.new_id("import", state.events.imports)
        block_id = self.weights.new_id("blk", blocks.blocks)
        now = self.weights.options.now()
        document = query.document
        items: list[PlannedItem] = []
        taken_messages = Taken(blocks.messages)
        skipped = 0
        for item in document.items:
            digest = item_hash(item)
            if digest in known:
                skipped += 1
                continue
            known.add(digest)
            message_id = self.weights.new_id("msg", taken_messages)
            taken_messages.add(message_id)
            message = RawMessage(
                id=message_id,
                role="user",
                name=document.source,
                content=item.text,
                created_at=now,
                thread_id=f"import:{batch_id}",
                tool_calls=None if item.data is None else [data_trace(item.data)],
            )
            proposal = candidate(item, block_id=block_id, message_id=message.id)
            matches = [
                hit.event
                for hit in view.rank_events(
                    proposal.summary[:MAX_QUERY_CHARS], query.top_k, EventFilters()
                )
            ]
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


__all__ = ["Reader"]
