"""The offline element projector: people, state keys that supersede, batch-only provenance."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
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
from stratagate.offline.element_projector import (
    PARTICIPATION_LIMIT,
    SHARED_PROJECT,
    project_elements,
)

NOW = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)
PROJECT = "Fieldnotes"


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


OURS = [_element(PROJECT, "project", {"built_by": "user"})]
"""A project the speakers declared earlier: "we" choices attach to it."""


def test_we_choices_without_a_declared_project_make_no_placeholder_element() -> None:
    ctx = ElementProjectionContext(
        job_id="p",
        events=[
            _event("evt-1", "We switched from npm to pnpm last week.", happened="2023-05-15"),
            _event("evt-2", "We decided to use Zork for builds."),
        ],
    )
    changes = project_elements(ctx).changes
    assert not [c for c in changes if c.element.type == "project"]
    assert SHARED_PROJECT not in {c.element.name for c in changes}
    assert not [c for c in changes if c.key == "adopted_by"]


def test_a_shared_project_an_older_projector_made_still_holds_we_choices() -> None:
    ctx = ElementProjectionContext(
        job_id="p",
        events=[_event("evt-1", "We switched from npm to pnpm last week.")],
        existing_elements=[_element(SHARED_PROJECT, "project", {"package_manager": "npm"})],
    )
    assert ("project", SHARED_PROJECT, "package_manager", "pnpm") in _states(ctx)


def _states(ctx: ElementProjectionContext) -> list[tuple[str, str, str, str]]:
    return [
        (c.element.type, c.element.name, c.key, str(c.value))
        for c in project_elements(ctx).changes
        if c.operation == "set_state"
    ]


def test_a_known_tool_switch_sets_its_category_key_on_the_declared_project() -> None:
    ctx = ElementProjectionContext(
        job_id="proj-1",
        existing_elements=OURS,
        events=[_event("evt-1", "We switched from npm to pnpm last week.", happened="2023-05-15")],
    )
    changes = project_elements(ctx).changes
    state = [c for c in changes if c.operation == "set_state" and c.element.type == "project"]
    assert [(c.element.name, c.key, c.value, c.valid_from) for c in state] == [
        (PROJECT, "package_manager", "pnpm", "2023-05-15")
    ]
    assert ("tool", "npm", "replaced_by", "pnpm") in _states(ctx)


def test_a_later_switch_proposes_the_same_key_so_it_supersedes_the_earlier_state() -> None:
    first = ElementProjectionContext(
        job_id="proj-1",
        events=[_event("evt-1", "We decided to use Zork for builds.")],
        existing_elements=OURS,
    )
    assert ("project", PROJECT, "uses", "Zork") in _states(first)
    existing = [_element(PROJECT, "project", {"built_by": "user", "build_tool": "Zork"})]
    later = ElementProjectionContext(
        job_id="proj-2",
        events=[_event("evt-2", "We switched from Zork to Blip.")],
        existing_elements=existing,
    )
    assert ("project", PROJECT, "build_tool", "Blip") in _states(later)


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
    ctx = ElementProjectionContext(
        job_id="p", existing_elements=OURS, events=[_event("evt-1", "我们从npm改用pnpm了。")]
    )
    assert ("project", PROJECT, "package_manager", "pnpm") in _states(ctx)


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
    assert ("Bob", "participated_in", "evt-1") in sets  # the event, by id
    assert not any(c[0] == "Alice" and c[1] == "participated_in" for c in sets)  # the speaker
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


def _card(
    eid: str, text: str, *, event_type: str = "decision", speaker: str = "user",
    others: tuple[str, ...] = (), status: str = "unknown", happened: str | None = None,
    precision: str | None = None, wording: str | None = None, mentioned: str = "2026-03-02",
    criticality: str = "routine",
) -> EventCard:  # fmt: skip
    return EventCard(
        id=eid, title=text.rstrip("."), summary=text, quotes=[text], source_block_id="blk-1",
        source_message_ids=["m1"], criticality=criticality,  # type: ignore[arg-type]
        temporal=EventTemporal(
            mentioned_at=mentioned if "T" in mentioned else f"{mentioned}T01:00:00.000000Z",
            happened_start=happened,
            happened_end=happened, participants=[speaker, *others], event_type=event_type,
            status=status, precision=precision, original_text=wording,  # type: ignore[arg-type]
        ),
        created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def _project(name: str, state: dict[str, str], **extra: object) -> ElementCard:
    return ElementCard(
        id=f"elem-{name}", name=name, type="project", current_state=state,
        created_at=extra.get("created", NOW), updated_at=NOW,  # type: ignore[arg-type]
        aliases=list(extra.get("aliases", [])),  # type: ignore[call-overload]
    )  # fmt: skip


def _changes(*events: EventCard, existing: list[ElementCard] | None = None) -> list[tuple]:
    ctx = ElementProjectionContext(
        job_id="p", events=list(events), existing_elements=existing or []
    )
    return [
        (c.element.type, c.element.name, c.operation, c.key, str(c.value))
        for c in project_elements(ctx).changes
    ]


def _state_of(changes: list[tuple], name: str) -> dict[str, str]:
    return {c[3]: c[4] for c in changes if c[1] == name and c[2] == "set_state"}


def test_choices_in_different_categories_do_not_overwrite_each_other() -> None:
    changes = _changes(
        _card("e1", "We'll use npm for packages since everyone has it."),
        _card("e2", "For hosting the API, let's go with Fly.io in the Tokyo region."),
        _card("e3", "CI: let's set up GitHub Actions to run the tests."),
        _card("e4", "Stack: React Native with Expo for the app."),
        _card("e5", "We'll use Sentry for crash reports."),
        existing=OURS,
    )
    assert _state_of(changes, PROJECT) == {
        "package_manager": "npm", "hosting": "Fly.io", "hosting_region": "Tokyo",
        "ci": "GitHub Actions", "frontend_framework": "React Native + Expo",
        "crash_reporting": "Sentry",
    }  # fmt: skip
    assert ("tool", "Fly.io", "add_set_item", "adopted_by", PROJECT) in changes


def test_a_later_switch_in_the_same_category_replaces_the_earlier_tool() -> None:
    existing = [_project(SHARED_PROJECT, {"package_manager": "npm"})]
    changes = _changes(_card("e1", "Let's switch to pnpm then."), existing=existing)
    assert _state_of(changes, SHARED_PROJECT) == {"package_manager": "pnpm"}
    assert ("tool", "npm", "set_state", "replaced_by", "pnpm") in changes


def test_chinese_database_choices_split_by_server_and_phone() -> None:
    changes = _changes(
        _card(
            "e1", "数据库方面，我们决定用 PostgreSQL 做服务器端存储，手机上用 SQLite 做离线缓存。"
        ),
        existing=OURS,
    )
    assert _state_of(changes, PROJECT) == {
        "server_database": "PostgreSQL", "mobile_database": "SQLite",
    }  # fmt: skip


def test_keeping_a_tool_reuses_the_key_that_already_holds_it() -> None:
    existing = [_project(SHARED_PROJECT, {"server_database": "PostgreSQL"})]
    changes = _changes(_card("e1", "Let's keep PostgreSQL."), existing=existing)
    assert _state_of(changes, SHARED_PROJECT) == {"server_database": "PostgreSQL"}


def test_a_chinese_switch_drops_the_old_host_and_names_the_new_one_with_its_alias() -> None:
    existing = [_project(SHARED_PROJECT, {"hosting": "Fly.io", "hosting_region": "Tokyo"})]
    ctx = ElementProjectionContext(
        job_id="p",
        events=[
            _card("e1", "决定了：服务器改用阿里云上海区域，不用 Fly.io 了。", status="occurred")
        ],
        existing_elements=existing,
    )
    changes = project_elements(ctx).changes
    states = {(c.element.name, c.key): c.value for c in changes if c.operation == "set_state"}
    assert states[(SHARED_PROJECT, "hosting")] == "Alibaba Cloud"
    assert states[(SHARED_PROJECT, "hosting_region")] == "Shanghai"
    assert states[("Fly.io", "replaced_by")] == "Alibaba Cloud"
    adopted = next(c for c in changes if c.element.name == "Alibaba Cloud")
    assert adopted.element.aliases == ["阿里云"] and adopted.key == "adopted_by"


def test_dropping_a_hosted_service_for_our_own_endpoint_is_self_hosted() -> None:
    changes = _changes(
        _card("e1", "Then no hosted Sentry: we'll send crash logs to our own endpoint on "
                    "Alibaba Cloud.", event_type="change"),
        existing=[_project(SHARED_PROJECT, {"crash_reporting": "Sentry"})],
    )  # fmt: skip
    state = _state_of(changes, SHARED_PROJECT)
    assert state["crash_reporting"] == "self-hosted on Alibaba Cloud"
    assert ("tool", "Sentry", "set_state", "replaced_by", "self-hosted on Alibaba Cloud") in changes
    assert not any(c[1] == "Sentry" and c[3] == "adopted_by" for c in changes)


def test_phrases_that_are_no_product_set_no_state() -> None:
    changes = _changes(
        _card("e1", "把 package-lock.json 删掉，换成 pnpm-lock.yaml。", event_type="change"),
        _card("e2", "两天前我们和设计师开过会，Priya 把采集页面改成了单手操作的布局。",
              event_type="change"),
        _card("e3", "Helen called: the board wants the launch moved to April 27.",
              event_type="change", status="planned"),
        _card("e4", "We decided to use a new planner for the trip."),
    )  # fmt: skip
    assert [c for c in changes if c[2] == "set_state" and c[3] != "launch_date"] == []
    assert not any(c[0] in ("tool", "place") for c in changes)


def test_unknown_products_fall_back_to_uses_and_places_to_location() -> None:
    changes = _changes(
        _card("e1", "We decided to use Zork 2 for builds."),
        _card("e2", "We moved to Kunming last year.", event_type="change"),
        existing=OURS,
    )
    assert _state_of(changes, PROJECT) == {"uses": "Zork 2", "location": "Kunming"}
    assert ("place", "Kunming", "add_set_item", "residents", PROJECT) in changes


def test_we_statements_attach_to_the_declared_project() -> None:
    changes = _changes(
        _card("e0", "We'll use npm for packages."),
        _card("e1", "We're building Fieldnotes, a field-notes app for the researchers at "
                    "Northridge Ecology Institute.", event_type="activity"),
    )  # fmt: skip
    assert _state_of(changes, "Fieldnotes") == {"package_manager": "npm"}
    assert ("project", "Fieldnotes", "add_set_item", "built_by", "user") in changes
    assert ("project", "Fieldnotes", "set_relation", "client",
            "Northridge Ecology Institute") in changes  # fmt: skip
    assert not any(c[1] == SHARED_PROJECT for c in changes)


def test_an_existing_project_with_builders_stays_the_conversation_project() -> None:
    atlas = _project("Atlas", {"built_by": "user"})
    changes = _changes(_card("e1", "Let's go with Vercel."), existing=[atlas])
    assert _state_of(changes, "Atlas") == {"hosting": "Vercel"}


def test_a_late_declaration_names_the_shared_project_instead_of_splitting_it() -> None:
    shared = _project(SHARED_PROJECT, {"package_manager": "npm"})
    ctx = ElementProjectionContext(
        job_id="p",
        events=[
            _card("e1", "We're building Atlas, a planner.", event_type="activity"),
            _card("e2", "Let's switch to pnpm then.", event_type="change"),
        ],
        existing_elements=[shared],
    )
    refs = {(c.element.name, tuple(c.element.aliases), c.key)
            for c in project_elements(ctx).changes if c.element.type == "project"}  # fmt: skip
    assert (SHARED_PROJECT, ("Atlas",), "built_by") in refs
    assert ("Atlas", (SHARED_PROJECT,), "package_manager") in refs


def test_parts_and_code_names_are_projects_of_their_own() -> None:
    changes = _changes(
        _card("e0", "We're building Fieldnotes, an app.", event_type="activity"),
        _card("e1", "We're splitting the sync engine into its own package, fieldnotes-sync, so "
                    "the web dashboard can reuse it. Tomás owns it.", event_type="activity",
              others=("Tomás Ortega",)),
        _card("e2", "We'll go with Vite + React for the dashboard."),
    )  # fmt: skip
    assert ("project", "fieldnotes-sync", "set_relation", "part_of", "Fieldnotes") in changes
    assert ("project", "dashboard", "set_relation", "part_of", "Fieldnotes") in changes
    assert _state_of(changes, "dashboard") == {"frontend_framework": "Vite + React"}
    assert _state_of(changes, "Fieldnotes") == {}
    assert ("project", "fieldnotes-sync", "set_relation", "owner", "Tomás Ortega") in changes
    assert ("person", "Tomás Ortega", "add_set_item", "responsible_for",
            "fieldnotes-sync") in changes  # fmt: skip


def test_a_chinese_handover_sets_the_owner() -> None:
    known = ElementCard(id="elem-t", name="Tomás Ortega", type="person", created_at=NOW,
                        updated_at=NOW)  # fmt: skip
    sync = _project("fieldnotes-sync", {"part_of": "Fieldnotes"})
    changes = _changes(
        _card("e1", "同步的问题交给 Tomás，他在 fieldnotes-sync 里加断点续传。",
              event_type="assignment"),
        existing=[known, sync],
    )  # fmt: skip
    assert ("project", "fieldnotes-sync", "set_relation", "owner", "Tomás Ortega") in changes


def test_people_roles_organizations_and_aliases() -> None:
    ctx = ElementProjectionContext(
        job_id="p",
        events=[
            _card("e0", "We're building Fieldnotes for Northridge Ecology Institute.",
                  event_type="activity"),
            _card("e1", "Team: Priya Raman is our designer (she lives in Figma), Tomás Ortega "
                        "does the backend, and our client contact at Northridge is Dr. Helen "
                        "Okafor.", event_type="introduction",
                  others=("Priya Raman", "Tomás Ortega", "Helen Okafor")),
            _card("e2", "Priya will share the first mockups on Friday.", event_type="happening",
                  others=("Priya",)),
        ],
    )  # fmt: skip
    changes = project_elements(ctx).changes
    roles = {c.element.name: c.value for c in changes if c.key == "role"}
    assert roles == {"Priya Raman": "designer", "Tomás Ortega": "backend",
                     "Helen Okafor": "client contact"}  # fmt: skip
    helen = [c for c in changes if c.element.name == "Helen Okafor"]
    assert any(c.key == "organization" and c.value == "Northridge Ecology Institute"
               for c in helen)  # fmt: skip
    assert any("Dr. Helen Okafor" in c.element.aliases for c in helen)
    later = [c for c in changes if c.source_event_ids == ["e2"] and c.element.type == "person"]
    assert {(c.element.name, tuple(c.element.aliases)) for c in later} == {
        ("Priya Raman", ("Priya",)),
    }  # fmt: skip


def test_a_self_introduction_names_the_user_and_the_role_is_no_person() -> None:
    changes = _changes(
        _card("e1", "I'm Lin Wei, product lead at a small studio in Shanghai.",
              event_type="identity", criticality="identity", others=("Lin Wei",)),
        _card("e2", "Priya will share the mockups.", event_type="happening", speaker="assistant",
              others=("Priya",)),
    )  # fmt: skip
    people = {c[1] for c in changes if c[0] == "person"}
    assert people == {"Lin Wei", "Priya"}
    assert ("person", "Lin Wei", "set_state", "role", "product lead") in changes
    assert ("person", "Lin Wei", "set_state", "speaker_role", "user") in changes
    assert ("place", "Shanghai", "add_set_item", "mentioned_in", "e1") in changes


def test_preferences_go_to_their_holder_or_nowhere() -> None:
    changes = _changes(
        _card("e1", "I prefer short PR descriptions: two or three lines max.",
              event_type="preference", criticality="preference"),
        _card("e2", "我喜欢用深色主题，app 默认也做成深色的吧。", event_type="preference",
              criticality="preference"),
        _card("e3", "She also wants a green accent colour.", event_type="preference",
              criticality="preference"),
        _card("e4", "Tomás wants Next.js for the dashboard.", event_type="preference",
              criticality="preference", others=("Tomás",)),
    )  # fmt: skip
    prefs = [(c[1], c[4]) for c in changes if c[3] == "preferences"]
    assert prefs == [("Tomás", "Next.js for the dashboard")]  # an unnamed user is nobody
    named = _changes(
        _card("e0", "Hi! I'm Lin Wei, product lead at a small studio.", event_type="identity",
              criticality="identity"),
        _card("e1", "I prefer short PR descriptions: two or three lines max.",
              event_type="preference", criticality="preference"),
    )  # fmt: skip
    assert [(c[1], c[4]) for c in named if c[3] == "preferences"] == [
        ("Lin Wei", "short PR descriptions")
    ]
    lin = ElementCard(id="elem-lin", name="Lin Wei", type="person",
                      current_state={"speaker_role": "user"}, created_at=NOW, updated_at=NOW)  # fmt: skip
    later = _changes(
        _card("e2", "我喜欢用深色主题，app 默认也做成深色的吧。", event_type="preference",
              criticality="preference"),
        existing=[lin],
    )  # fmt: skip
    assert [(c[1], c[4]) for c in later if c[3] == "preferences"] == [("Lin Wei", "深色主题")]
    assert not any(c[0] == "person" and c[1] == "user" for c in [*changes, *named, *later])


def test_places_organizations_and_facilities_are_mentioned_never_dates() -> None:
    changes = _changes(
        _card("e1", "The pilot starts at the Kunming field station on March 30; the launch "
                    "moved to April 27.", event_type="plan", status="planned"),
    )  # fmt: skip
    places = {c[1] for c in changes if c[0] == "place"}
    assert places == {"Kunming field station"}
    assert ("place", "Kunming field station", "set_relation", "located_in", "Kunming") in changes


@pytest.mark.parametrize(
    ("text", "day", "wording", "expected"),
    [
        ("我们下个月上线，目标是四月二十号。", "2026-04-20", "四月二十号", "2026-04-20"),
        ("The board wants the launch moved to April 27.", "2026-04-27", "April 27", "2026-04-27"),
        ("四月二十七号上线", "2026-04-27", "四月二十七号", "2026-04-27"),
        ("An offsite on March 27 to plan the launch.", "2026-03-27", "March 27", None),
    ],
)
def test_a_planned_launch_day_sets_the_launch_date(
    text: str, day: str, wording: str, expected: str | None
) -> None:
    changes = _changes(
        _card("e1", text, event_type="plan", status="planned", happened=day, precision="day",
              wording=wording), existing=OURS)  # fmt: skip
    assert _state_of(changes, PROJECT).get("launch_date") == expected


def test_a_launch_range_or_an_occurred_launch_sets_no_launch_date() -> None:
    week = _card("e1", "The launch is planned for next week.", event_type="plan",
                 status="planned", happened="2026-04-13", precision="range",
                 wording="next week")  # fmt: skip
    done = _card("e2", "We launched on April 27.", event_type="happening", status="occurred",
                 happened="2026-04-27", precision="day", wording="April 27")  # fmt: skip
    assert _state_of(_changes(week, done), SHARED_PROJECT) == {}


def test_a_participant_known_as_an_organization_is_no_person() -> None:
    org = ElementCard(id="elem-o", name="Northridge Ecology Institute", type="organization",
                      created_at=NOW, updated_at=NOW)  # fmt: skip
    changes = _changes(
        _card("e1", "The demo went well. Northridge wants a pilot.", event_type="happening",
              others=("Northridge",)),
        existing=[org],
    )  # fmt: skip
    assert {c[1] for c in changes if c[0] == "person"} == set()
    assert ("organization", "Northridge Ecology Institute", "add_set_item", "mentioned_in",
            "e1") in changes  # fmt: skip


def test_two_choices_on_one_day_start_at_the_moments_they_were_said() -> None:
    ctx = ElementProjectionContext(
        job_id="p", existing_elements=OURS,
        events=[
            _card("e1", "We'll use Sentry for crash reports.", status="planned",
                  mentioned="2026-04-03"),
            _card("e2", "Then no hosted Sentry: we'll send crash logs to our own endpoint.",
                  event_type="change", status="planned", mentioned="2026-04-03T03:08:30.000000Z"),
        ],
    )  # fmt: skip
    starts = [
        (c.value, c.valid_from) for c in project_elements(ctx).changes if c.key == "crash_reporting"
    ]
    assert starts == [
        ("Sentry", "2026-04-03T01:00:00.000000Z"),
        ("self-hosted", "2026-04-03T03:08:30.000000Z"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Let's switch to pnpm then. The reason: CI installs take about 4 minutes with npm.",
        "pnpm, since March 9. We started with npm on March 2 and switched.",
        "We use pnpm now; npm was too slow.",
        "Switch to pnpm, npm is too slow.",
        "We moved to pnpm because npm was slow.",
        "Let's go with pnpm over npm.",
    ],
)
def test_a_switch_replaces_the_tool_it_does_not_join_it(text: str) -> None:
    existing = [_project("Fieldnotes", {"built_by": "user", "package_manager": "npm"})]
    changes = _changes(_card("e1", text, event_type="change"), existing=existing)
    assert _state_of(changes, "Fieldnotes") == {"package_manager": "pnpm"}
    assert ("tool", "npm", "set_state", "replaced_by", "pnpm") in changes


def test_coordinated_tools_are_still_one_choice() -> None:
    changes = _changes(
        _card("e1", "Stack: React Native with Expo for the app."),
        _card("e2", "We'll go with Vite + React for the dashboard."),
        existing=OURS,
    )
    assert _state_of(changes, PROJECT) == {"frontend_framework": "React Native + Expo"}
    assert _state_of(changes, "dashboard")["frontend_framework"] == "Vite + React"


def test_participation_names_events_and_is_bounded() -> None:
    events = [
        _card(f"e{i}", f"Priya Raman reviewed mockup {i}.", event_type="happening",
              others=("Priya Raman",))
        for i in range(PARTICIPATION_LIMIT + 4)
    ]  # fmt: skip
    changes = _changes(*events)
    values = [c[4] for c in changes if c[3] == "participated_in"]
    assert values == [f"e{i}" for i in range(PARTICIPATION_LIMIT)]
    assert {c[1] for c in changes if c[3] == "participated_in"} == {"Priya Raman"}
    full = ElementCard(
        id="elem-p", name="Priya Raman", type="person", created_at=NOW, updated_at=NOW,
        current_state={"participated_in": [f"old{i}" for i in range(PARTICIPATION_LIMIT)]},
    )  # fmt: skip
    assert not any(c[3] == "participated_in" for c in _changes(*events, existing=[full]))


def test_places_are_mentioned_in_a_bounded_set_of_events_by_id() -> None:
    events = [
        _card(f"e{i}", f"Tomás flew to Shanghai for meeting {i}.", event_type="happening")
        for i in range(PARTICIPATION_LIMIT + 3)
    ]
    changes = _changes(*events)
    mentioned = [c[4] for c in changes if c[1] == "Shanghai" and c[3] == "mentioned_in"]
    assert mentioned == [f"e{i}" for i in range(PARTICIPATION_LIMIT)]
