"""Element views: people, projects, organizations, tools and places as facts over time.

The fold applies exactly the plan a ``ProjectionCompleted`` recorded: new elements, aliases,
closed facts (validity interval ended, fact kept as ``superseded``) and added facts. Views as
of a time and the current state are computed on read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from pydantic import Field

from projections.cards import EventsModel
from projections.read_model import ReadModel, Record, dump_records, handles, load_records
from stratagate.core.facts import current_state, facts_as_of, normalize_name
from stratagate.events import ProjectionCompleted, Recorded
from stratagate.events.payloads import convert
from stratagate.models import (
    ElementCard,
    ElementFact,
    ElementType,
    MemoryWeight,
    UtcDatetime,
)


class ElementRecord(Record):
    """One element and every fact it ever had, in the order they were added."""

    id: str
    name: str
    type: ElementType
    aliases: list[str] = Field(default_factory=list)
    facts: list[ElementFact] = Field(default_factory=list)
    source_event_ids: list[str] = Field(default_factory=list)
    source_message_ids: list[str] = Field(default_factory=list)
    created_at: UtcDatetime
    updated_at: UtcDatetime

    def names(self) -> list[str]:
        """Name then aliases."""
        return [self.name, *self.aliases]

    def card(self, weight: MemoryWeight, *, at: datetime | None = None) -> ElementCard:
        """The API view, now or as of ``at`` (world time)."""
        facts = self.facts if at is None else facts_as_of(self.facts, at)
        return ElementCard(
            id=self.id,
            name=self.name,
            type=self.type,
            aliases=self.aliases,
            current_state=current_state(facts),
            facts=facts,
            source_event_ids=self.source_event_ids,
            source_message_ids=self.source_message_ids,
            weight=weight,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )


class ElementsModel(ReadModel):
    """Every element by id, and where each fact lives."""

    name = "elements"

    def __init__(self) -> None:
        self.elements: dict[str, ElementRecord] = {}
        self.fact_owner: dict[str, str] = {}
        self._events: EventsModel | None = None

    def bind(self, models: dict[str, ReadModel]) -> None:
        events = models.get("events")
        self._events = events if isinstance(events, EventsModel) else None

    @handles(ProjectionCompleted)
    def _completed(self, event: ProjectionCompleted, _: Recorded) -> None:
        """Apply a plan: new elements, aliases, added facts, then closures (a closure may end a
        fact the same plan added, so additions come first)."""
        plan = event.plan
        for new in plan.elements_created:
            self.elements[new.id] = ElementRecord(
                id=new.id,
                name=new.name,
                type=new.type,
                aliases=list(new.aliases),
                created_at=event.at,
                updated_at=event.at,
            )
        for alias in plan.aliases_added:
            element = self.elements[alias.element_id]
            element.aliases.append(alias.alias)
            element.updated_at = event.at
        for added in plan.facts_added:
            element = self.elements[added.element_id]
            element.facts.append(convert(ElementFact, added.fact))
            self.fact_owner[added.fact.id] = element.id
            for event_id in added.fact.source_event_ids:
                if event_id not in element.source_event_ids:
                    element.source_event_ids.append(event_id)
                for message_id in self._source_messages(event_id):
                    if message_id not in element.source_message_ids:
                        element.source_message_ids.append(message_id)
            element.updated_at = event.at
        for closed in plan.facts_closed:
            element = self.elements[closed.element_id]
            element.facts = [
                fact.model_copy(
                    update={
                        "valid_to": closed.valid_to,
                        "status": "superseded",
                        "updated_at": event.at,
                    }
                )
                if fact.id == closed.fact_id
                else fact
                for fact in element.facts
            ]
            element.updated_at = event.at

    def _source_messages(self, event_id: str) -> list[str]:
        if self._events is None or event_id not in self._events.records:
            return []
        return list(self._events.records[event_id].card.source_message_ids)

    # -- queries ----------------------------------------------------------------------------

    def find(self, name: str, type_: str | None = None) -> list[ElementRecord]:
        """Elements whose name or alias normalises to ``name`` (optionally of one type)."""
        wanted = normalize_name(name)
        return [
            element
            for element in self.elements.values()
            if (type_ is None or element.type == type_)
            and wanted in {normalize_name(n) for n in element.names()}
        ]

    def fact(self, fact_id: str) -> tuple[ElementRecord, ElementFact]:
        """A fact and the element that owns it."""
        element = self.elements[self.fact_owner[fact_id]]
        return element, next(f for f in element.facts if f.id == fact_id)

    def snapshot(self) -> dict[str, Any]:
        return {"elements": dump_records(self.elements, ElementRecord)}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Self:
        model = cls()
        model.elements = load_records(ElementRecord, data["elements"])
        model.fact_owner = {
            fact.id: element.id for element in model.elements.values() for fact in element.facts
        }
        return model


__all__ = ["ElementRecord", "ElementsModel"]
