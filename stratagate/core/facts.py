"""Element-fact semantics, pure: plan what a projection changes, and views over time.

A projector proposes changes; ``plan_projection`` decides what is applied: a change is dropped
unless every cited event is in the claimed batch; elements are matched by normalised name or
alias within a type; ``state`` and ``relation`` facts replace the active fact of the same key by
closing its validity interval (the old fact is kept, ``superseded``); ``set`` facts add unique
items. The plan is recorded in the log and applied by the elements read model, so replay never
re-runs this matching.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field

from stratagate.models import (
    ElementCard,
    ElementFact,
    ElementProjectionChange,
    ElementType,
    Model,
    UtcDatetime,
)
from stratagate.timeutil import parse_datetime

_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$", re.UNICODE)


def normalize_name(name: str) -> str:
    """The matching key of a name: NFKC, case-folded, single spaces, no edge punctuation."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = " ".join(text.split())
    return _EDGE_PUNCT.sub("", text)


class NewElement(Model):
    """An element the plan creates."""

    id: str
    name: str
    type: ElementType
    aliases: list[str] = Field(default_factory=list)


class AliasAdded(Model):
    """A new alias for an existing element."""

    element_id: str
    alias: str


class FactAdded(Model):
    """A fact the plan adds to an element."""

    element_id: str
    fact: ElementFact


class FactClosed(Model):
    """An active fact replaced by a newer one: its validity interval ends, the fact stays."""

    element_id: str
    fact_id: str
    valid_to: UtcDatetime | None
    replaced_by: str


class DroppedChange(Model):
    """A proposed change that was not applied, and why."""

    index: int
    reason: str
    element_name: str
    key: str


class ProjectionPlan(Model):
    """Everything one completed projection applies, in order."""

    elements_created: list[NewElement] = Field(default_factory=list)
    aliases_added: list[AliasAdded] = Field(default_factory=list)
    facts_closed: list[FactClosed] = Field(default_factory=list)
    facts_added: list[FactAdded] = Field(default_factory=list)
    dropped: list[DroppedChange] = Field(default_factory=list)

    @property
    def element_ids(self) -> list[str]:
        """Ids of every element the plan touches, in first-touched order."""
        return touched_elements(self)


def touched_elements(plan: Any) -> list[str]:
    """Ids of every element a plan (or its stored form) touches, in first-touched order."""
    seen: dict[str, None] = {}
    for new in plan.elements_created:
        seen.setdefault(new.id, None)
    for item in (*plan.aliases_added, *plan.facts_added):
        seen.setdefault(item.element_id, None)
    return list(seen)


class _Draft:
    """Mutable working copy of one element while a plan is being decided."""

    def __init__(self, element_id: str, name: str, type_: str, aliases: Iterable[str]) -> None:
        self.id = element_id
        self.name = name
        self.type = type_
        self.aliases = list(aliases)
        self.active: list[ElementFact] = []

    def names(self) -> set[str]:
        return {normalize_name(self.name), *(normalize_name(a) for a in self.aliases)}


def plan_projection(
    existing: Sequence[ElementCard],
    changes: Sequence[ElementProjectionChange],
    batch_event_ids: Collection[str],
    *,
    at: datetime,
    new_id: Callable[[str], str],
    event_times: Mapping[str, datetime | None] | None = None,
) -> ProjectionPlan:
    """Decide which of ``changes`` apply to ``existing`` elements, and how.

    ``event_times`` gives each batch event's time (happened, else mentioned); a change without
    ``valid_from`` starts at the latest time of its cited events, else at ``at``.
    """
    batch = set(batch_event_ids)
    times = event_times or {}
    drafts: list[_Draft] = []
    for card in existing:
        draft = _Draft(card.id, card.name, card.type, card.aliases)
        draft.active = [fact for fact in card.facts if fact.status == "active"]
        drafts.append(draft)
    plan = ProjectionPlan()
    for index, change in enumerate(changes):
        outside = [event_id for event_id in change.source_event_ids if event_id not in batch]
        if outside:
            plan.dropped.append(
                _dropped(
                    index, change, f"cites events outside the claimed batch: {', '.join(outside)}"
                )
            )
            continue
        matched = _match(drafts, change)
        if matched is None:
            draft = _Draft(new_id("elem"), change.element.name.strip(), change.element.type, [])
            drafts.append(draft)
            plan.elements_created.append(
                NewElement(id=draft.id, name=draft.name, type=change.element.type)
            )
        else:
            draft = matched
        for alias in (change.element.name, *change.element.aliases):
            if normalize_name(alias) and normalize_name(alias) not in draft.names():
                draft.aliases.append(alias.strip())
                plan.aliases_added.append(AliasAdded(element_id=draft.id, alias=alias.strip()))
        _apply_change(plan, draft, index, change, at=at, new_id=new_id, times=times)
    return plan


def _dropped(index: int, change: ElementProjectionChange, reason: str) -> DroppedChange:
    return DroppedChange(
        index=index, reason=reason, element_name=change.element.name, key=change.key
    )


def _match(drafts: Sequence[_Draft], change: ElementProjectionChange) -> _Draft | None:
    wanted = {
        normalize_name(change.element.name),
        *(normalize_name(a) for a in change.element.aliases),
    }
    wanted.discard("")
    for draft in drafts:
        if draft.type == change.element.type and draft.names() & wanted:
            return draft
    return None


def _valid_from(
    change: ElementProjectionChange, at: datetime, times: Mapping[str, datetime | None]
) -> datetime:
    if change.valid_from is not None:
        return parse_datetime(change.valid_from)
    known = [t for t in (times.get(e) for e in change.source_event_ids) if t is not None]
    return max(known) if known else at


def _apply_change(
    plan: ProjectionPlan,
    draft: _Draft,
    index: int,
    change: ElementProjectionChange,
    *,
    at: datetime,
    new_id: Callable[[str], str],
    times: Mapping[str, datetime | None],
) -> None:
    mode = change.effective_mode
    valid_from = _valid_from(change, at, times)
    valid_to = parse_datetime(change.valid_to) if change.valid_to is not None else None

    def new_fact(value: str) -> ElementFact:
        return ElementFact(
            id=new_id("fact"),
            key=change.key,
            mode=mode,
            value=value,
            valid_from=valid_from,
            valid_to=valid_to,
            source_event_ids=list(change.source_event_ids),
            confidence=change.confidence,
            status="active",
            created_at=at,
            updated_at=at,
        )

    def add(fact: ElementFact) -> None:
        draft.active.append(fact)
        plan.facts_added.append(FactAdded(element_id=draft.id, fact=fact))

    same_key = [fact for fact in draft.active if fact.key == change.key and fact.mode == mode]
    if mode == "set":
        values = change.value if isinstance(change.value, list) else [change.value]
        present = {normalize_name(str(fact.value)) for fact in same_key}
        fresh = []
        for item in values:
            key = normalize_name(item)
            if key and key not in present:
                present.add(key)
                fresh.append(item.strip())
        if not fresh:
            plan.dropped.append(_dropped(index, change, "every item is already in the set"))
        for value in fresh:
            add(new_fact(value))
        return
    value = change.value if isinstance(change.value, str) else ", ".join(change.value)
    if any(_same_value(fact.value, value) for fact in same_key):
        plan.dropped.append(_dropped(index, change, "the active fact already has this value"))
        return
    fact = new_fact(value.strip())
    for old in same_key:
        end = max(valid_from, old.valid_from) if old.valid_from is not None else valid_from
        draft.active.remove(old)
        plan.facts_closed.append(
            FactClosed(element_id=draft.id, fact_id=old.id, valid_to=end, replaced_by=fact.id)
        )
    add(fact)


def _same_value(left: str | list[str], right: str) -> bool:
    text = left if isinstance(left, str) else ", ".join(left)
    return normalize_name(text) == normalize_name(right)


def facts_as_of(facts: Iterable[ElementFact], at: datetime) -> list[ElementFact]:
    """The facts valid at ``at`` (world time), each shown with the status it had then."""
    moment = parse_datetime(at)
    view = []
    for fact in facts:
        starts = fact.valid_from is None or fact.valid_from <= moment
        ends = fact.valid_to is not None and fact.valid_to <= moment
        if starts and not ends and fact.status != "disputed":
            view.append(
                fact.model_copy(update={"status": "active"}) if fact.status != "active" else fact
            )
    return view


def current_state(facts: Iterable[ElementFact]) -> dict[str, str | list[str]]:
    """Key → value of the active facts: one value for state/relation, the items for a set."""
    state: dict[str, str | list[str]] = {}
    for fact in sorted(facts, key=_fact_order):
        if fact.status != "active":
            continue
        if fact.mode == "set":
            items = state.setdefault(fact.key, [])
            assert isinstance(items, list)
            items.extend(fact.value if isinstance(fact.value, list) else [fact.value])
        else:
            state[fact.key] = fact.value
    return state


def _fact_order(fact: ElementFact) -> tuple[datetime, datetime, str]:
    start = fact.valid_from or fact.created_at
    return start, fact.created_at, fact.id


def projection_diagnostic(plan: ProjectionPlan, event_count: int, reason: str) -> str | None:
    """The spec's "0 changes projected from N events: reason" line when nothing was applied."""
    if plan.facts_added:
        return None
    why = (
        reason.strip()
        or "; ".join(d.reason for d in plan.dropped)
        or "the projector proposed no changes"
    )
    return f"0 changes projected from {event_count} events: {why}"


__all__ = [
    "AliasAdded",
    "DroppedChange",
    "FactAdded",
    "FactClosed",
    "NewElement",
    "ProjectionPlan",
    "current_state",
    "facts_as_of",
    "normalize_name",
    "plan_projection",
    "projection_diagnostic",
]
