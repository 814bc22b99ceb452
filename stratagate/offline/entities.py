"""Who and what a sentence names: tools, places, organizations, people, projects and roles.

Pure pattern rules over one piece of text, English and Chinese. ``Known`` carries names the
caller already knows (earlier elements, the conversation's context) so that a bare first name
("Priya") resolves to the full one ("Priya Raman") and an organization's first word
("Northridge") to the organization. Rules, in the order they claim text:

- tools: the catalogue's surface forms (``catalogue.TOOLS``), longest first;
- places: ``<Place or Capitalised> <facility>`` ("Kunming field station", 上海办公室), then the
  gazetteer (``catalogue.PLACES``) and known places; never a date;
- organizations: a capitalised phrase ending in an organization word ("Northridge Ecology
  Institute"), a Han name ending in 公司/研究所/大学 …, known organizations and their first word;
- projects: known projects, "we're building <Name>", "the <Name> app/project", code names
  introduced as a package/repo ("fieldnotes-sync");
- people: two to four capitalised words (a title such as "Dr." allowed) that are none of the
  above and contain no calendar or sentence word; a single word only when it is a known name,
  carries a title, or is followed by a role (", our designer", "(backend)"); Han names only after 我叫 / in brackets after a Latin name / before an
  honorific (先生, 博士 …), with a common surname.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache

from stratagate.offline.catalogue import (
    CASE_SENSITIVE_FORMS,
    FACILITY_WORDS,
    GEOGRAPHIC_WORDS,
    HAN_FACILITY_WORDS,
    HAN_HONORIFICS,
    HAN_ORG_SUFFIXES,
    HAN_SURNAMES,
    NON_NAME_WORDS,
    ORG_SUFFIXES,
    PERSON_TITLES,
    PLACES,
    REGIONS,
    TOOLS,
    Tool,
)
from stratagate.offline.temporal import MONTHS, WEEKDAYS

TEXT_CACHE_SIZE = 4096
"""Texts whose known-independent findings are remembered (the same titles recur per block)."""
_LATIN_BEFORE = r"(?<![A-Za-z\u00c0-\u024f0-9_.\-])"
_LATIN_AFTER = r"(?![A-Za-z\u00c0-\u024f0-9_\-]|\.[A-Za-z0-9])"
_WORD = r"[A-Z][a-z\u00df-\u00ff]+(?:[-'’][A-Z][a-z\u00df-\u00ff]+)*"
_HAN_CHAR = r"[\u4e00-\u9fff]"
_HAN_FACILITY_EN = {
    "野外站": "field station", "工作站": "station", "办公室": "office", "总部": "headquarters",
    "园区": "campus", "分公司": "branch",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Mention:
    """One thing named in a text: its canonical name, the words as written, where."""

    name: str
    surface: str
    start: int
    end: int
    kind: str
    detail: str | None = None
    """The tool's category, the city a facility lies in, or a person's title."""


@dataclass(slots=True)
class Known:
    """Names already known, by normalised form, mapping to their canonical names."""

    people: dict[str, str] = field(default_factory=dict)
    organizations: dict[str, str] = field(default_factory=dict)
    places: dict[str, str] = field(default_factory=dict)
    projects: dict[str, str] = field(default_factory=dict)
    _ambiguous: set[tuple[str, str]] = field(default_factory=set)

    def add_person(self, name: str, aliases: Iterable[str] = ()) -> None:
        """A person by full name; each single word of a multi-word name stands for them too."""
        for form in (name, *aliases):
            self._add("people", form, name)
            words = [w for w in form.split() if w.rstrip(".") not in PERSON_TITLES]
            if len(form.split()) > 1:
                for word in words:
                    self._add("people", word, name)

    def add_organization(self, name: str, aliases: Iterable[str] = ()) -> None:
        """An organization; the first word of a three-word-or-longer name stands for it too."""
        for form in (name, *aliases):
            self._add("organizations", form, name)
        words = name.split()
        if len(words) >= 3 and words[0] not in NON_NAME_WORDS and words[0] not in PLACES:
            self._add("organizations", words[0], name)

    def add_place(self, name: str, aliases: Iterable[str] = ()) -> None:
        for form in (name, *aliases):
            self._add("places", form, name)

    def add_project(self, name: str, aliases: Iterable[str] = ()) -> None:
        for form in (name, *aliases):
            self._add("projects", form, name)

    def _add(self, label: str, form: str, name: str) -> None:
        table: dict[str, str] = getattr(self, label)
        key = form.strip().casefold()
        if not key or (label, key) in self._ambiguous:
            return
        if table.get(key, name) != name:  # two people share a first name: neither is meant
            del table[key]
            self._ambiguous.add((label, key))
            return
        table[key] = name


# ---------------------------------------------------------------- tools


_FIRST_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_AFTER = re.compile(_LATIN_AFTER)


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """Fixed names indexed for fast lookup: Latin forms by their first word, Han forms listed."""

    latin: dict[str, tuple[str, ...]]
    han: tuple[str, ...]
    exact: frozenset[str]


def _lexicon(forms: Iterable[str], exact: Iterable[str] = ()) -> _Lexicon:
    latin: dict[str, list[str]] = {}
    han: list[str] = []
    for form in sorted(set(forms), key=len, reverse=True):
        first = _FIRST_WORD.match(form)
        if re.search(_HAN_CHAR, form) or first is None:
            han.append(form)
        else:
            latin.setdefault(first.group().casefold(), []).append(form)
    return _Lexicon({k: tuple(v) for k, v in latin.items()}, tuple(han), frozenset(exact))


def _lookup(text: str, lexicon: _Lexicon) -> list[tuple[str, int, int]]:
    """``(form, start, end)`` for every occurrence of a lexicon form in ``text``: Latin forms
    between word boundaries (case-insensitive unless listed as exact), Han forms anywhere."""
    found: list[tuple[str, int, int]] = []
    for word in _FIRST_WORD.finditer(text):
        start = word.start()
        if start and re.match(r"[A-Za-z\u00c0-\u024f0-9_.\-]", text[start - 1]):
            continue
        for form in lexicon.latin.get(word.group().casefold(), ()):
            end = start + len(form)
            written = text[start:end]
            same = (
                written == form if form in lexicon.exact else written.casefold() == form.casefold()
            )
            if same and _AFTER.match(text, end):
                found.append((form, start, end))
                break
    for form in lexicon.han:
        position = text.find(form)
        while position >= 0:
            found.append((form, position, position + len(form)))
            position = text.find(form, position + len(form))
    return found


@cache
def _tool_lexicon() -> tuple[_Lexicon, dict[str, Tool]]:
    by_form: dict[str, Tool] = {}
    for tool in TOOLS:
        for form in tool.surface_forms:
            by_form.setdefault(form.casefold(), tool)
    forms = [form for tool in TOOLS for form in tool.surface_forms]
    return _lexicon(forms, CASE_SENSITIVE_FORMS), by_form


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _tools_in(text: str) -> tuple[Mention, ...]:
    lexicon, by_form = _tool_lexicon()
    found = []
    for form, start, end in _lookup(text, lexicon):
        tool = by_form[form.casefold()]
        found.append(Mention(tool.name, text[start:end], start, end, "tool", tool.category))
    return tuple(_non_overlapping(found))


def find_tools(text: str) -> list[Mention]:
    """Known tools named in ``text``, left to right, longest form first where they overlap."""
    return list(_tools_in(text))


def tool_named(name: str) -> Tool | None:
    """The catalogue tool ``name`` is a surface form of, if any."""
    return _tool_lexicon()[1].get(name.strip().casefold())


# ---------------------------------------------------------------- places


@cache
def _gazetteer() -> tuple[_Lexicon, dict[str, str]]:
    canonical: dict[str, str] = {}
    for name, aliases in PLACES.items():
        for form in (name, *aliases):
            canonical[form] = name
    return _lexicon(canonical, canonical), canonical


_FACILITY = re.compile(
    rf"{_LATIN_BEFORE}(?P<base>{_WORD}(?:\s+{_WORD})?)\s+(?P<fac>"
    + "|".join(re.escape(w) for w in FACILITY_WORDS)
    + r")(?![A-Za-z])"
)
_HAN_FACILITY = re.compile("(?P<fac>" + "|".join(HAN_FACILITY_WORDS) + ")")
_GEOGRAPHIC = re.compile(
    rf"{_LATIN_BEFORE}(?P<base>{_WORD}(?:\s+{_WORD}){{0,2}})\s+(?P<geo>"
    + "|".join(re.escape(w) for w in GEOGRAPHIC_WORDS)
    + r")(?![A-Za-z])"
)
_CLIFFS = re.compile(rf"{_LATIN_BEFORE}((?:Cliffs|Mount|Lake|Isle)\s+of\s+{_WORD}|Mount\s+{_WORD})")
_REGION = re.compile(
    rf"{_LATIN_BEFORE}(" + "|".join(re.escape(r) for r in REGIONS) + r")(?![A-Za-z])"
)


def find_places(text: str, known: Known | None = None) -> list[Mention]:
    """Places named in ``text``: facilities of a place, gazetteer cities/countries, known ones."""
    lexicon, canonical = _gazetteer()
    cities = [
        Mention(canonical[form], form, start, end, "place")
        for form, start, end in _lookup(text, lexicon)
    ]
    found: list[Mention] = []
    for m in _FACILITY.finditer(text):
        base_words = [w for w in m["base"].split() if w not in NON_NAME_WORDS]
        base = " ".join(base_words)
        if not base or tool_named(base) is not None:
            continue
        city = canonical.get(base)
        start = m.start("base") + m["base"].index(base_words[0])
        name = f"{city or base} {m['fac'].lower()}"
        found.append(Mention(name, text[start : m.end()], start, m.end(), "place", city))
    for m in _GEOGRAPHIC.finditer(text):
        words = [w for w in m["base"].split() if w not in NON_NAME_WORDS]
        if words:
            start = m.start("base") + m["base"].index(words[0])
            name = f"{' '.join(words)} {m['geo']}"
            found.append(Mention(name, text[start : m.end()], start, m.end(), "place"))
    for m in _CLIFFS.finditer(text):
        found.append(Mention(m[1], m[1], m.start(1), m.end(1), "place"))
    for m in _REGION.finditer(text):
        found.append(Mention(m[1], m[1], m.start(1), m.end(1), "place"))
    for m in _HAN_FACILITY.finditer(text):
        near = next((c for c in cities if c.end == m.start()), None)
        if near is not None:
            name = f"{near.name} {_HAN_FACILITY_EN[m['fac']]}"
            found.append(Mention(name, text[near.start : m.end()], near.start, m.end(), "place",
                                 near.name))  # fmt: skip
    found.extend(cities)
    if known is not None:
        found.extend(_known_mentions(text, known.places, "place"))
    return _non_overlapping(found)


# ---------------------------------------------------------------- organizations

_ORG = re.compile(
    rf"{_LATIN_BEFORE}(?P<org>(?:(?:{_WORD}|[A-Z]{{2,}})\s+){{1,4}}(?:"
    + "|".join(sorted(ORG_SUFFIXES, key=len, reverse=True))
    + r")\b\.?)"
    + rf"|{_LATIN_BEFORE}(?P<of>(?:University|Institute|Academy|College|Museum|Bank|Ministry)"
    rf"\s+of\s+(?:the\s+)?{_WORD}(?:\s+{_WORD})*)"
)
_HAN_ORG = re.compile(
    rf"(?P<head>{_HAN_CHAR}{{1,8}}?)(?P<suffix>" + "|".join(HAN_ORG_SUFFIXES) + ")"
)
_HAN_ORG_BREAK = re.compile(r".*[在是的了和与跟从去到给为于我你他她它这那个们家所]")


def find_organizations(text: str, known: Known | None = None) -> list[Mention]:
    """Organizations named in ``text`` (see the module rules)."""
    found = list(_organizations_in(text))
    if known is not None:
        found.extend(_known_mentions(text, known.organizations, "organization"))
    return _non_overlapping(found)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _organizations_in(text: str) -> tuple[Mention, ...]:
    found: list[Mention] = []
    for m in _ORG.finditer(text):
        group = "org" if m["org"] else "of"
        words = m[group].split()
        while words and words[0] in NON_NAME_WORDS:
            words.pop(0)
        if len(words) < 2 or (group == "org" and words[-2] in NON_NAME_WORDS):
            continue
        name = " ".join(words).rstrip(".")
        start = m.start(group) + m[group].index(words[0])
        found.append(Mention(name, text[start : m.end(group)], start, m.end(group), "organization"))
    for m in _HAN_ORG.finditer(text):
        head = _HAN_ORG_BREAK.sub("", m["head"])
        if len(head) >= 2:
            start = m.end("head") - len(head)
            found.append(Mention(head + m["suffix"], text[start : m.end()], start, m.end(),
                                 "organization"))  # fmt: skip
    return tuple(found)


# ---------------------------------------------------------------- projects

_DECLARED = re.compile(
    r"\b(?i:we'?re|we\s+are|i'?m|i\s+am)\s+(?i:currently\s+|now\s+)?"
    r"(?i:building|developing|making|creating|working\s+on)\s+(?P<name>[A-Z][\w.+-]*[\w+])"
    r"|(?:我们在做|我们正在做|我们在开发|我们正在开发|我们做的是)\s*(?P<han>[A-Za-z][\w.+-]*[\w+])"
)
_NAMED_PROJECT = re.compile(
    r"\b(?P<a>[A-Z][\w.-]*\w)\s+(?i:project|repo|app|service)\b|\b(?i:project|repo)\s+"
    r"(?P<b>[A-Z][\w.-]*\w)"
)
_CODE_NAME = re.compile(
    r"\b(?i:package|library|repo|repository|module|service|sub-?project)\s*,?\s+"
    r"(?P<a>[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w.-])"
    r"|(?<![\w.-])(?P<b>[a-z][a-z0-9]*(?:-[a-z0-9]+)+)\s+(?i:package|library|repo|module)\b"
)
_COMPONENT = re.compile(
    r"\b(?i:the|our)\s+(?:(?P<q>web|admin|mobile|internal|[A-Z][\w.]*)\s+)?"
    r"(?P<c>dashboard|website|admin\s+panel|landing\s+page)\b"
)


def declared_project(text: str) -> str | None:
    """The project the speaker says they are building ("We're building Fieldnotes, …")."""
    for m in _DECLARED.finditer(text):
        name = m["name"] or m["han"]
        if _plain_name(name):
            return name
    return None


def find_projects(text: str, known: Known | None = None) -> list[Mention]:
    """Projects named in ``text``: declared, "the X app/project", code names, known ones."""
    found: list[Mention] = []
    for pattern, groups in ((_DECLARED, ("name", "han")), (_NAMED_PROJECT, ("a", "b")),
                            (_CODE_NAME, ("a", "b"))):  # fmt: skip
        for m in pattern.finditer(text):
            group = next(g for g in groups if m[g])
            if pattern is _CODE_NAME or _plain_name(m[group]):
                found.append(Mention(m[group], m[group], m.start(group), m.end(group), "project"))
    if known is not None:
        found.extend(_known_mentions(text, known.projects, "project"))
    return _non_overlapping(found)


def component(text: str) -> Mention | None:
    """A part of the product named as "the (web) dashboard", "the website" …: the element is
    named by the part ("dashboard"), the qualifier goes to the surface ("web dashboard")."""
    m = _COMPONENT.search(text)
    if m is None:
        return None
    name = " ".join(m["c"].lower().split())
    surface = f"{m['q']} {name}" if m["q"] else name
    return Mention(name, surface, m.start(), m.end(), "project", m["q"])


def _plain_name(name: str) -> bool:
    """A proper name that is not a sentence word, tool or place."""
    return (
        name not in NON_NAME_WORDS
        and tool_named(name) is None
        and name not in PLACES
        and not _is_calendar(name)
    )


# ---------------------------------------------------------------- people

_TITLES = "|".join(sorted(PERSON_TITLES, key=len, reverse=True))
_NAME_WORD = rf"(?!(?:{_TITLES})\b){_WORD}"
_PERSON = re.compile(
    rf"{_LATIN_BEFORE}(?:(?P<title>{_TITLES})\.?\s+)?(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,3}})"
    r"(?:['’]s)?(?![A-Za-z\u00c0-\u024f0-9_])"
)
_ROLE_AFTER_SINGLE = re.compile(r"\s*(?:,\s*(?:our|my|the|their)\s+[a-z]|[(（]\s*[a-z])")
_HAN_NAME_CUE = re.compile(
    rf"(?:我叫|我的名字是|名叫|叫做)(?P<a>{_HAN_CHAR}{{2,3}}?)(?=[，。,.！!\s]|$|是)"
)
_HAN_HONORIFIC = re.compile("|".join(HAN_HONORIFICS))
_BRACKETED_HAN = re.compile(rf"\s*[(（](?P<han>{_HAN_CHAR}{{2,4}})[)）]")


def find_people(text: str, known: Known | None = None) -> list[Mention]:
    """People named in ``text`` (see the module rules), with canonical names where known."""
    return list(_people_in(text)) if known is None else _find_people(text, known)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _people_in(text: str) -> tuple[Mention, ...]:
    return tuple(_find_people(text, Known()))


def _find_people(text: str, known: Known) -> list[Mention]:
    taken = [
        *find_tools(text), *find_places(text, known), *find_organizations(text, known),
        *find_projects(text, known), *_titles_of_works(text),
    ]  # fmt: skip
    found: list[Mention] = []
    for m in _PERSON.finditer(text):
        title = m["title"]
        runs = _name_runs(text, m.start("name"), m.end("name"), taken)
        for start, end in _known_split(text, _sentence_start_trimmed(text, runs), known):
            surface = text[start:end]
            words = surface.split()
            canonical = known.people.get(surface.casefold())
            at_title = title is not None and start == m.start("name")
            if len(words) == 1 and canonical is None:
                after = text[end:]
                after = after[2:] if after[:2] in ("'s", "’s") else after
                cued = _ROLE_AFTER_SINGLE.match(after) or _PERSON_CUE_BEFORE.search(text[:start])
                if not (at_title or cued):
                    continue
            name = canonical or surface
            begin = m.start() if at_title else start
            found.append(Mention(name, text[begin:end], begin, end, "person",
                                 title if at_title else None))  # fmt: skip
    found.extend(_han_people(text, known))
    return _non_overlapping(found)


_WORK_QUOTE = re.compile(r"[\"“”«»]([^\"“”«»]{1,80})[\"“”«»]")
_WORK_CUE = re.compile(
    r"\b(?:called|titled|watched|watching|read|reading|played|playing|play|book|novel|movie|"
    r"film|song|album|show|series|game)\s+$",
    re.IGNORECASE,
)
_PERSON_CUE_BEFORE = re.compile(
    r"(?:(?<!cat )(?<!dog )(?<!pet )(?<!puppy )(?<!kitten )(?<!turtle )\bnamed|"
    r"\b(?i:my|our|his|her|their)\s+(?:friend|colleague|coworker|co-worker|boss|daughter|son|"
    r"wife|husband|partner|mom|mother|dad|father|brother|sister|cousin|aunt|uncle|grandma|"
    r"grandmother|grandpa|grandfather|neighbou?r|teacher|coach|mentor|manager)|"
    r"\bby)\s+$"
)
"""Words right before a single capitalised word that make it a person: "someone named David",
"my colleague Rob", "a book by Herbert" (not "a cat named Bailey")."""
_SENTENCE_OPENER = re.compile(r"^(?:\w+(?:ing|ed|ly)|Yep|Yup|Woah|Whoa|Wow|Plus|Glad|Aww|Yay)$")
"""A capitalised first word of a sentence that is not part of the name after it ("Seeing
Melanie", "Lately John", "Glad Max")."""


def _titles_of_works(text: str) -> list[Mention]:
    """Quoted titles ("Little Women") and capitalised phrases right after "called", "watched",
    "reading" …: the names of works, never people."""
    found = [Mention(m[1], m[1], m.start(1), m.end(1), "work") for m in _WORK_QUOTE.finditer(text)]
    for m in re.finditer(rf"{_WORD}(?:\s+(?:of\s+the\s+|of\s+)?{_WORD})*", text):
        if _WORK_CUE.search(text[: m.start()]):
            found.append(Mention(m.group(), m.group(), m.start(), m.end(), "work"))
    return found


def _sentence_start_trimmed(text: str, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs without a sentence's capitalised opener ("Seeing Melanie" → "Melanie")."""
    trimmed = []
    for start, end in runs:
        first = re.match(r"\S+", text[start:end])
        at_start = not text[:start].strip() or text[:start].rstrip()[-1:] in '.!?"“:;'
        if first and at_start and _SENTENCE_OPENER.match(first.group()):
            rest = text[start + first.end() : end].lstrip()
            if not rest:
                continue
            start = end - len(rest)
        trimmed.append((start, end))
    return trimmed


def _known_split(text: str, runs: list[tuple[int, int]], known: Known) -> list[tuple[int, int]]:
    """A run that is not a known name but holds one ("Now Caroline", "Reminds Melanie") gives
    the known name alone."""
    split: list[tuple[int, int]] = []
    for start, end in runs:
        surface = text[start:end]
        words = list(re.finditer(r"\S+", surface))
        if len(words) < 2 or surface.casefold() in known.people:
            split.append((start, end))
            continue
        named = [w for w in words if w.group().casefold() in known.people]
        if not named:
            split.append((start, end))
            continue
        split.extend((start + w.start(), start + w.end()) for w in named)
    return split


def _name_runs(text: str, start: int, end: int, taken: list[Mention]) -> list[tuple[int, int]]:
    """The stretches of a capitalised run that can be a name: sentence, calendar and job words
    and anything already claimed (a tool, place, organization or project) split it."""
    runs: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for word in re.finditer(r"\S+", text[start:end]):
        w_start, w_end = start + word.start(), start + word.end()
        blocked = (
            word.group() in NON_NAME_WORDS
            or _is_calendar(word.group())
            or any(t.start < w_end and w_start < t.end for t in taken)
        )
        if blocked:
            if current:
                runs.append(current)
            current = None
        else:
            current = (current[0], w_end) if current else (w_start, w_end)
    if current:
        runs.append(current)
    return runs


def _han_people(text: str, known: Known) -> list[Mention]:
    found: list[Mention] = []
    for m in _HAN_NAME_CUE.finditer(text):
        if m["a"][0] in HAN_SURNAMES:
            found.append(Mention(known.people.get(m["a"], m["a"]), m["a"], m.start("a"),
                                 m.end("a"), "person"))  # fmt: skip
    for m in _HAN_HONORIFIC.finditer(text):  # 王磊先生, 张小明博士: a surname and one or two more
        for size in (2, 3):
            name = text[max(0, m.start() - size) : m.start()]
            if (
                len(name) == size
                and re.fullmatch(rf"{_HAN_CHAR}+", name)
                and (name[0] in HAN_SURNAMES)
            ):
                found.append(Mention(known.people.get(name, name), name, m.start() - size,
                                     m.start(), "person"))  # fmt: skip
                break
    for form, canonical in known.people.items():
        if re.search(_HAN_CHAR, form):
            for m in re.finditer(re.escape(form), text):
                found.append(Mention(canonical, form, m.start(), m.end(), "person"))
    return found


def bracketed_alias(text: str, mention: Mention) -> str | None:
    """A Han name in brackets right after a Latin name: "Wang Lei (王磊)" → "王磊"."""
    m = _BRACKETED_HAN.match(text, mention.end)
    return m["han"] if m and m["han"][0] in HAN_SURNAMES else None


# ---------------------------------------------------------------- roles

_ROLE = (
    r"[a-z][a-z-]*(?:\s+(?!(?:is|was|and|or|to|with|at|from|of|on|in|for|who)\b)[a-z][a-z-]*){0,2}"
)
_ORG_REF = r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*"
_ROLE_AFTER = [
    re.compile(rf"\s+(?:is|was)\s+(?:our|my|the|their|a|an)\s+(?:new\s+)?(?P<role>{_ROLE})"),
    re.compile(rf"\s*,\s*(?:our|my|the|their)\s+(?:new\s+)?(?P<role>{_ROLE})(?=\s*[,.;:)]|\s*$)"),
    re.compile(
        r"\s*,\s*who\s+(?P<role>(?:runs|leads|heads|manages|owns|coordinates|works\s+at)\s+"
        r"[^,.;:!?]+)"
    ),
    re.compile(r"\s*[(（]\s*(?P<role>(?!(?:she|he|they|we|i|it)\b)[a-z][a-z -]{1,30}?)\s*[,)）]"),
    re.compile(
        r"\s+(?:does|handles|runs|leads)\s+the\s+(?P<role>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)"
        r"(?=\s*[,.;:]|\s+and\b|\s*$)"
    ),
    re.compile(rf"\s*是(?:我们的|我的|我们|)(?P<role>{_HAN_CHAR}{{2,6}}?)(?=[，。,.；;！!]|$)"),
]
_ROLE_BEFORE = [
    re.compile(
        rf"(?:our|my|the|their)\s+(?P<role>{_ROLE})(?:\s+(?:at|from|of)\s+(?P<org>{_ORG_REF}))?"
        r"\s+(?:is\s+|was\s+)?$"
    ),
    re.compile(r"(?P<role>设计师|工程师|产品经理|经理|负责人|联系人|总监|客户)\s*$"),
]
_NOT_ROLES = frozenset({"team", "same", "other", "first", "last", "next", "way", "one"})


@dataclass(frozen=True, slots=True)
class Role:
    """What a text says a person is ("designer"), and where when it says so ("Northridge")."""

    role: str
    organization: str | None = None


def role_of(text: str, person: Mention) -> Role | None:
    """The role ``text`` gives ``person`` ("Priya, our designer", "our client contact at
    Northridge is Dr. Helen Okafor", "Tomás (backend)", "Tomás does the backend")."""
    for pattern in _ROLE_AFTER:
        m = pattern.match(text, person.end)
        if m and m["role"].strip() not in _NOT_ROLES:
            return Role(m["role"].strip())
    head = text[: person.start]
    for pattern in _ROLE_BEFORE:
        m = pattern.search(head)
        if m and m["role"].strip() not in _NOT_ROLES:
            org = m.groupdict().get("org")
            return Role(m["role"].strip(), org)
    return None


# ---------------------------------------------------------------- helpers


def _is_calendar(word: str) -> bool:
    lower = word.casefold().rstrip(".")
    return lower in MONTHS or lower in WEEKDAYS


def _known_mentions(text: str, table: dict[str, str], kind: str) -> list[Mention]:
    found = []
    for form, canonical in table.items():
        pattern = (
            re.escape(form)
            if re.search(_HAN_CHAR, form)
            else rf"{_LATIN_BEFORE}{re.escape(form)}(?:['’]s)?{_LATIN_AFTER}"
        )
        for m in re.finditer(pattern, text, re.IGNORECASE):
            surface = re.sub(r"['’]s$", "", m.group())
            found.append(Mention(canonical, surface, m.start(), m.start() + len(surface), kind))
    return found


def _non_overlapping(found: list[Mention]) -> list[Mention]:
    """Earliest first; of overlapping mentions the longer one wins."""
    chosen: list[Mention] = []
    for mention in sorted(found, key=lambda m: (m.start, -(m.end - m.start), m.name)):
        if all(mention.start >= c.end or mention.end <= c.start for c in chosen):
            chosen.append(mention)
    return sorted(chosen, key=lambda m: m.start)


__all__ = [
    "Known",
    "Mention",
    "Role",
    "bracketed_alias",
    "component",
    "declared_project",
    "find_organizations",
    "find_people",
    "find_places",
    "find_projects",
    "find_tools",
    "role_of",
    "tool_named",
]
