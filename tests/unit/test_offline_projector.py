"""The offline element projector: people, state keys that supersede, batch-only provenance."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from ray import cloudpickle

from stratagate.models import (
    ElementCard,
    ElementProjectionContext,
    EventCard,
    EventTemporal,
)
from stratagate.offline import offline_element_projector
from stratagate.offline.projector import SHARED_PROJECT, project_elements

NOW = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)


def _event(
    eid: str,
    summary: str,
    *,
    event_type: str = "change",
    participants: tuple[str, ...] = ("Alice",),
    criticality: str = "routine",
    happened: str | None = None,
) -> EventCard:
    return EventCard(
        id=eid, title=summary.rstrip("."), summary=summary, source_block_id="blk-1",
        source_message_ids=["m1"], criticality=criticality,  # type: ignore[arg-type]
        temporal=EventTemporal(
            mentioned_at="2023-05-25T13:14:00.000000Z", happened_start=happened,
            happened_end=happened, participants=list(participants), event_type=event_type,
            status="occurred",
        ),
        created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def _element(name: str, kind: str, state: dict[str, str]) -> ElementCard:
    return ElementCard(
        id=f"elem-{name}", name=name, type=kind, current_state=state,  # type: ignore[arg-type]
        created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def _states(ctx: ElementProjectionContext) -> list[tuple[str, str, str, str]]:
    return [
        (c.element.type, c.element.name, c.key, str(c.value))
        for c in project_elements(ctx).changes
        if c.operation == "set_state"
    ]


def test_a_known_tool_switch_sets_its_category_key_on_the_shared_project() -> None:
    ctx = ElementProjectionContext(
        job_id="proj-1",
        events=[_event("evt-1", "We switched from npm to pnpm last week.", happened="2023-05-15")],
    )
    changes = project_elements(ctx).changes
    state = [c for c in changes if c.operation == "set_state" and c.element.type == "project"]
    assert [(c.element.name, c.key, c.value, c.valid_from) for c in state] == [
        (SHARED_PROJECT, "package_manager", "pnpm", "2023-05-15")
    ]
    assert ("tool", "npm", "replaced_by", "pnpm") in _states(ctx)


def test_a_later_switch_proposes_the_same_key_so_it_supersedes_the_earlier_state() -> None:
    first = ElementProjectionContext(
        job_id="proj-1", events=[_event("evt-1", "We decided to use Zork for builds.")]
    )
    assert ("project", SHARED_PROJECT, "uses", "Zork") in _states(first)
    existing = [_element(SHARED_PROJECT, "project", {"build_tool": "Zork"})]
    later = ElementProjectionContext(
        job_id="proj-2",
        events=[_event("evt-2", "We switched from Zork to Blip.")],
        existing_elements=existing,
    )
    assert ("project", SHARED_PROJECT, "build_tool", "Blip") in _states(later)


def test_two_switches_in_one_batch_chain_on_one_key() -> None:
    ctx = ElementProjectionContext(
        job_id="proj-1",
        events=[
            _event("evt-1", "I started using Zork at work."),
            _event("evt-2", "I switched from Zork to Blip."),
        ],
    )
    person = [s for s in _states(ctx) if s[0] == "person"]
    assert person == [("person", "Alice", "uses", "Zork"), ("person", "Alice", "uses", "Blip")]


def test_a_chain_of_switches_in_one_batch_follows_the_existing_key() -> None:
    ctx = ElementProjectionContext(
        job_id="proj-3",
        events=[
            _event("evt-1", "We switched from Zork to Blip."),
            _event("evt-2", "We switched from Blip to Quux."),
        ],
        existing_elements=[_element(SHARED_PROJECT, "project", {"build_tool": "Zork"})],
    )
    project = [s for s in _states(ctx) if s[0] == "project"]
    assert project == [
        ("project", SHARED_PROJECT, "build_tool", "Blip"),
        ("project", SHARED_PROJECT, "build_tool", "Quux"),
    ]


def test_chinese_switch_sentences_project_too() -> None:
    ctx = ElementProjectionContext(job_id="p", events=[_event("evt-1", "我们从npm改用pnpm了。")])
    assert ("project", SHARED_PROJECT, "package_manager", "pnpm") in _states(ctx)


def test_moving_to_a_place_sets_a_location_and_a_place_element() -> None:
    ctx = ElementProjectionContext(job_id="p", events=[_event("evt-1", "I moved to Berlin.")])
    changes = project_elements(ctx).changes
    assert ("person", "Alice", "location", "Berlin") in _states(ctx)
    assert any(c.element.type == "place" and c.element.name == "Berlin" for c in changes)


def test_participants_preferences_and_identity_go_to_people() -> None:
    ctx = ElementProjectionContext(
        job_id="p",
        events=[
            _event("evt-1", "I love painting sunsets.", event_type="preference",
                   criticality="preference", participants=("Alice", "Bob")),
            _event("evt-2", "I'm a counselor at the center.", event_type="identity",
                   criticality="identity"),
        ],
    )  # fmt: skip
    sets = {
        (c.element.name, c.key, str(c.value))
        for c in project_elements(ctx).changes
        if c.operation == "add_set_item"
    }
    assert ("Alice", "participated_in", "I love painting sunsets") in sets
    assert ("Bob", "participated_in", "I love painting sunsets") in sets
    assert ("Alice", "preferences", "painting sunsets") in sets
    assert ("Alice", "identity", "a counselor at the center") in sets


def test_a_batch_without_anything_to_project_says_why() -> None:
    ctx = ElementProjectionContext(
        job_id="p", events=[_event("evt-1", "It rained.", participants=())]
    )
    result = project_elements(ctx)
    assert result.changes == [] and result.reason


def test_the_callback_pickles_and_accepts_plain_dicts() -> None:
    ctx = ElementProjectionContext(job_id="p", events=[_event("evt-1", "We switched to pnpm.")])
    restored = cloudpickle.loads(cloudpickle.dumps(offline_element_projector))
    assert restored(ctx.model_dump()) == offline_element_projector(ctx)


_SUMMARIES = [
    "We switched from npm to pnpm.", "I moved to Berlin.", "I love jazz.", "Let's use Vite.",
    "我们改用Rust。", "I no longer use Vim.", "Nothing to see.", "I replaced Slack with Zulip.",
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(
        st.tuples(
            st.sampled_from(_SUMMARIES),
            st.sampled_from(["change", "decision", "preference", "happening"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_change_cites_exactly_one_event_of_the_batch(picks: list[tuple[str, str]]) -> None:
    events = [_event(f"evt-{i}", text, event_type=kind) for i, (text, kind) in enumerate(picks)]
    ctx = ElementProjectionContext(job_id="p", events=events)
    batch = {e.id for e in events}
    result = project_elements(ctx)
    assert result == project_elements(ctx)
    for change in result.changes:
        assert len(change.source_event_ids) == 1 and change.source_event_ids[0] in batch
