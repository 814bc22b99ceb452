"""The bundled sample conversation through the offline models: what the memory must learn.

The sample's author planted decisions, switches, dated plans, a cancellation, people, an
organization and places; the last block of each thread is never extracted (block N waits for
N+1), so only what the earlier blocks say is asserted here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

import pytest

from stratagate import StrataGate
from stratagate.models import ElementCard, EventCard
from stratagate.offline.element_projector import EVENT_LINK_KEYS, PARTICIPATION_LIMIT
from stratagate.results import RecallEntry

WORKTREE = Path(__file__).resolve().parents[2]
SAMPLE = files("stratagate") / "sample" / "project_conversation.jsonl"
DATE_LIKE = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b|\d+\s*月|\d{4}-\d{2}"
)


def ingest_sample(memory: StrataGate) -> None:
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        memory.append_turn(
            turn["user"], turn["assistant"], created_at=turn["created_at"],
            thread_id=turn["thread_id"], receipt_id=turn["receipt_id"],
        )  # fmt: skip


@pytest.fixture(scope="module")
def memory() -> Iterator[StrataGate]:
    with StrataGate.in_memory(
        summarizer="offline", extractor="offline", element_projector="offline"
    ) as memory:
        ingest_sample(memory)
        yield memory


@pytest.fixture(scope="module")
def elements(memory: StrataGate) -> list[ElementCard]:
    return memory.list_elements()


@pytest.fixture(scope="module")
def events(memory: StrataGate) -> list[EventCard]:
    return memory.list_events()


def _element(elements: list[ElementCard], kind: str, name: str) -> ElementCard:
    wanted = name.casefold()
    found = [
        e for e in elements
        if e.type == kind and wanted in {n.casefold() for n in (e.name, *e.aliases)}
    ]  # fmt: skip
    assert len(found) == 1, (kind, name, [(e.type, e.name) for e in elements])
    return found[0]


def _history(element: ElementCard, key: str) -> list[tuple[str, str, datetime | None]]:
    facts = sorted((f for f in element.facts if f.key == key), key=lambda f: f.valid_from)
    return [(str(f.value), f.status, f.valid_to) for f in facts]


def _event(events: list[EventCard], fragment: str) -> EventCard:
    found = [e for e in events if fragment in e.summary]
    assert found, fragment
    return found[0]


def _day(value: datetime | None) -> str | None:
    return value.astimezone(UTC).date().isoformat() if value else None


def test_the_project_is_the_one_the_user_is_building(elements: list[ElementCard]) -> None:
    project = _element(elements, "project", "Fieldnotes")
    assert project.current_state["built_by"] == ["Lin Wei"]
    assert project.current_state["client"] == "Northridge Ecology Institute"
    assert not any(e.name == "shared project" for e in elements)


def test_npm_was_superseded_by_pnpm_on_march_9(elements: list[ElementCard]) -> None:
    project = _element(elements, "project", "Fieldnotes")
    history = _history(project, "package_manager")
    assert [(value, status, _day(end)) for value, status, end in history] == [
        ("npm", "superseded", "2026-03-09"), ("pnpm", "active", None),
    ]  # fmt: skip
    assert _element(elements, "tool", "npm").current_state["replaced_by"] == "pnpm"
    assert not any(e.name.endswith(" then") for e in elements)


def test_hosting_moved_from_fly_io_in_tokyo_to_alibaba_cloud_in_shanghai(
    elements: list[ElementCard],
) -> None:
    project = _element(elements, "project", "Fieldnotes")
    assert [(v, s, _day(end)) for v, s, end in _history(project, "hosting")] == [
        ("Fly.io", "superseded", "2026-03-13"), ("Alibaba Cloud", "active", None),
    ]  # fmt: skip
    assert project.current_state["hosting_region"] == "Shanghai"
    alibaba = _element(elements, "tool", "Alibaba Cloud")
    assert "阿里云" in alibaba.aliases
    assert _element(elements, "tool", "Fly.io").current_state["replaced_by"] == "Alibaba Cloud"


def test_databases_crash_reporting_ci_and_frameworks(elements: list[ElementCard]) -> None:
    project = _element(elements, "project", "Fieldnotes")
    state = project.current_state
    assert (state["server_database"], state["mobile_database"]) == ("PostgreSQL", "SQLite")
    assert state["ci"] == "GitHub Actions"
    assert state["frontend_framework"] == "React Native + Expo"
    assert state["crash_reporting"] == "self-hosted on Alibaba Cloud"
    dashboard = _element(elements, "project", "dashboard")
    assert dashboard.current_state["frontend_framework"] == "Vite + React"
    assert dashboard.current_state["part_of"] == "Fieldnotes"


def test_the_launch_date_moved_from_april_20_to_april_27(elements: list[ElementCard]) -> None:
    project = _element(elements, "project", "Fieldnotes")
    assert [(v, s, _day(end)) for v, s, end in _history(project, "launch_date")] == [
        ("2026-04-20", "superseded", "2026-04-03"), ("2026-04-27", "active", None),
    ]  # fmt: skip


def test_people_with_their_roles(elements: list[ElementCard]) -> None:
    roles = {
        "Priya Raman": "designer", "Tomás Ortega": "backend", "Helen Okafor": "client contact",
        "Marco Bianchi": "runs the Kunming field station",
    }  # fmt: skip
    for name, role in roles.items():
        assert _element(elements, "person", name).current_state.get("role") == role
    helen = _element(elements, "person", "Dr. Helen Okafor")
    assert helen.current_state["organization"] == "Northridge Ecology Institute"
    user = _element(elements, "person", "Lin Wei")
    assert user.name == "Lin Wei" and user.current_state["role"] == "product lead"
    assert user.current_state["speaker_role"] == "user"
    assert {"Priya", "Tomás", "Helen"} <= {a for e in elements for a in e.aliases}


def test_no_false_people_and_no_element_named_like_a_date(elements: list[ElementCard]) -> None:
    people = {e.name for e in elements if e.type == "person"}
    assert people == {  # speaker roles are not people; the user is the name they gave
        "Lin Wei", "Priya Raman", "Tomás Ortega", "Helen Okafor", "Marco Bianchi",
    }  # fmt: skip
    assert not any({"user", "assistant"} & {e.name, *e.aliases} for e in elements)
    for element in elements:
        assert not DATE_LIKE.search(element.name), element.name


def test_organization_places_and_projects(elements: list[ElementCard]) -> None:
    org = _element(elements, "organization", "Northridge Ecology Institute")
    assert "Northridge" in org.aliases
    station = _element(elements, "place", "Kunming field station")
    assert station.current_state["located_in"] == "Kunming"
    for place in ("Shanghai", "Hangzhou", "Tokyo"):
        _element(elements, "place", place)
    sync = _element(elements, "project", "fieldnotes-sync")
    assert (sync.current_state["part_of"], sync.current_state["owner"]) == (
        "Fieldnotes", "Tomás Ortega",
    )  # fmt: skip


def test_preferences_of_the_user(elements: list[ElementCard]) -> None:
    preferences = _element(elements, "person", "Lin Wei").current_state["preferences"]
    assert {"short PR descriptions", "深色主题", "squash merges"} <= set(preferences)


def test_participation_names_a_bounded_set_of_events(
    elements: list[ElementCard], events: list[EventCard]
) -> None:
    ids = {event.id for event in events}
    for element in elements:
        for key in EVENT_LINK_KEYS:
            values = element.current_state.get(key, [])
            assert isinstance(values, list) and len(values) <= PARTICIPATION_LIMIT, element.name
            assert set(values) <= ids, (element.name, key)
    priya = _element(elements, "person", "Priya Raman").current_state["participated_in"]
    assert _event(events, "Priya Raman is our designer").id in priya


def test_switches_supersede_what_they_replace(events: list[EventCard]) -> None:
    cases = {
        "Let's switch to pnpm then.": "We'll use npm for packages",
        "不用 Fly.io 了": "let's go with Fly.io in the Tokyo region",
        "wants the launch moved to April 27": "我们下个月上线",
        "the Hangzhou offsite is called off": "we're planning a two-day offsite in Hangzhou",
    }
    for new, old in cases.items():
        replacing, replaced = _event(events, new), _event(events, old)
        assert replacing.temporal is not None
        assert replacing.temporal.supersedes_event_ids == [replaced.id], new
        assert (replaced.status, replaced.superseded_by) == ("superseded", replacing.id)
    self_hosted = _event(events, "no hosted Sentry")
    assert self_hosted.temporal is not None
    assert self_hosted.temporal.supersedes_event_ids == [
        _event(events, "We'll use Sentry for crash reports").id
    ]


def test_plans_dates_and_the_cancellation(events: list[EventCard]) -> None:
    expected = {
        "finish the prototype next week": ("plan", "planned", "2026-03-09", "2026-03-15"),
        "我们下个月上线": ("plan", "planned", "2026-04-20", "2026-04-20"),
        "two-day offsite in Hangzhou": ("plan", "planned", "2026-03-27", "2026-03-28"),
        "the Hangzhou offsite is called off": ("plan", "cancelled", "2026-03-27", "2026-03-28"),
        "团建取消了": ("plan", "cancelled", "2026-03-27", "2026-03-28"),
        "两天前我们和设计师开过会": ("change", "occurred", "2026-03-09", "2026-03-09"),
        "Last Friday the client called": ("happening", "occurred", "2026-03-20", "2026-03-20"),
        "in May we'll hire": ("plan", "planned", "2026-05", "2026-05"),
        "starts at the Kunming field station on March 30": (
            "plan", "planned", "2026-03-30", "2026-04-12",
        ),
        "Priya is on leave from April 6 to April 10": (
            "happening", "planned", "2026-04-06", "2026-04-10",
        ),
        "The prototype is done!": ("happening", "occurred", "2026-03-11", "2026-03-11"),
        "migration is done": ("happening", "occurred", "2026-03-21", "2026-03-21"),
    }  # fmt: skip
    for fragment, (kind, status, start, end) in expected.items():
        temporal = _event(events, fragment).temporal
        assert temporal is not None
        found = (temporal.event_type, temporal.status, temporal.happened_start,
                 temporal.happened_end)  # fmt: skip
        assert found == (kind, status, start, end), fragment


def test_decisions_preferences_and_ongoing_work_are_events(events: list[EventCard]) -> None:
    expected = {
        "数据库方面，我们决定用 PostgreSQL": "decision",
        "let's go with Fly.io": "decision",
        "I prefer short PR descriptions": "preference",
        "我喜欢用深色主题": "preference",
        "I prefer squash merges": "preference",
        "We'll go with Vite + React": "decision",
        "the offline queue is about half done": "activity",
        "Team: Priya Raman is our designer": "introduction",
        "同步的问题交给 Tomás": "assignment",
    }
    for fragment, kind in expected.items():
        temporal = _event(events, fragment).temporal
        assert temporal is not None and temporal.event_type == kind, fragment
    queue = _event(events, "the offline queue is about half done").temporal
    assert queue is not None and queue.status == "ongoing"
    demo = _event(events, "demo it to Helen").temporal
    assert demo is not None and "Helen Okafor" in demo.participants


def _labels_match_statuses(memory: StrataGate, entries: list[RecallEntry]) -> None:
    """Every superseded entry says so and names its replacement, shown before it."""
    ids = [entry.id for entry in entries]
    for entry in entries:
        if entry.status == "superseded":
            assert entry.superseded_by in ids, entry.text
            assert ids.index(entry.superseded_by) < ids.index(entry.id)
            assert entry.text.startswith(f"[superseded, replaced by {entry.superseded_by}]")
        else:
            assert "superseded" not in entry.text.split("]")[0], entry.text
    for entry in entries:
        if entry.kind == "event":
            assert memory.get_event(entry.id).status == entry.status


def test_recall_puts_the_current_package_manager_first(
    memory: StrataGate, events: list[EventCard]
) -> None:
    context = memory.recall_context("what package manager do we use?")
    pnpm = _event(events, "Let's switch to pnpm then.")
    npm = _event(events, "We'll use npm for packages")
    ids = [entry.id for entry in context.events]
    assert pnpm.id in ids and ids.index(pnpm.id) < ids.index(npm.id)
    _labels_match_statuses(memory, context.events)
    _labels_match_statuses(memory, context.elements)
    managers = [e for e in context.elements if "package manager" in e.text]
    assert managers[0].status == "active" and "package manager: pnpm" in managers[0].text
    assert context.tokens <= context.token_budget


def test_event_search_puts_the_decision_in_force_before_the_one_it_replaced(
    memory: StrataGate, events: list[EventCard]
) -> None:
    pnpm = _event(events, "Let's switch to pnpm then.")
    npm = _event(events, "We'll use npm for packages")
    assert memory.get_event(npm.id).superseded_by == pnpm.id
    hits = memory.search_events("package manager", limit=6)
    ids = [hit.id for hit in hits]
    assert ids[0] == pnpm.id and npm.id in ids
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_recall_never_shows_a_replaced_or_cancelled_plan_as_current(
    memory: StrataGate, events: list[EventCard]
) -> None:
    context = memory.recall_context("when is the launch?")
    offsite = _event(events, "we're planning a two-day offsite in Hangzhou")
    called_off = _event(events, "the Hangzhou offsite is called off")
    ids = [entry.id for entry in context.events]
    assert offsite.id not in ids or ids.index(called_off.id) < ids.index(offsite.id)
    _labels_match_statuses(memory, context.events)
    _labels_match_statuses(memory, context.elements)
    launch = [e for e in context.elements if "launch date" in e.text]
    assert launch[0].status == "active" and "2026-04-27" in launch[0].text


REPLAY_DIGESTS = """
import sys
from projections.replay import replay
from stratagate.store.sql import open_event_store
state = replay(open_event_store(sys.argv[1]), "default")
print(sorted(state.digests().items()))
"""


@pytest.mark.slow
def test_replay_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Read models fold in log order only: no set or dict-of-str iteration order may leak into a
    model, or a process replaying the log (another hash seed) disagrees with the live one."""
    database = tmp_path / "sample.db"
    with StrataGate.open(
        str(database),
        "default",
        summarizer="offline",
        extractor="offline",
        element_projector="offline",
    ) as memory:
        ingest_sample(memory)
        assert memory.verify().ok
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(WORKTREE)}
        done = subprocess.run(
            [sys.executable, "-c", REPLAY_DIGESTS, str(database)],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        outputs.add(done.stdout)
    assert len(outputs) == 1, outputs
