"""The weight keeper: logs retrieval batches and assessments, records use, and governs
events (pin, forget, restore, archive).

A search never reinforces: its batch only sets ``last_retrieved_at``. Recorded use reinforces,
once per receipt id, and — when the audit names a batch — only refs that passed a
``sufficient`` assessment of that batch. Queries are answered by the reader
(``stratagate.actors.reader``), which is hosted beside this role and asks it to log batches.
"""

from __future__ import annotations

from collections.abc import Collection

from stratagate.actors.erasure import Erasure
from stratagate.actors.role import handles
from stratagate.core.gate import normalize_assessment
from stratagate.errors import InvalidInputError, ReceiptConflictError, UnknownIdError
from stratagate.events import (
    WEIGHTS,
    AssessmentRecorded,
    EventArchived,
    EventForgotten,
    EventPinned,
    EventRestored,
    EventUnpinned,
    LogCheckpointed,
    MemoryUseRecorded,
    RetrievalBatchRecorded,
)
from stratagate.events.payloads import AssessmentData, ReceiptData, convert
from stratagate.messages import (
    Assess,
    Govern,
    LogCheckpoint,
    RecordBatch,
    RecordUse,
)
from stratagate.models import EventCard, RetrievalAssessment, UsageAudit, UsageReceipt


class WeightKeeper(Erasure):
    """The only writer of the weights stream: retrieval batches, assessments, recorded use,
    governance and signed checkpoints here; erasure is its part in ``actors/erasure.py``."""

    name = host = "weights"
    stream = WEIGHTS
    components = ("blocks", "decay", "events", "weights", "jobs", "elements", "search")
    """Every read model: the reader it hosts answers every query from the same state."""

    @handles(RecordBatch)
    def record_batch(self, command: RecordBatch) -> str:
        """Log a retrieval batch; its id is what the evidence gate and receipts cite."""
        self.refresh()
        batch_id = self.new_id("batch", self.state.weights.batches)
        self._append(
            RetrievalBatchRecorded(
                batch_id=batch_id,
                kind=command.kind,
                query=command.query,
                options=command.options,
                refs=list(dict.fromkeys(command.refs)),
                event_ids=list(dict.fromkeys(command.event_ids)),
                element_ids=list(dict.fromkeys(command.element_ids)),
                at=self.options.now(),
            ),
            # A batch need not wait for the disk: anything that cites it (an assessment, a
            # receipt) is a durable commit that, being later in the write-ahead log, makes the
            # batch durable first. A power cut can lose only batches nothing cites yet.
            durable=False,
        )
        return batch_id

    @handles(Assess)
    def assess(self, command: Assess) -> RetrievalAssessment:
        """Normalise an assessment against a logged batch (or explicit refs) and log it."""
        self.refresh()
        batch_id = command.batch_id
        refs: Collection[str]
        if batch_id is not None:
            record = self.state.weights.batches.get(batch_id)
            if record is None:
                raise UnknownIdError(f"unknown retrieval batch id {batch_id!r}")
            refs = record.refs
        else:
            refs = [str(ref) for ref in command.refs or ()]
        assessment = normalize_assessment(command.raw, refs, batch_id=batch_id)
        self._append(
            AssessmentRecorded(
                assessment_id=self.options.make_id("assess"),
                batch_id=batch_id,
                assessment=convert(AssessmentData, assessment),
                at=self.options.now(),
            )
        )
        return assessment

    # -- adoption ---------------------------------------------------------------------------

    @handles(RecordUse)
    def record_use(self, command: RecordUse) -> UsageReceipt:
        """Record that an answer used these memories (see the module rule on batches)."""
        self.refresh()
        receipt_id = command.receipt_id
        events = list(dict.fromkeys(command.event_ids))
        elements = list(dict.fromkeys(command.element_ids))
        audit_model = command.audit
        if receipt_id is None:
            if self.options.persistent:
                raise InvalidInputError(
                    "record_memory_use needs a stable receipt_id in persistent mode"
                )
            receipt_id = self.new_id("use", self.state.weights.receipts)
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
            raise ReceiptConflictError(
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
        self._append(
            MemoryUseRecorded(receipt=convert(ReceiptData, receipt), at=receipt.created_at)
        )
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

    @handles(Govern)
    def govern(self, command: Govern) -> EventCard:
        """Pin, unpin, forget, restore or archive an event (nothing is appended when it already
        was so); answers the card as it now is."""
        self.refresh()
        action, event_id = command.action, command.event_id
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
        return self.view.get_event(event_id)

    @handles(LogCheckpoint)
    def log_checkpoint(self, command: LogCheckpoint) -> None:
        """Log the signed head an anchor recorded (``LogCheckpointed``; its stored field for
        the signature is named ``seal``)."""
        self.refresh()
        self._append(
            LogCheckpointed(
                position=command.position,
                head_hash=command.head_hash,
                seal=command.signature,
                at=self.options.now(),
            )
        )


__all__ = ["WeightKeeper"]
