"""Offline name finding: tools, places, organizations, people, projects and roles (EN + ZH)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.offline.entities import (
    Known,
    bracketed_alias,
    component,
    declared_project,
    find_organizations,
    find_people,
    find_places,
    find_projects,
    find_tools,
    role_of,
)


def _names(found: list) -> list[str]:
    return [m.name for m in found]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("For hosting, let's go with Fly.io in Tokyo.", [("Fly.io", "hosting")]),
        ("服务器改用阿里云上海区域", [("Alibaba Cloud", "hosting")]),
        ("Stack: React Native with Expo.", [("React Native", "frontend_framework"),
                                            ("Expo", "frontend_framework")]),
        ("Let's switch to pnpm then.", [("pnpm", "package_manager")]),
        ("我们决定用PostgreSQL做存储", [("PostgreSQL", "database")]),
        ("PostGIS handles map queries", [("PostgreSQL", "database")]),
        ("CI: set up GitHub Actions", [("GitHub Actions", "ci")]),
        ("We'll use Sentry for crash reports", [("Sentry", "crash_reporting")]),
    ],
)  # fmt: skip
def test_tools_are_found_by_any_spelling_under_their_canonical_name(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(m.name, m.detail) for m in find_tools(text)] == expected


def test_tool_names_need_word_boundaries_and_exact_case_for_common_words() -> None:
    assert find_tools("delete package-lock.json, add pnpm-lock.yaml") == []
    assert find_tools("the rust on the gate; a go-kart; the fly buzzed") == []
    assert _names(find_tools("We write Rust")) == ["Rust"]
    assert [m.surface for m in find_tools("用 阿里云 和 Fly.io")] == ["阿里云", "Fly.io"]


def test_places_come_from_the_gazetteer_facilities_and_known_places_never_dates() -> None:
    text = "The pilot starts at the Kunming field station; the launch moved to April 27."
    found = find_places(text)
    assert [(m.name, m.detail) for m in found] == [("Kunming field station", "Kunming")]
    assert _names(find_places("我在上海办公室，下周去杭州")) == ["Shanghai office", "Hangzhou"]
    assert _names(find_places("data must stay in mainland China")) == ["China"]
    assert find_places("We met in Springfield on Friday, April 27.") == []
    assert find_places("See you at the May office party and the March office.") == []
    known = Known()
    known.add_place("Springfield")
    assert _names(find_places("back in Springfield", known)) == ["Springfield"]


def test_organizations_end_in_an_organization_word_or_are_known() -> None:
    text = "researchers at Northridge Ecology Institute and Acme Inc. and the University of Oxford"
    assert _names(find_organizations(text)) == [
        "Northridge Ecology Institute", "Acme Inc", "University of Oxford",
    ]  # fmt: skip
    assert _names(find_organizations("我在清华大学读书")) == ["清华大学"]
    assert find_organizations("我们公司很小，这家公司也是") == []
    assert find_organizations("a small studio in Shanghai") == []
    known = Known()
    known.add_organization("Northridge Ecology Institute")
    found = find_organizations("Northridge's board wants it", known)
    assert [(m.name, m.surface) for m in found] == [("Northridge Ecology Institute", "Northridge")]


def test_full_names_and_titles_are_people() -> None:
    text = (
        "Team: Priya Raman is our designer, Tomás Ortega does the backend, and our client "
        "contact at Northridge is Dr. Helen Okafor."
    )
    found = find_people(text)
    assert [(m.name, m.surface, m.detail) for m in found] == [
        ("Priya Raman", "Priya Raman", None),
        ("Tomás Ortega", "Tomás Ortega", None),
        ("Helen Okafor", "Dr. Helen Okafor", "Dr"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Let's switch to pnpm then.", "Great, see you on Friday.", "Last Friday the client called.",
        "Submit it to the App Store and Huawei AppGallery.", "We'll go with Vite + React.",
        "The Hangzhou offsite is called off.", "Back from Kunming.", "In May we'll hire.",
        "Thanks! Sounds Good.", "Helen called about the demo.", "我是学生，我们是团队",
        "Ask Helen's team about it.",
    ],
)  # fmt: skip
def test_no_false_people(text: str) -> None:
    assert find_people(text) == []


def test_a_single_word_is_a_person_only_when_known_titled_or_given_a_role() -> None:
    assert _names(find_people("Priya will share mockups")) == []
    known = Known()
    known.add_person("Priya Raman")
    assert _names(find_people("Priya will share mockups", known)) == ["Priya Raman"]
    assert _names(find_people("两天前 Priya 把页面改了", known)) == ["Priya Raman"]
    assert _names(find_people("Ask Dr. Smith")) == ["Smith"]
    assert _names(find_people("Tomás (backend) and Priya, our designer")) == ["Tomás", "Priya"]


def test_a_first_name_shared_by_two_known_people_resolves_to_neither() -> None:
    known = Known()
    known.add_person("Anna Lee")
    known.add_person("Anna Smith")
    assert find_people("Anna said hi", known) == []
    assert _names(find_people("Anna Smith said hi", known)) == ["Anna Smith"]


def test_chinese_names_only_where_the_wording_says_so() -> None:
    assert _names(find_people("我叫张伟。")) == ["张伟"]
    assert _names(find_people("明天和王磊先生见面")) == ["王磊"]
    text = "Shortlist: Ana Souza and Wang Lei (王磊)."
    people = find_people(text)
    assert _names(people) == ["Ana Souza", "Wang Lei"]
    assert bracketed_alias(text, people[1]) == "王磊"
    assert find_people("先生们好，数据库方面我们决定用它") == []
    assert find_people("我叫外卖了。") == []  # 外 is no surname: "I ordered takeout"


@pytest.mark.parametrize(
    ("text", "role", "organization"),
    [
        ("Priya Raman is our designer (she lives in Figma).", "designer", None),
        ("Tomás Ortega does the backend, and more.", "backend", None),
        ("Tomás Ortega (backend) joined.", "backend", None),
        ("Priya Raman, our designer, agreed.", "designer", None),
        ("our client contact at Northridge is Dr. Helen Okafor.", "client contact", "Northridge"),
        ("Dr. Marco Bianchi, who runs the Kunming field station.",
         "runs the Kunming field station", None),
        ("Anna Smith 是我们的设计师。", "设计师", None),
    ],
)  # fmt: skip
def test_roles_are_read_from_the_wording_around_a_name(
    text: str, role: str, organization: str | None
) -> None:
    person = find_people(text)[0]
    found = role_of(text, person)
    assert found is not None
    assert (found.role, found.organization) == (role, organization)


def test_no_role_without_role_wording() -> None:
    text = "Plan: finish the prototype next week, then demo it to Helen Okafor on March 13."
    assert role_of(text, find_people(text)[0]) is None


def test_projects_declared_named_by_code_name_and_parts() -> None:
    text = "We're building Fieldnotes, a field-notes app for the ecology researchers."
    assert declared_project(text) == "Fieldnotes"
    assert declared_project("我们正在开发Fieldnotes，一个离线应用") == "Fieldnotes"
    assert declared_project("We're building trust with the client.") is None
    split = "We're splitting the sync engine into its own package, fieldnotes-sync, for reuse."
    assert _names(find_projects(split)) == ["fieldnotes-sync"]
    assert _names(find_projects("the Atlas project and project Orion")) == ["Atlas", "Orion"]
    part = component("so the web dashboard can reuse it")
    assert part is not None and (part.name, part.surface) == ("dashboard", "web dashboard")
    assert component("the dashboard of my car") is not None
    assert component("a dashboard") is None


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=120))
def test_finders_never_raise_and_spans_point_at_the_surface(text: str) -> None:
    for finder in (find_tools, find_places, find_organizations, find_people, find_projects):
        for mention in finder(text):
            assert text[mention.start : mention.end] == mention.surface


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ('I just watched "Little Women" and loved it', []),
        ("Their new album is called Summer Nights", []),
        ("Now Caroline is carving out some time", ["Caroline"]),
        ("Seeing Melanie so happy made my day", ["Melanie"]),
        ("I had a chat with someone named David.", ["David"]),
        ("My colleague Rob invited me to yoga", ["Rob"]),
        ("We got another cat named Bailey too", []),
        ("I loved that book by Amy Ellis Nutt", ["Amy Ellis Nutt"]),
    ],
)
def test_people_skip_titles_of_works_openers_and_pets(text: str, people: list[str]) -> None:
    known = Known()
    known.add_person("Caroline")
    known.add_person("Melanie")
    assert [m.name for m in find_people(text, known)] == people


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("They enjoyed the Grand Canyon a lot", "Grand Canyon"),
        ("my trip to the Smoky Mountains last year", "Smoky Mountains"),
        ("We explored the coast up in the Pacific Northwest", "Pacific Northwest"),
        ("I want to visit the Cliffs of Moher", "Cliffs of Moher"),
        ("a small town in the Midwest", "Midwest"),
        ("a road trip to Oregon", "Oregon"),
    ],
)
def test_places_include_sites_regions_and_states(text: str, place: str) -> None:
    assert [m.name for m in find_places(text)] == [place]
