"""Element-fact semantics: batch provenance, alias matching, state/set/relation, views in time."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.facts import (
    FactAdded,
    ProjectionPlan,
    current_state,
    facts_as_of,
    normalize_name,
    plan_projection,
    projection_diagnostic,
)
from stratagate.models import ElementCard, ElementFact, ElementProjectionChange

AT = datetime(2026, 3, 1, tzinfo=UTC)


def ids() -> Any:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter)}"


def change(
    name: str,
    key: str,
    value: Any,
    *,
    op: str = "set_state",
    type_: str = "project",
    events=("e1",),
    **extra: Any,
) -> ElementProjectionChange:
    return ElementProjectionChange(
        element={"name": name, "type": type_, "aliases": extra.pop("aliases", [])},
        operation=op,
        key=key,
        value=value,
        source_event_ids=list(events),
        **extra,
    )


def apply(existing: list[ElementCard], plan: ProjectionPlan) -> list[ElementCard]:
    """A test-side fold of a plan into cards (the read model does the same)."""
    cards = {card.id: card for card in existing}
    for new in plan.elements_created:
        cards[new.id] = ElementCard(
            id=new.id, name=new.name, type=new.type, created_at=AT, updated_at=AT
        )
    for alias in plan.aliases_added:
        card = cards[alias.element_id]
        cards[card.id] = card.model_copy(update={"aliases": [*card.aliases, alias.alias]})
    for added in plan.facts_added:
        card = cards[added.element_id]
        cards[card.id] = card.model_copy(update={"facts": [*card.facts, added.fact]})
    for closed in plan.facts_closed:
        card = cards[closed.element_id]
        facts = [
            f.model_copy(update={"valid_to": closed.valid_to, "status": "superseded"})
            if f.id == closed.fact_id
            else f
            for f in card.facts
        ]
        cards[card.id] = card.model_copy(update={"facts": facts})
    return [c.model_copy(update={"current_state": current_state(c.facts)}) for c in cards.values()]


def test_changes_citing_events_outside_the_batch_are_dropped() -> None:
    plan = plan_projection(
        [], [change("app", "uses", "npm", events=("e1", "e9"))], {"e1"}, at=AT, new_id=ids()
    )
    assert plan.facts_added == [] and plan.elements_created == []
    assert "e9" in plan.dropped[0].reason
    assert projection_diagnostic(plan, 1, "").startswith("0 changes projected from 1 events: ")


def test_state_replacement_closes_the_old_fact_and_keeps_it() -> None:
    new_id = ids()
    first = plan_projection(
        [], [change("app", "uses", "npm", valid_from="2026-01-05")], {"e1"}, at=AT, new_id=new_id
    )
    cards = apply([], first)
    second = plan_projection(
        cards,
        [change("App", "uses", "pnpm", events=("e2",), valid_from="2026-02-10")],
        {"e2"},
        at=AT,
        new_id=new_id,
    )
    assert second.elements_created == []  # matched by normalised name
    (closed,) = second.facts_closed
    assert closed.valid_to == datetime(2026, 2, 10, tzinfo=UTC)
    assert closed.replaced_by == second.facts_added[0].fact.id
    card = apply(cards, second)[0]
    assert card.current_state == {"uses": "pnpm"}
    assert [f.status for f in card.facts] == ["superseded", "active"]
    assert current_state(facts_as_of(card.facts, "2026-01-20")) == {"uses": "npm"}
    assert current_state(facts_as_of(card.facts, "2026-03-01")) == {"uses": "pnpm"}
    assert facts_as_of(card.facts, "2025-12-31") == []


def test_restating_the_active_value_adds_nothing() -> None:
    cards = apply(
        [], plan_projection([], [change("app", "uses", "npm")], {"e1"}, at=AT, new_id=ids())
    )
    again = plan_projection(
        cards, [change("app", "uses", " NPM ", events=("e2",))], {"e2"}, at=AT, new_id=ids()
    )
    assert again.facts_added == [] and again.facts_closed == []
    assert again.dropped[0].reason == "the active fact already has this value"


def test_set_items_are_unique_and_accumulate() -> None:
    new_id = ids()
    cards = apply(
        [],
        plan_projection(
            [],
            [change("lin", "likes", ["tea", "Tea", "rain"], op="add_set_item", type_="person")],
            {"e1"},
            at=AT,
            new_id=new_id,
        ),
    )
    more = plan_projection(
        cards,
        [
            change("Lin", "likes", "tea", op="add_set_item", type_="person", events=("e2",)),
            change("lin", "likes", "jazz", op="add_set_item", type_="person", events=("e2",)),
        ],
        {"e2"},
        at=AT,
        new_id=new_id,
    )
    assert [a.fact.value for a in more.facts_added] == ["jazz"]
    assert apply(cards, more)[0].current_state == {"likes": ["tea", "rain", "jazz"]}


def test_aliases_match_within_a_type_only() -> None:
    new_id = ids()
    cards = apply(
        [],
        plan_projection(
            [],
            [
                change(
                    "Northridge Ecology Institute",
                    "client_of",
                    "fieldnotes",
                    op="set_relation",
                    type_="organization",
                    aliases=["NEI"],
                )
            ],
            {"e1"},
            at=AT,
            new_id=new_id,
        ),
    )
    assert cards[0].aliases == ["NEI"]
    same = plan_projection(
        cards,
        [change("nei", "hq", "Kunming", type_="organization", events=("e2",))],
        {"e2"},
        at=AT,
        new_id=new_id,
    )
    assert same.elements_created == []
    other_type = plan_projection(
        cards,
        [change("NEI", "status", "active", type_="project", events=("e2",))],
        {"e2"},
        at=AT,
        new_id=new_id,
    )
    assert [e.type for e in other_type.elements_created] == ["project"]


def test_valid_from_defaults_to_the_cited_event_time() -> None:
    plan = plan_projection(
        [],
        [change("app", "uses", "npm", events=("e1", "e2"))],
        {"e1", "e2"},
        at=AT,
        new_id=ids(),
        event_times={
            "e1": datetime(2026, 1, 1, tzinfo=UTC),
            "e2": datetime(2026, 1, 9, tzinfo=UTC),
        },
    )
    assert plan.facts_added[0].fact.valid_from == datetime(2026, 1, 9, tzinfo=UTC)


@given(st.lists(st.sampled_from(["npm", "pnpm", "yarn", "bun"]), min_size=1, max_size=8))
def test_one_active_state_per_key_whatever_the_history(values: list[str]) -> None:
    new_id = ids()
    cards: list[ElementCard] = []
    for i, value in enumerate(values):
        event = f"e{i}"
        cards = apply(
            cards,
            plan_projection(
                cards,
                [change("app", "uses", value, events=(event,))],
                {event},
                at=AT,
                new_id=new_id,
            ),
        )
    facts = cards[0].facts
    assert sum(f.status == "active" for f in facts) == 1
    assert cards[0].current_state == {"uses": facts[-1].value}
    assert all(f.valid_to is not None for f in facts if f.status == "superseded")


def test_normalize_name() -> None:
    assert normalize_name("  Ｐｎｐｍ!! ") == "pnpm"
    assert normalize_name("Dr.  Helen  Okafor") == "dr. helen okafor"


def test_plan_element_ids_in_touch_order() -> None:
    fact = ElementFact(
        id="f",
        key="k",
        mode="state",
        value="v",
        source_event_ids=["e"],
        created_at=AT,
        updated_at=AT,
    )
    plan = ProjectionPlan(
        facts_added=[FactAdded(element_id="b", fact=fact), FactAdded(element_id="a", fact=fact)]
    )
    assert plan.element_ids == ["b", "a"]
