"""Weights and the retrieval audit trail: adoption counts, pins, batches, assessments, receipts.

Only recorded use reinforces (``mention_count`` + 1, decay anchor moved to the receipt's turn);
a retrieval batch only sets ``last_retrieved_at``.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field

from projections.card_rows import WeightCache
from projections.lazy import LazyMap, keyed_of
from projections.read_model import (
    ReadModel,
    Record,
    dump_records,
    handles,
    load_records,
)
from projections.shared import Pool
from stratagate.events import (
    AssessmentRecorded,
    EventAdded,
    EventPinned,
    EventUnpinned,
    ExtractionSucceeded,
    MemoryUseRecorded,
    ProjectionCompleted,
    Recorded,
    RetrievalBatchRecorded,
    TurnAppended,
)
from stratagate.events.payloads import convert
from stratagate.models import MemoryWeight, RetrievalAssessment, UsageReceipt, UtcDatetime


class BatchRecord(Record):
    """A logged retrieval batch: what was asked and which refs came back."""

    batch_id: str
    kind: str
    query: str
    options: dict[str, Any] = Field(default_factory=dict)
    refs: list[str]
    at: UtcDatetime
    sufficient_refs: list[str] = Field(default_factory=list)
    """Refs accepted by a ``sufficient`` assessment of this batch (the adoption rule reads it)."""
    assessment_ids: list[str] = Field(default_factory=list)


class AssessmentRecord(Record):
    """A logged, normalised assessment."""

    assessment_id: str
    batch_id: str | None
    assessment: RetrievalAssessment
    at: UtcDatetime


class WeightsModel(ReadModel):
    """Weight state of every event and element, and the retrieval/adoption audit trail."""

    name = "weights"
    version = 2
    """2: weights as ``[memory id, weight]`` rows, built a chunk at a time on first read
    after a restore (``projections.lazy``)."""
    keyed_sections = frozenset({"weights"})

    def __init__(self) -> None:
        self.turn = 0
        self.weights: LazyMap[MemoryWeight] = LazyMap()
        self.batches: dict[str, BatchRecord] = {}
        self.assessments: dict[str, AssessmentRecord] = {}
        self.receipts: dict[str, UsageReceipt] = {}
        self._initial: Pool[MemoryWeight] = Pool()
        """Equal weights as one instance (weights are replaced, never changed in place)."""
        self._stored = WeightCache(self._initial)
        """A stored card's initial weight as the API's, validated once per distinct value."""

    @handles(TurnAppended)
    def _turn(self, event: TurnAppended, _: Recorded) -> None:
        self.turn = event.turn

    @handles(ExtractionSucceeded)
    def _extracted(self, event: ExtractionSucceeded, _: Recorded) -> None:
        for card in event.events:
            self.weights[card.id] = self._stored.get(card.weight)

    @handles(EventAdded)
    def _added(self, event: EventAdded, _: Recorded) -> None:
        self.weights[event.event.id] = self._stored.get(event.event.weight)

    @handles(ProjectionCompleted)
    def _projected(self, event: ProjectionCompleted, _: Recorded) -> None:
        for element in event.plan.elements_created:
            self.weights[element.id] = MemoryWeight(last_adopted_turn=self.turn)

    @handles(EventPinned, EventUnpinned)
    def _pin(self, event: EventPinned | EventUnpinned, _: Recorded) -> None:
        weight = self.weights[event.event_id]
        pinned = isinstance(event, EventPinned)
        self.weights[event.event_id] = weight.model_copy(update={"pinned": pinned})

    @handles(RetrievalBatchRecorded)
    def _batch(self, event: RetrievalBatchRecorded, _: Recorded) -> None:
        self.batches[event.batch_id] = BatchRecord(
            batch_id=event.batch_id,
            kind=event.kind,
            query=event.query,
            options=event.options,
            refs=event.refs,
            at=event.at,
        )
        for memory_id in (*event.event_ids, *event.element_ids):
            weight = self.weights.get(memory_id)
            if weight is not None:
                self.weights[memory_id] = weight.model_copy(update={"last_retrieved_at": event.at})

    @handles(AssessmentRecorded)
    def _assessed(self, event: AssessmentRecorded, _: Recorded) -> None:
        self.assessments[event.assessment_id] = AssessmentRecord(
            assessment_id=event.assessment_id,
            batch_id=event.batch_id,
            assessment=convert(RetrievalAssessment, event.assessment),
            at=event.at,
        )
        batch = self.batches.get(event.batch_id) if event.batch_id else None
        if batch is None:
            return
        batch.assessment_ids.append(event.assessment_id)
        if event.assessment.verdict == "sufficient":
            fresh = [r for r in event.assessment.evidence_refs if r not in batch.sufficient_refs]
            batch.sufficient_refs.extend(fresh)

    @handles(MemoryUseRecorded)
    def _used(self, event: MemoryUseRecorded, _: Recorded) -> None:
        receipt = convert(UsageReceipt, event.receipt)
        self.receipts[receipt.id] = receipt
        for memory_id in (*receipt.reinforced_event_ids, *receipt.reinforced_element_ids):
            weight = self.weights.get(memory_id)
            if weight is not None:
                self.weights[memory_id] = weight.model_copy(
                    update={
                        "mention_count": weight.mention_count + 1,
                        "last_adopted_turn": receipt.turn,
                    }
                )

    def snapshot(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "weights": [
                [key, value.model_dump(mode="json")] for key, value in self.weights.items()
            ],
            "batches": dump_records(self.batches, BatchRecord),
            "assessments": dump_records(self.assessments, AssessmentRecord),
            "receipts": dump_records(self.receipts, UsageReceipt),
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.turn = data["turn"]
        model.weights = keyed_of(data, "weights", lambda row: model._stored.restored(row[1]))
        model.batches = load_records(BatchRecord, data["batches"])
        model.assessments = load_records(AssessmentRecord, data["assessments"])
        model.receipts = load_records(UsageReceipt, data["receipts"])
        return model


__all__ = ["AssessmentRecord", "BatchRecord", "WeightsModel"]
