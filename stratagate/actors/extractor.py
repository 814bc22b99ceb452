"""The extractor: delayed extraction of event cards, manual cards, supersession.

Block N of a thread is extracted once block N+1 is sealed. The callback gets the target (the
only legal source), the previous block if any, the next block and the timeline of existing
events. A job goes running → succeeded / skipped / failed, each an appended event; the model
runs between them, outside any transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from projections.cards import EventRecord
from projections.replay import paused_gc
from projections.shared import built, share_fields_set
from stratagate.actors.role import Role, Taken, error_text, handles
from stratagate.callbacks import invoke, is_local, validate_output
from stratagate.core.ingest import DecidedItem, ImportDecision, decide_import
from stratagate.core.layers import deterministic_layers
from stratagate.core.provenance import CitableMessage, card_values, namespace_event_ids
from stratagate.errors import InvalidInputError, ModelResponseError, UnknownIdError
from stratagate.events import (
    EXTRACTION,
    DomainEvent,
    EventAdded,
    EventMerged,
    EventSuperseded,
    ExternalImportRecorded,
    ExternalImportUndone,
    ExtractionFailed,
    ExtractionInterrupted,
    ExtractionSkipped,
    ExtractionStarted,
    ExtractionSucceeded,
    ProjectionQueued,
)
from stratagate.events.payloads import (
    CardData,
    Data,
    MessageData,
    SummaryData,
    TemporalData,
    WeightData,
    convert_all,
)
from stratagate.formats.external_memory import ImportPlan
from stratagate.messages import AddEvents, ExtractReady, ImportExternal, UndoImport
from stratagate.models import (
    EventCard,
    EventCardInput,
    ExtractionContext,
    ExtractionResult,
    RawMessage,
)
from stratagate.providers import Extractor as ExtractorModel
from stratagate.providers import resolve
from stratagate.results import ImportResult

SUMMARIZER_SKIP = "the summarizer marked the block should_extract=false"


def batch_job_id(first_card_id: str) -> str:
    """The projection job of an ``add_events`` batch, queued in the batch's own append: named
    after its first card (ids are unique in a namespace), so it needs no id from the factory,
    whose copy in another process (the projector's) could draw the same one."""
    return "proj_" + hashlib.sha256(first_card_id.encode()).hexdigest()


def added_by_caller(card: CardData, at: datetime) -> EventAdded:
    """The ``EventAdded`` of a caller's card, built from values already validated (the card
    once, in its stored form; ``at`` from the options' clock, aware UTC) without a second
    pass of pydantic over the card (an ``add_events`` batch's share one field-name set)."""
    return built(
        EventAdded,
        {
            "type": "EventAdded",
            "at": at,
            "event": card,
            "origin": "manual",
            "import_batch_id": None,
        },
    )


def batch_job(card_ids: list[str], at: datetime) -> ProjectionQueued:
    """The one projection job of an ``add_events`` batch (``batch_job_id``), built from
    validated values: the cards' ids, at least one, and the options' clock."""
    if not card_ids:
        raise ValueError("a projection job needs at least one card")
    job_id = batch_job_id(card_ids[0])
    return built(
        ProjectionQueued,
        {"type": "ProjectionQueued", "at": at, "job_id": job_id, "source_event_ids": card_ids},
    )


D = TypeVar("D", bound=Data)


class StoredParts:
    """The temporal parts and weights of one append's new cards, validated once per distinct
    value and then shared: a batch's cards mostly have the same (their block's mention time,
    the turn's weight), and a batch holds every card until it is appended."""

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], Data] = {}

    def get(self, cls: type[D], values: Mapping[str, Any]) -> D:
        """The stored ``cls`` of ``values`` (plain data: text, numbers, lists of text)."""
        key = (cls, *((name, tuple(v) if type(v) is list else v) for name, v in values.items()))
        try:
            part = self._items.get(key)
        except TypeError:  # a value no key can hold: not shared
            return cls.model_validate(values)
        if part is None:
            part = self._items[key] = cls.model_validate(values)
            share_fields_set(part)
        assert isinstance(part, cls)
        return part


class ActiveEvents:
    """The ids of the active events among ``records`` (checked one id at a time)."""

    def __init__(self, records: Mapping[str, EventRecord]) -> None:
        self.records = records

    def __contains__(self, event_id: object) -> bool:
        record = self.records.get(event_id) if isinstance(event_id, str) else None
        return record is not None and record.status == "active"


PAUSE_COLLECTOR_FROM = 64
"""Cards in one call from which the call pauses the collector: at about ten tracked objects a
card, such a batch fills the youngest generation (700) by itself. Fewer are not worth a pause,
whose end hands every young object of the process, the host's too, to the oldest generation."""


class Extractor(Role):
    """The only writer of the extraction stream."""

    name = host = "extractor"
    stream = EXTRACTION
    components = ("blocks", "decay", "events", "jobs", "event_search")
    """``search`` picks the events related to a target block for its compact timeline."""

    def pending_blocks(self, *, retry_failed: bool, retry_skipped: bool) -> list[tuple[str, int]]:
        """(block id, thread position) of every target ready for (re)extraction, in order."""
        blocks, jobs = self.state.blocks, self.state.jobs.extraction
        ready = []
        for thread in blocks.conversation_threads():
            for position, block_id in enumerate(thread.block_ids[:-1], start=1):
                job = jobs.get(block_id)
                if (
                    job is None
                    or (job.status == "failed" and retry_failed)
                    or (job.status == "skipped" and retry_skipped and not job.skip_retried)
                ):
                    ready.append((block_id, position))
        return ready

    @handles(ExtractReady)
    def extract_ready(self, command: ExtractReady) -> list[EventCard]:
        """Run every ready extraction job; with no extractor configured, nothing happens."""
        self.refresh()
        retry_failed, retry_skipped = command.retry_failed, command.retry_skipped
        if retry_failed:
            self.recover()
        extractor = resolve("extractor", self.options.extractor)
        if extractor is None:
            return []
        extracted: list[EventCard] = []
        for block_id, position in self.pending_blocks(
            retry_failed=retry_failed, retry_skipped=retry_skipped
        ):
            job = self.state.jobs.extraction.get(block_id)
            record = self.state.blocks.blocks[block_id]
            if job is None and not record.summary.should_extract:
                self._append(
                    ExtractionSkipped(
                        block_id=block_id, reason=SUMMARIZER_SKIP, at=self.options.now()
                    )
                )
                continue
            extracted.extend(
                self._extract(extractor, block_id, position, (job.attempts if job else 0) + 1)
            )
        return extracted

    def _extract(
        self, extractor: ExtractorModel, block_id: str, position: int, attempt: int
    ) -> list[EventCard]:
        started = ExtractionStarted(
            block_id=block_id, attempt=attempt, worker=self.worker_token(), at=self.options.now()
        )
        local = is_local(extractor)
        pending = [started] if local else []  # see Sealer._seal
        if not local:
            self._append(started)

        def record(*events: DomainEvent) -> bool:
            """Append the outcome: with the claim (local), or under it (a model's)."""
            if local:
                self._append(*pending, *events)
                return True
            return self._append_claimed(
                lambda: events,
                lambda error: ExtractionFailed(
                    block_id=block_id, error=error, at=self.options.now()
                ),
            )

        view = self.view
        target = view.get_block(block_id)
        thread_id = target.thread_id
        blocks = self.state.blocks
        previous = blocks.block_at(thread_id, position - 1)
        following = blocks.block_at(thread_id, position + 1)
        assert following is not None, "a target is only ready once its next block is sealed"
        context = ExtractionContext(
            previous=view.get_block(previous.id) if previous else None,
            target=target,
            next=view.get_block(following.id),
            timeline=view.timeline(
                limit=self.options.timeline_limit or None,
                related_to=" ".join([target.l0_title, *target.l0_tags]),
            ),
        )
        try:
            result = validate_output(ExtractionResult, invoke(extractor, context), "extractor")
        except Exception as exc:
            record(
                ExtractionFailed(block_id=block_id, error=error_text(exc), at=self.options.now())
            )
            raise
        now = self.options.now()
        if not result.should_extract:
            reason = result.reason or "the extractor found nothing worth keeping"
            record(ExtractionSkipped(block_id=block_id, reason=reason, at=now))
            return []
        if not result.events:
            failure = ModelResponseError(
                f"extractor returned no valid events: {result.reason or 'no reason given'}"
            )
            record(ExtractionFailed(block_id=block_id, error=error_text(failure), at=now))
            raise failure
        existing = Taken(self.state.events.records)
        drawn = Taken(self.state.events.records)

        def draw() -> str:
            event_id = self.new_id("evt", drawn)
            drawn.add(event_id)
            return event_id

        cards = [
            self._card(proposed, block_id, target.l5_raw, existing, now, strict=False)
            for proposed in namespace_event_ids(result.events, draw)
        ]
        recorded = record(
            ExtractionSucceeded(block_id=block_id, reason=result.reason, events=cards, at=now),
            *self._supersessions(cards, now),
        )
        return [self.view.get_event(card.id) for card in cards] if recorded else []

    def _card(
        self,
        proposed: EventCardInput,
        block_id: str,
        messages: Sequence[CitableMessage],
        existing: Taken,
        at: datetime,
        *,
        strict: bool,
        fill_mentioned: bool = True,
        parts: StoredParts | None = None,
    ) -> CardData:
        """The stored card for ``proposed``, citing ``block_id``, validated once, in its stored
        form; its id joins ``existing``. Given ``parts`` (a batch, which holds every card until
        it is appended), the card shares its temporal part, weight and field-name sets."""
        values = card_values(
            proposed,
            block_id=block_id,
            block_messages=messages,
            existing_ids=existing,
            at=at,
            turn=self.state.blocks.turn,
            new_id=lambda prefix: self.new_id(prefix, existing),
            strict=strict,
            fill_mentioned=fill_mentioned,
        )
        if parts is None:
            card = CardData.model_validate(values)
        else:
            values["temporal"] = parts.get(TemporalData, values["temporal"])
            values["weight"] = parts.get(WeightData, values["weight"])
            card = CardData.model_validate(values)
            share_fields_set(card)
        existing.add(card.id)
        return card

    def _supersessions(
        self, cards: Sequence[CardData], at: datetime, batch: str | None = None
    ) -> list[EventSuperseded]:
        """``EventSuperseded`` for each older event a new card says it supersedes: an active
        stored event, or an earlier card of the same batch."""
        records = self.state.events.records
        earlier: set[str] = set()
        out = []
        for card in cards:
            for old_id in card.temporal.supersedes_event_ids if card.temporal else []:
                old = records.get(old_id)
                stored = old is not None and old.status == "active"
                if old_id != card.id and (stored or old_id in earlier):
                    out.append(
                        EventSuperseded(
                            event_id=old_id, superseded_by=card.id, import_batch_id=batch, at=at
                        )
                    )
            earlier.add(card.id)
        return out

    @handles(AddEvents)
    def add_events(self, command: AddEvents) -> list[EventCard]:
        """Callers' cards, appended together with their supersessions and the batch's one
        projection job (``batch_job_id``), in one commit: each source block must exist and a
        card may cite only its block's messages. From ``PAUSE_COLLECTOR_FROM`` cards the
        collector is paused meanwhile (``paused_gc``): a card leaves about ten long-lived
        objects and no garbage cycle, and left young they would be walked again and again."""
        if len(command.events) < PAUSE_COLLECTOR_FROM:
            return self._add_events(command)
        with paused_gc():
            return self._add_events(command)

    def _add_events(self, command: AddEvents) -> list[EventCard]:
        self.refresh()
        now = self.options.now()
        existing = Taken(self.state.events.records)
        batch = len(command.events) > 1
        parts = StoredParts() if batch else None
        cards: list[CardData] = []
        for card_input in command.events:
            block = self.state.blocks.blocks.get(card_input.source_block_id)
            if block is None:
                raise UnknownIdError(f"unknown source block id {card_input.source_block_id!r}")
            cards.append(
                self._card(
                    card_input, block.id, block.rows, existing, now, strict=True, parts=parts
                )
            )
        ids = [card.id for card in cards]
        events: list[DomainEvent] = [added_by_caller(card, now) for card in cards]
        events += self._supersessions(cards, now)
        events.append(batch_job(ids, now))
        self._append(*events)
        del cards, events  # folded: the returned cards are read back, not held twice meanwhile
        return [self.view.get_event(card_id) for card_id in ids]

    # -- external memory import -------------------------------------------------------------

    @handles(ImportExternal)
    def import_external(self, command: ImportExternal) -> ImportResult:
        """Append a decided import plan as one atomic batch (the rules: ``core.ingest``).

        Items imported meanwhile (same content hash) are skipped; a target that is no longer
        an existing event makes the whole import fail with nothing appended.
        """
        self.refresh()
        plan, decisions = command.plan, command.decisions
        if len(decisions) != len(plan.items):
            raise InvalidInputError("one decision per planned item is needed")
        planned = {item.message.id: item for item in plan.items}
        decision = decide_import(
            [
                DecidedItem(
                    digest=item.digest,
                    message_id=item.message.id,
                    candidate=item.candidate,
                    action=choice.action,
                    target_event_id=choice.target_event_id,
                    supersedes=tuple(item.item.supersedes),
                )
                for item, choice in zip(plan.items, decisions, strict=True)
            ],
            imported=self.state.events.imported_hashes(),
            events=self.state.events.records,
            active=ActiveEvents(self.state.events.records),
            skipped_before=plan.skipped_duplicates,
        )
        result = ImportResult(
            batch_id=plan.batch_id if decision.steps else None,
            source_block_id=plan.block_id if decision.steps else None,
            skipped_duplicates=decision.skipped_duplicates,
        )
        if not decision.steps:
            return result
        now = self.options.now()
        messages = [planned[step.item.message_id].message for step in decision.steps]
        events: list[DomainEvent] = [self._import_recorded(plan, messages, decision, now)]
        existing = Taken(self.state.events.records)
        for step in decision.steps:
            item, batch = step.item, plan.batch_id
            if step.card is None:
                if item.action == "merge":
                    assert item.target_event_id is not None
                    events.append(
                        EventMerged(
                            event_id=item.target_event_id,
                            source_message_id=item.message_id,
                            import_batch_id=batch,
                            at=now,
                        )
                    )
                    result.merged.append(item.target_event_id)
                else:
                    result.ignored.append(item.message_id)
                continue
            message = planned[item.message_id].message
            card = self._card(
                step.card,
                plan.block_id,
                [message],
                existing,
                now,
                strict=True,
                fill_mentioned=False,
            )
            events.append(EventAdded(event=card, origin="import", import_batch_id=batch, at=now))
            result.added.append(card.id)
            for old_id in step.replaces:
                events.append(
                    EventSuperseded(
                        event_id=old_id, superseded_by=card.id, import_batch_id=batch, at=now
                    )
                )
                result.superseded.append(old_id)
            if item.action == "conflict":
                result.conflicts.append(card.id)
        self._append(*events)
        return result

    @staticmethod
    def _import_recorded(
        plan: ImportPlan, messages: list[RawMessage], decision: ImportDecision, at: datetime
    ) -> ExternalImportRecorded:
        """The batch's own event: its source, its messages (one block) and their hashes."""
        layers = deterministic_layers(messages)
        return ExternalImportRecorded(
            batch_id=plan.batch_id,
            format=plan.format,
            source=plan.source,
            block_id=plan.block_id,
            messages=convert_all(MessageData, messages),
            summary=SummaryData(
                l0_title=f"Imported memory from {plan.source}",
                l0_tags=["import"],
                l1_summary=f"{len(messages)} memory items imported from {plan.source}.",
                l2_keypoints=[m.content[:160] for m in messages[:12]],
                should_extract=False,
            ),
            l3_condensed=layers.l3_condensed,
            l4_readable=layers.l4_readable,
            item_hashes=[step.item.digest for step in decision.steps],
            at=at,
        )

    @handles(UndoImport)
    def undo_import(self, command: UndoImport) -> bool:
        """Take an import batch's events out of retrieval (appended event); False if already undone."""
        self.refresh()
        batch_id = command.batch_id
        batch = self.state.events.imports.get(batch_id)
        if batch is None:
            raise UnknownIdError(f"unknown import batch id {batch_id!r}")
        if batch.undone:
            return False
        self._append(ExternalImportUndone(batch_id=batch_id, at=self.options.now()))
        return True

    def recover(self) -> int:
        """Jobs left running by a handle that is gone become failed (interrupted), ready for
        a retry."""
        self.refresh()
        running = [
            job.block_id
            for job in self.state.jobs.extraction.values()
            if job.status == "running" and self.abandoned(job.worker, job.updated_at)
        ]
        for block_id in running:
            self._append(ExtractionInterrupted(block_id=block_id, at=self.options.now()))
        return len(running)


__all__ = ["PAUSE_COLLECTOR_FROM", "SUMMARIZER_SKIP", "Extractor"]
