"""The offline element projector: people, organizations, places, projects and tool state.

Rules, for each event of the claimed batch in order (every change cites only that event;
``entities`` finds the names, ``catalogue`` holds the word lists):

1. People. Every person the event names besides its speaker (other participants, names in the
   summary) is a ``person`` with ``add_set_item participated_in = <event id>``, for the first
   ``PARTICIPATION_LIMIT`` events that name them (``search_events(participants=[name])`` finds
   all); names resolve to the full name already known ("Priya" → "Priya Raman"), the words as
   written become aliases. A role the text gives
   ("Priya Raman is our designer", "Tomás (backend)", "our client contact at Northridge is
   Dr. Helen Okafor") sets ``role``, and an organization named with it ``organization``.
   Speaker roles (``user``, ``assistant``, ``system``, ``tool``) are not people: "I'm Lin Wei,
   product lead …" said by the user makes Lin Wei a person with ``role`` and ``speaker_role =
   user``, and from then on (this batch and later ones) the user's "I …" statements are Lin
   Wei's; until the user gives a name, and always for the assistant, they belong to nobody.
   A speaker with a name (a LoCoMo speaker) is that person; a name they give is an alias.
   A preference adds ``preferences`` to its holder: the speaker for "I …", a named person for
   "<Name> prefers / wants …", nobody for an unnamed "she wants". An identity statement adds
   ``identity`` to the speaker. "<Name> owns it" / 交给 <Name> with a project in the text sets
   the project's ``owner`` and the person's ``responsible_for``.
2. Organizations and places the summary names get ``mentioned_in = <event id>`` (bounded as
   ``participated_in``); a
   facility ("Kunming field station") also ``located_in = <city>``.
3. Projects. The conversation's project is the one the speakers said they are building
   ("We're building Fieldnotes") — the earliest existing project with a ``built_by`` fact, else
   one declared in this batch. With none, "we" choices have no holder and stay events: no
   placeholder element is made (a ``shared project`` element that an older projector made
   still holds them, and a later declaration becomes its alias instead of a second element).
   A declaration adds the speaker (their name, else their role) to ``built_by`` and an
   organization the app is "for" as ``client``. A code name introduced as a package or repo
   ("fieldnotes-sync") and a part named as "the (web) dashboard / website" are projects of
   their own, ``part_of`` the conversation's project.
4. Tool state, for decisions and changes only. The subject is a part or project named in the
   sentence ("for the dashboard"), else the speaker for a first-person-singular sentence (no
   subject at all when the speaker is an unnamed role), else the conversation's project. Each
   catalogue tool in the sentence is dropped when the words
   before it say so ("from", "over", "no (hosted)", "instead of", 从, 不用 …), else adopted. A
   switch replaces, it does not join: of the adopted tools of one category only one run of
   coordinated tools ("React Native with Expo", "Vite + React") is kept — the run the switch
   phrase names ("switch to pnpm"), else the first — and the others are context ("… than with
   npm"). The run sets ``set_state <category> = <tools joined by " + ">`` — database choices
   become
   ``server_database`` / ``mobile_database`` when their clause says server / phone (服务器 /
   手机) — unless the subject already holds the tool under another key. A dropped tool gets
   ``replaced_by`` its category's new value; a dropped category with "our own" / self-hosted /
   自建 wording becomes ``self-hosted`` (``on <hosting>`` when the sentence names one). A
   hosting choice with "<Place> region" / <Place>区域 sets ``hosting_region``. Adopted tools
   get ``adopted_by`` = the subject (the written form as an alias: 阿里云 → Alibaba Cloud).
   A sentence with no catalogue tool falls back to the switch or usage phrase when it looks
   like a product name (capitalised or with a digit or dot, not a file, date or place) under
   the key of the subject's state that held the old value, else ``uses``; "moved to <place>"
   sets ``location`` and the place's ``residents``.
5. A planned event whose launch word (launch, go-live, 上线 …) precedes a single-day date sets
   the subject's ``launch_date`` to that day.

A later choice proposes a new value for the same key; the platform closes the earlier fact's
validity interval. ``valid_from`` is the event's happened start when it occurred (or is
ongoing), else the moment it was mentioned (so two choices made on one day keep their order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise

from stratagate.models import (
    ElementCard,
    ElementProjectionChange,
    ElementProjectionContext,
    ElementProjectionResult,
    ElementRef,
    ElementType,
    EventCard,
    ProjectionOperation,
    parse_input,
)
from stratagate.offline.catalogue import LAUNCH_WORDS, NON_NAME_WORDS
from stratagate.offline.cues import switch_targets, usage_target
from stratagate.offline.entities import (
    Known,
    Mention,
    bracketed_alias,
    component,
    declared_project,
    find_organizations,
    find_people,
    find_places,
    find_projects,
    find_tools,
    role_of,
    tool_named,
)
from stratagate.offline.temporal import find_time_expressions
from stratagate.offline.text import split_sentences

SHARED_PROJECT = "shared project"
"""The project "we / our / let's" statements attach to while no project has been named."""
SPEAKER_ROLES = frozenset({"user", "assistant", "system", "tool"})
"""Message roles an extractor may list as a speaker: positions in a conversation, not people."""
NAMEABLE_ROLES = frozenset({"user"})
"""Roles whose speaker is a person once they say their name (never the assistant)."""
EVENT_LINK_KEYS = ("participated_in", "mentioned_in")
"""Set keys whose values are event ids: the events a person takes part in, or that name a
place, organization or project."""
PARTICIPATION_LIMIT = 8
"""At most this many event ids per element under each of ``EVENT_LINK_KEYS`` (the first events
that name it; event search by participant or by name finds all of them)."""

_FIRST_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me)\b|我(?!们)", re.IGNORECASE)
_FIRST_PLURAL = re.compile(r"\b(?:we|we're|we've|we'll|our|us|let's)\b|我们|咱们", re.IGNORECASE)
_PREFERENCE_OBJECT = re.compile(
    r"\b(?:prefer|prefers|love|adore|like|enjoy|hate|dislike|favou?rite\s+\w+\s+is|fan\s+of|"
    r"into|wants|rather)\s+(?P<x>(?:[^,.;:!?]|\.(?=\w))+)|(?:喜欢|偏好|最爱|偏爱|还是想|更想|宁愿|宁可)"
    r"(?:用|使用)?(?P<y>[^，。！？,.!?；;]+)",
    re.IGNORECASE,
)
_NAMED_PREFERENCE = re.compile(
    r"(?P<name>\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)\s+(?:prefers|wants|would\s+like|'d\s+like)\b"
)
_IDENTITY_OBJECT = re.compile(
    r"\b(?:i'?m|i\s+am)\s+(?P<x>an?\s+[^,.;!?]+)|\bi\s+work\s+(?P<w>(?:as|at|for)\s+[^,.;!?]+)|"
    r"我是(?P<y>[^，。！？,.!?]+)",
    re.IGNORECASE,
)
_SELF_NAMED = re.compile(
    r"\b(?i:i'?m|i\s+am|my\s+name\s+is)\s+(?P<name>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)"
    r"(?:\s*,\s*(?P<role>(?:an?\s+|the\s+)?[a-z][^,.;!?]*))?"
    r"|我叫(?P<han>[\u4e00-\u9fff]{2,3})"
)
_ROLE_CUT = re.compile(r"\s+(?:at|in|for|from|with|of)\s+.*$")
_OWNER = re.compile(r"\s+(?:owns|will\s+own|is\s+in\s+charge\s+of|leads|maintains)\s+")
_HAN_OWNER_BEFORE = re.compile(r"(?:交给|由)\s*$")
_DROP_BEFORE = re.compile(
    r"(?:\b(?:from|over|no|not|without|instead\s+of|rather\s+than|skip|skipping|drop|dropping|ditch|"
    r"ditching|replace|replacing|replaced|quit|away\s+from|stopped\s+using|stop\s+using|"
    r"no\s+longer\s+use|no\s+longer\s+using)\s+(?:the\s+|hosted\s+|managed\s+|using\s+)*"
    r"|(?:从|不用|不再用|不再使用|放弃|弃用|换掉)\s*)$",
    re.IGNORECASE,
)
_DROP_AFTER = re.compile(
    r"^[^,.;:!?]{0,20}?\b(?:is|are)\s+out\b|^\s*(?:换掉|不用了)", re.IGNORECASE
)
_CLAUSE_BREAK = re.compile(r"[,;:!?，。；：！？]|\.(?![A-Za-z0-9])|\b(?:and|but)\b")
_SERVER = re.compile(r"\b(?:server|backend|back-end|cloud)\b|服务器|服务端|后端|云端", re.I)
_MOBILE = re.compile(
    r"\b(?:phone|phones|mobile|device|devices|client|offline)\b|手机|移动端|设备|离线", re.I
)
_SELF_HOSTED = re.compile(
    r"\b(?:our\s+own|self-?host(?:ed|ing)?|in-house|on-prem\w*)\b|自建|自托管|自己的"
)
_REGION = re.compile(r"^\s*(?:region|区域|地域|节点)", re.IGNORECASE)
_FILE_LIKE = re.compile(r"\.(?:json|ya?ml|lock|toml|txt|md|py|js|ts|cfg|ini|xml|csv)$", re.I)
_COORDINATED = re.compile(r"^\s*(?:\+|&|/|and|with|plus|和|与|加|跟|\+\s*)\s*$", re.IGNORECASE)
"""What may stand between two tools of one category for them to be one choice ("Vite + React")."""
_ANY_DAY = date(2000, 1, 1)
"""Reference day for asking whether a phrase is a date at all (its value is never used)."""
_PRODUCT_LIKE = re.compile(
    r"^(?:[A-Z][\w.+#-]*|[\w.+#-]*\d[\w.+#-]*|\w+\.\w+)(?:\s+(?:[A-Z]|\d)[\w.+#-]*){0,2}$"
)


def _bounded(text: str, words: int = 6) -> str:
    return " ".join(text.split()[:words]).strip()


def _valid_from(event: EventCard) -> str | None:
    temporal = event.temporal
    if temporal is None:
        return None
    if temporal.happened_start and temporal.status in ("occurred", "ongoing", None, "unknown"):
        return temporal.happened_start
    return temporal.mentioned_at


def _speaker(event: EventCard) -> str | None:
    """The event's speaker as the extractor wrote it: a name, or a role such as ``user``."""
    participants = event.temporal.participants if event.temporal else []
    return participants[0] if participants else None


def _sentence(event: EventCard) -> str:
    """The event's own sentence (its first quote), else its summary."""
    return event.quotes[0] if event.quotes else event.summary


StateView = dict[tuple[str, str], dict[str, str]]
"""Current string states by (element type, case-folded name): existing plus this batch's."""


@dataclass(slots=True)
class _Projection:
    """Working state of one projection: known names, states, the conversation's project."""

    known: Known
    view: StateView
    project: str | None
    shared_exists: bool
    speakers: dict[str, str]
    """Speaker role → the person who said their name in that role."""
    links: dict[tuple[str, str, str], int]
    """(type, case-folded name, key of ``EVENT_LINK_KEYS``) → values so far (existing and this
    batch)."""
    changes: list[ElementProjectionChange] = field(default_factory=list)
    seen: set[tuple[str, str, str, str, str]] = field(default_factory=set)

    def add(
        self, event: EventCard, name: str, kind: ElementType, operation: ProjectionOperation,
        key: str, value: str, aliases: Iterable[str] = (),
    ) -> None:  # fmt: skip
        """One change citing ``event``; an identical change proposed earlier is skipped."""
        value = value.strip()
        marker = (kind, name.casefold(), operation, key, value.casefold())
        if not value or marker in self.seen:
            return
        self.seen.add(marker)
        extra = sorted({a for a in aliases if a and a.casefold() != name.casefold()})
        self.changes.append(
            ElementProjectionChange(
                element=ElementRef(name=name, type=kind, aliases=extra),
                operation=operation,
                key=key,
                value=value,
                valid_from=_valid_from(event),
                source_event_ids=[event.id],
                confidence=min(event.confidence, 0.8),
            )
        )
        if operation == "set_state":
            self.view.setdefault((kind, name.casefold()), {})[key] = value

    def person(self, event: EventCard) -> str | None:
        """The person who spoke: a named speaker, the person a role belongs to, else nobody."""
        speaker = _speaker(event)
        if speaker is None or speaker not in SPEAKER_ROLES:
            return speaker
        return self.speakers.get(speaker)

    def link(
        self, event: EventCard, name: str, kind: ElementType, key: str, aliases: Iterable[str] = ()
    ) -> None:
        """``<key> = <event id>`` while the element has fewer than ``PARTICIPATION_LIMIT``."""
        counted = (kind, name.casefold(), key)
        if self.links.get(counted, 0) >= PARTICIPATION_LIMIT:
            return
        before = len(self.changes)
        self.add(event, name, kind, "add_set_item", key, event.id, aliases)
        if len(self.changes) > before:
            self.links[counted] = self.links.get(counted, 0) + 1

    @property
    def conversation_project(self) -> str | None:
        """The declared project; else a ``shared project`` element an older projector made;
        else none (no placeholder element is made)."""
        return self.project or (SHARED_PROJECT if self.shared_exists else None)

    def project_aliases(self, name: str) -> list[str]:
        """The conversation's project absorbs an existing ``shared project`` element."""
        if name == self.project and self.shared_exists:
            return [SHARED_PROJECT]
        return []


def _start(ctx: ElementProjectionContext) -> _Projection:
    known = Known()
    view: StateView = {}
    builders: list[ElementCard] = []
    shared = False
    speakers: dict[str, str] = {}
    links: dict[tuple[str, str, str], int] = {}
    for element in ctx.existing_elements:
        add = {
            "person": known.add_person, "organization": known.add_organization,
            "place": known.add_place, "project": known.add_project,
        }.get(element.type)  # fmt: skip
        if add is not None:
            add(element.name, element.aliases)
        states = {k: v for k, v in element.current_state.items() if isinstance(v, str)}
        view.setdefault((element.type, element.name.casefold()), {}).update(states)
        if element.type == "project" and "built_by" in element.current_state:
            builders.append(element)
        shared = shared or (element.type == "project" and element.name == SHARED_PROJECT)
        role = element.current_state.get("speaker_role")
        if element.type == "person" and isinstance(role, str):
            speakers.setdefault(role, element.name)
        for key in EVENT_LINK_KEYS:
            values = element.current_state.get(key)
            if isinstance(values, list):
                links[(element.type, element.name.casefold(), key)] = len(values)
    builders.sort(key=lambda e: (e.created_at, e.id))
    project = builders[0].name if builders else None
    for event in ctx.events:  # a named speaker is a known person before any text is read
        named_speaker = _speaker(event)
        if named_speaker and named_speaker not in SPEAKER_ROLES:
            known.add_person(named_speaker)
    for event in ctx.events:  # names said anywhere in the batch are known to all its events
        speaker = _speaker(event)
        for name in _self_names(event.summary) if speaker else []:
            if speaker in NAMEABLE_ROLES:
                known.add_person(name)
                speakers.setdefault(speaker, name)
            elif speaker not in SPEAKER_ROLES:
                known.add_person(speaker or "", [name])
        participants = event.temporal.participants if event.temporal else []
        for participant in participants[1:]:
            if " " in participant and participant.casefold() not in known.people:
                known.add_person(participant)
        declared = declared_project(event.summary)
        if declared:
            project = project or declared
            known.add_project(declared)
        for org in find_organizations(event.summary, known):
            known.add_organization(org.name)
        for person in find_people(event.summary, known):
            if " " in person.name and person.name.casefold() not in known.people:
                known.add_person(person.name)
    return _Projection(
        known=known, view=view, project=project, shared_exists=shared, speakers=speakers,
        links=links,
    )  # fmt: skip


def _self_names(text: str) -> list[str]:
    """Names a speaker gives themself ("I'm Lin Wei", 我叫张伟)."""
    names = []
    for m in _SELF_NAMED.finditer(text):
        name = m["name"] or m["han"]
        if name.split()[0] not in NON_NAME_WORDS and tool_named(name) is None:
            names.append(name)
    return names


# ---------------------------------------------------------------- people


def _person_name(state: _Projection, name: str) -> str:
    return state.known.people.get(name.casefold(), name)


def _not_a_person(state: _Projection, name: str) -> bool:
    """A participant that is known as an organization, place, project or tool."""
    key = name.casefold()
    known = state.known
    return (
        key not in known.people
        and (key in known.organizations or key in known.places or key in known.projects
             or tool_named(name) is not None)
    )  # fmt: skip


def _people(state: _Projection, event: EventCard) -> None:
    temporal = event.temporal
    sentences = event.quotes or split_sentences(event.summary)
    _self_named(state, event, sentences)
    speaker = state.person(event)
    named: dict[str, set[str]] = {}
    for participant in temporal.participants[1:] if temporal else []:
        if participant not in SPEAKER_ROLES and not _not_a_person(state, participant):
            named.setdefault(_person_name(state, participant), set()).add(participant)
    for sentence in sentences:
        for person in find_people(sentence, state.known):
            surfaces = named.setdefault(person.name, set())
            surfaces.add(person.surface)
            han = bracketed_alias(sentence, person)
            if han:
                surfaces.add(han)
    for name, surfaces in named.items():
        if name != speaker:
            state.link(event, name, "person", "participated_in", surfaces)
    for sentence in sentences:
        for person in find_people(sentence, state.known):
            _roles(state, event, sentence, person)
            _ownership(state, event, sentence, person)
    _preferences(state, event)


def _roles(state: _Projection, event: EventCard, sentence: str, person: Mention) -> None:
    role = role_of(sentence, person)
    if role is None:
        return
    state.add(event, person.name, "person", "set_state", "role", role.role, [person.surface])
    if role.organization:
        org = state.known.organizations.get(role.organization.casefold(), role.organization)
        state.add(event, person.name, "person", "set_relation", "organization", org)
        state.add(event, org, "organization", "add_set_item", "people", person.name,
                  [role.organization])  # fmt: skip


def _ownership(state: _Projection, event: EventCard, sentence: str, person: Mention) -> None:
    """A person who "owns it" / is handed it (交给) when the summary names a project."""
    owns = _OWNER.match(sentence, person.end) or _HAN_OWNER_BEFORE.search(sentence[: person.start])
    if owns is None:
        return
    projects = [p for p in find_projects(event.summary, state.known) if p.name != state.project]
    if not projects:
        return
    project = projects[0].name
    state.add(event, project, "project", "set_relation", "owner", person.name)
    state.add(event, person.name, "person", "add_set_item", "responsible_for", project)


def _self_named(state: _Projection, event: EventCard, sentences: list[str]) -> None:
    """A speaker's own name ("I'm Lin Wei, product lead at …"), made known by ``_start``: the
    person a role belongs to (with ``speaker_role``), or an alias of a named speaker; the words
    after it are their role."""
    speaker = _speaker(event)
    person = state.person(event)
    if speaker is None or person is None:
        return
    for sentence in sentences:
        m = _SELF_NAMED.search(sentence)
        name = (m["name"] or m["han"]) if m else None
        if not m or not name or name not in _self_names(sentence):
            continue
        if speaker in SPEAKER_ROLES:
            state.add(event, person, "person", "set_state", "speaker_role", speaker, [name])
        if m["role"]:
            role = _ROLE_CUT.sub("", m["role"]).strip()
            state.add(event, person, "person", "set_state", "role", role, [name])
            state.add(event, person, "person", "add_set_item", "identity", _bounded(m["role"], 10),
                      [name])  # fmt: skip
        elif speaker not in SPEAKER_ROLES:
            state.add(event, person, "person", "add_set_item", "identity", name, [name])


def _preferences(state: _Projection, event: EventCard) -> None:
    speaker = state.person(event)
    sentence = _sentence(event)
    if event.criticality == "preference":
        holder: str | None = speaker
        named = _NAMED_PREFERENCE.search(sentence)
        if named and named["name"].split()[0] not in NON_NAME_WORDS:
            holder = _person_name(state, named["name"])
        elif not _FIRST_SINGULAR.search(sentence):
            holder = None
        match = _PREFERENCE_OBJECT.search(sentence)
        liked = (match["x"] or match["y"]) if match else None
        if holder is not None:
            state.add(event, holder, "person", "add_set_item", "preferences",
                      _bounded(liked) if liked else event.title)  # fmt: skip
    if event.criticality == "identity" and speaker is not None:
        match = _IDENTITY_OBJECT.search(event.summary)
        what = (match["x"] or match["w"] or match["y"]) if match else None
        if what or not _SELF_NAMED.search(event.summary):
            state.add(event, speaker, "person", "add_set_item", "identity",
                      _bounded(what) if what else event.title)  # fmt: skip


# ---------------------------------------------------------------- organizations, places


def _organizations_and_places(state: _Projection, event: EventCard) -> None:
    for org in find_organizations(event.summary, state.known):
        state.link(event, org.name, "organization", "mentioned_in", [org.surface])
    for place in find_places(event.summary, state.known):
        state.link(event, place.name, "place", "mentioned_in", [place.surface])
        if place.detail:
            state.add(event, place.name, "place", "set_relation", "located_in", place.detail)


# ---------------------------------------------------------------- projects


def _projects(state: _Projection, event: EventCard) -> None:
    speaker = state.person(event) or _speaker(event)
    declared = declared_project(event.summary)
    if declared and speaker:
        name = declared if declared != state.project or not state.shared_exists else SHARED_PROJECT
        aliases = [declared] if name == SHARED_PROJECT else []
        state.add(event, name, "project", "add_set_item", "built_by", speaker, aliases)
        for org in find_organizations(event.summary, state.known):
            if re.search(rf"\bfor\b[^.;]*{re.escape(org.surface)}", event.summary):
                state.add(event, name, "project", "set_relation", "client", org.name, aliases)
                break
    main = state.project
    parts = [p for p in find_projects(event.summary, state.known) if p.name != main]
    part = component(event.summary)
    for project in (*parts, *([part] if part else [])):
        aliases = [project.surface]
        if main and (project is part or project.name.casefold().startswith(main.casefold())):
            state.add(event, project.name, "project", "set_relation", "part_of", main, aliases)
        elif project.name != declared:
            state.link(event, project.name, "project", "mentioned_in", aliases)


def _subject(state: _Projection, event: EventCard, sentence: str) -> tuple[str, ElementType] | None:
    """What a choice is about (see rule 4); ``None`` for an unnamed role's "I …"."""
    part = component(sentence)
    if part is not None:
        return part.name, "project"
    named = find_projects(sentence, state.known)
    if named:
        return named[0].name, "project"
    if _FIRST_SINGULAR.search(sentence) and not _FIRST_PLURAL.search(sentence):
        person = state.person(event)
        return (person, "person") if person else None
    project = state.conversation_project
    return (project, "project") if project else None


# ---------------------------------------------------------------- tool state


def _clause(sentence: str, mention: Mention) -> tuple[str, str]:
    """The text of ``mention``'s clause before it and after it."""
    before = sentence[: mention.start]
    breaks = list(_CLAUSE_BREAK.finditer(before))
    head = before[breaks[-1].end() :] if breaks else before
    after = sentence[mention.end :]
    cut = _CLAUSE_BREAK.search(after)
    return head, after[: cut.start()] if cut else after


def _dropped(sentence: str, mention: Mention) -> bool:
    before = sentence[: mention.start]
    return bool(_DROP_BEFORE.search(before[-40:]) or _DROP_AFTER.search(sentence[mention.end :]))


def _key(state: _Projection, subject: tuple[str, ElementType], sentence: str,
         tool: Mention) -> str:  # fmt: skip
    """The state key a choice of ``tool`` sets (see the module rules)."""
    current = state.view.get((subject[1], subject[0].casefold()), {})
    holding = next((k for k, v in current.items() if v.casefold() == tool.name.casefold()), None)
    category = tool.detail or "uses"
    if category == "database":
        head, tail = _clause(sentence, tool)
        clause = f"{head} {tail}"
        if _SERVER.search(clause):
            return "server_database"
        if _MOBILE.search(clause):
            return "mobile_database"
    return holding if holding and holding.endswith(category) else category


def _tool_state(state: _Projection, event: EventCard) -> None:
    event_type = event.temporal.event_type if event.temporal else None
    if event_type not in ("change", "decision"):
        return
    sentence = _sentence(event)
    subject = _subject(state, event, sentence)
    if subject is None:
        return
    tools = find_tools(sentence)
    if not tools:
        _phrase_state(state, event, sentence, subject)
        return
    adopted: dict[str, list[Mention]] = {}
    dropped: list[Mention] = []
    for tool in tools:
        if _dropped(sentence, tool):
            dropped.append(tool)
        else:
            key = _key(state, subject, sentence, tool)
            if all(t.name != tool.name for t in adopted.get(key, [])):
                adopted.setdefault(key, []).append(tool)
    _, target = switch_targets(sentence)
    adopted = {key: _one_choice(sentence, tools, target) for key, tools in adopted.items()}
    hosting = next((t[0].name for k, t in adopted.items() if k == "hosting"), None)
    new_values: dict[str, str] = {}
    current = state.view.get((subject[1], subject[0].casefold()), {})
    for key, chosen in adopted.items():
        value = " + ".join(t.name for t in chosen)
        new_values[chosen[0].detail or key] = value
        earlier = current.get(key)
        if earlier and earlier.casefold() != value.casefold() and tool_named(earlier):
            state.add(event, earlier, "tool", "set_state", "replaced_by", value)
        state.add(event, subject[0], subject[1], "set_state", key, value,
                  state.project_aliases(subject[0]))  # fmt: skip
        for tool in chosen:
            state.add(event, tool.name, "tool", "add_set_item", "adopted_by", subject[0],
                      [tool.surface])  # fmt: skip
            if key == "hosting":
                _region(state, event, sentence, tool, subject)
    for tool in dropped:
        category = tool.detail or "uses"
        replacement = new_values.get(category)
        if replacement is None and _SELF_HOSTED.search(sentence):
            replacement = f"self-hosted on {hosting}" if hosting else "self-hosted"
            state.add(event, subject[0], subject[1], "set_state", category, replacement,
                      state.project_aliases(subject[0]))  # fmt: skip
        if replacement:
            state.add(event, tool.name, "tool", "set_state", "replaced_by", replacement,
                      [tool.surface])  # fmt: skip


def _one_choice(sentence: str, tools: list[Mention], target: str | None) -> list[Mention]:
    """The run of coordinated tools that is the choice: the one the switch phrase names, else
    the first ("switch to pnpm, npm is too slow" is pnpm, not pnpm + npm)."""
    runs: list[list[Mention]] = [[tools[0]]]
    for previous, tool in pairwise(tools):
        if _COORDINATED.match(sentence[previous.end : tool.start]):
            runs[-1].append(tool)
        else:
            runs.append([tool])
    if target:
        wanted = target.casefold()
        for run in runs:
            if any(t.surface.casefold() in wanted for t in run):
                return run
    return runs[0]


def _region(
    state: _Projection, event: EventCard, sentence: str, tool: Mention,
    subject: tuple[str, ElementType],
) -> None:  # fmt: skip
    """The hosting region: "Fly.io in the Tokyo region", 阿里云上海区域."""
    for place in find_places(sentence[tool.end :], state.known):
        if _REGION.match(sentence[tool.end + place.end :]):
            state.add(event, subject[0], subject[1], "set_state", "hosting_region", place.name,
                      state.project_aliases(subject[0]))  # fmt: skip
            return


def _product_like(phrase: str) -> bool:
    return (
        _PRODUCT_LIKE.match(phrase) is not None
        and _FILE_LIKE.search(phrase) is None
        and not find_time_expressions(phrase, _ANY_DAY)
        and phrase.split()[0] not in NON_NAME_WORDS
    )


def _phrase_state(
    state: _Projection, event: EventCard, sentence: str, subject: tuple[str, ElementType]
) -> None:
    """No catalogue tool: the switch or usage phrase, if it looks like a product or a place."""
    old, new = switch_targets(sentence)
    new = new or usage_target(sentence)
    if not new:
        return
    name, kind = subject
    places = find_places(new, state.known)
    moved = re.search(r"\bmoved\s+to\b|搬到", sentence, re.IGNORECASE)
    if moved and places and places[0].start == 0:
        place = places[0].name
        state.add(event, name, kind, "set_state", "location", place, state.project_aliases(name))
        state.add(event, place, "place", "add_set_item", "residents", name, [places[0].surface])
        return
    if not _product_like(new) or find_people(new, state.known):
        return
    current = state.view.get((kind, name.casefold()), {})
    key = next((k for k, v in current.items() if old and v.casefold() == old.casefold()), "uses")
    state.add(event, name, kind, "set_state", key, new, state.project_aliases(name))
    state.add(event, new, "tool", "add_set_item", "adopted_by", name)
    if old and _product_like(old):
        state.add(event, old, "tool", "set_state", "replaced_by", new)


def _launch_date(state: _Projection, event: EventCard) -> None:
    temporal = event.temporal
    if temporal is None or temporal.status != "planned" or temporal.precision != "day":
        return
    sentence = _sentence(event)
    said = temporal.original_text
    at = sentence.find(said) if said else -1
    if not said or at < 0 or temporal.happened_start is None:
        return
    lower = sentence.casefold()
    launch = [lower.find(w) for w in LAUNCH_WORDS if w in lower]
    before = any(0 <= i < at for i in launch)
    right_after = any(at + len(said) <= i <= at + len(said) + 2 for i in launch)
    subject = _subject(state, event, sentence)
    if (before or right_after) and subject is not None:
        name, kind = subject
        state.add(event, name, kind, "set_state", "launch_date", temporal.happened_start,
                  state.project_aliases(name))  # fmt: skip


def project_elements(ctx: ElementProjectionContext) -> ElementProjectionResult:
    """Element changes for the claimed batch, each citing only its own event (deterministic)."""
    state = _start(ctx)
    for event in ctx.events:
        _people(state, event)
        _organizations_and_places(state, event)
        _projects(state, event)
        _tool_state(state, event)
        _launch_date(state, event)
    reason = (
        f"{len(state.changes)} change(s) from {len(ctx.events)} event(s)"
        if state.changes
        else "no participants, preferences, identity statements, names or tool changes in the batch"
    )
    return ElementProjectionResult(reason=reason, changes=state.changes)


@dataclass(frozen=True, slots=True)
class OfflineElementProjector:
    """The ``element_projector`` callback: ``project_elements`` (picklable, stateless)."""

    def __call__(self, ctx: ElementProjectionContext) -> ElementProjectionResult:
        parsed = parse_input(ElementProjectionContext, ctx, what="projection context")
        return project_elements(parsed)


__all__ = [
    "EVENT_LINK_KEYS",
    "NAMEABLE_ROLES",
    "PARTICIPATION_LIMIT",
    "SHARED_PROJECT",
    "SPEAKER_ROLES",
    "OfflineElementProjector",
    "project_elements",
]
