"""The offline extractor: event cards from the target block's own sentences, no model.

A sentence becomes a candidate event when it carries a signal (cancellation, change, decision,
plan, assignment, preference, identity, introduction of a person, a first-person happening
such as "I joined …") or a time expression the resolver can place. Only the target block's
messages are read as sources; the neighbouring blocks and the timeline are context (the
people they name count as known, so "Priya" resolves to "Priya Raman"), never a source.
Unnamed assistant messages (a model's own words) contribute decisions and changes only, and
none that merely echoes an earlier sentence of the block.

Participants are the speaker, known speakers mentioned, and the people the sentence names
(``entities.find_people``). A sentence with no time of its own that is followed by one that
only dates it ("The prototype is done! Finished it this afternoon.") takes that time. An
event supersedes (``supersedes_event_ids``), in this order: for a cancellation, the latest
planned event about the same thing (a shared topic word, ``catalogue.TOPIC_GROUPS`` bridging
English and Chinese), whose dates it also takes when it has none; for a change, the latest
event naming the tool it moves away from, else the latest decision naming another tool of the
same category, else (for a dated change) the latest planned event on the same topic with
another date. Candidates are the timeline and the block's earlier events; an event is
superseded at most once per block. A sibling that is superseded gets the id
``<block id>-e<n>`` so that the reference can name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from stratagate.core.search_text import stem
from stratagate.models import (
    Criticality,
    EventCardInput,
    EventTemporal,
    ExtractionContext,
    ExtractionResult,
    MemoryBlock,
    RawMessage,
    TemporalStatus,
    TimelineEntry,
    parse_input,
)
from stratagate.offline.budget import within_budget
from stratagate.offline.catalogue import TOPIC_GROUPS, TOPIC_STOP_WORDS
from stratagate.offline.cues import Kind, is_cancelled, is_ongoing, kinds, switch_targets, tense
from stratagate.offline.entities import (
    Known,
    find_organizations,
    find_people,
    find_places,
    find_tools,
)
from stratagate.offline.temporal import MONTHS, WEEKDAYS, TimeResolution, find_time_expressions
from stratagate.offline.text import (
    clean,
    content_words,
    has_han,
    split_sentences,
    truncate,
    words,
)
from stratagate.timeutil import format_utc, partial_bounds

EVENT_TYPES: dict[Kind, str] = {
    "cancellation": "plan",
    "change": "change",
    "decision": "decision",
    "plan": "plan",
    "preference": "preference",
    "identity": "identity",
    "introduction": "introduction",
    "assignment": "assignment",
    "activity": "activity",
    "milestone": "happening",
}
"""The ``event_type`` each signal gives; a sentence with only a time expression is a happening."""

NO_EVENTS_REASON = (
    "no decision, preference, plan, change, identity statement or dated happening in the target"
)
MAX_CONTINUATION = 2
"""Following sentences of the same message an event's summary may carry (not questions)."""
KNOWN_FROM_TIMELINE = 200
"""How many of the latest timeline titles are read for names of known people."""
_UNNAMED_ASSISTANT_KINDS: frozenset[Kind] = frozenset({"decision", "change", "cancellation"})
_LEAD_IN = re.compile(
    r"^(?:(?:oh|wow|yeah|yep|yes|so|and|but|well|hey|btw|by\s+the\s+way|anyway|guess\s+what|"
    r"haha|lol|ok|okay|plus|also|actually|woo+|woah|whoa|aww+|hmm+|ah|um+|omg|then|"
    r"(?:bad|good|great|sad)\s+news|update|fyi|heads\s+up|reminder|another\s+preference)"
    r"\b[\s,!.:?\-–—]*)+",
    re.IGNORECASE,
)
_BACK_REFERENCE = re.compile(r"\b(?:it|that|them)\b", re.IGNORECASE)
_TOPIC_INDEX = {word: min(group) for group in TOPIC_GROUPS for word in group}
_FIRST_PERSON = [
    (re.compile(r"^i'?m\b|^i\s+am\b", re.IGNORECASE), "{name} is"),
    (re.compile(r"^i'?ve\b|^i\s+have\b", re.IGNORECASE), "{name} has"),
    (re.compile(r"^i'?ll\b|^i\s+will\b", re.IGNORECASE), "{name} will"),
    (re.compile(r"^i'?d\b", re.IGNORECASE), "{name} would"),
    (re.compile(r"^i\b", re.IGNORECASE), "{name}"),
    (re.compile(r"^my\b", re.IGNORECASE), "{name}'s"),
    (re.compile(r"^我(?!们)"), "{name}"),
]
_A = "['\u2019]"
_FIRST_PERSON_ANYWHERE = [
    (re.compile(rf"\bI{_A}m\b|\bI\s+am\b"), "{name} is"),
    (re.compile(rf"\bI{_A}ve\b|\bI\s+have\b"), "{name} has"),
    (re.compile(rf"\bI{_A}ll\b"), "{name} will"),
    (re.compile(rf"\bI{_A}d\b"), "{name} would"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"\b[Mm]y\b|\bmine\b"), "{name}'s"),
    (re.compile(r"(?<![\w-])(?:[Mm]e|myself)(?![\w-])"), "{name}"),
]
"""First-person words anywhere in an English sentence, and their third-person form."""
_SKIP_SENTENCE = re.compile(r"^\[image:", re.IGNORECASE)


@dataclass(slots=True)
class _Candidate:
    sentence: str
    message: RawMessage
    speaker: str
    kinds: tuple[Kind, ...]
    time: TimeResolution | None
    status: TemporalStatus
    participants: tuple[str, ...]
    content: frozenset[str]
    order: int
    extra_message_ids: list[str] = field(default_factory=list)
    continuation: list[str] = field(default_factory=list)

    @property
    def event_type(self) -> str:
        return EVENT_TYPES[self.kinds[0]] if self.kinds else "happening"

    @property
    def rank(self) -> int:
        """0 for signals and dated sentences, 1 for undated first-person happenings."""
        return 1 if self.time is None and self.kinds[:1] in ((), ("milestone",)) else 0


def _speaker(message: RawMessage) -> str:
    return message.name or message.role


def _known_speakers(ctx: ExtractionContext) -> list[str]:
    blocks: list[MemoryBlock] = [b for b in (ctx.previous, ctx.target, ctx.next) if b is not None]
    names: dict[str, None] = {}
    for block in blocks:
        for message in block.l5_raw:
            if message.name:
                names.setdefault(message.name, None)
    return list(names)


def _known_people(ctx: ExtractionContext, speakers: list[str]) -> Known:
    """Speakers, and the organizations and full names said in the three blocks, the latest
    timeline titles and their participants."""
    known = Known()
    for speaker in speakers:
        known.add_person(speaker)
    recent = ctx.timeline[-KNOWN_FROM_TIMELINE:]
    for entry in recent:
        for name in entry.temporal.participants if entry.temporal else []:
            if " " in name:
                known.add_person(name)
    texts = [
        *(e.title for e in recent),
        *(
            m.content
            for block in (ctx.previous, ctx.target, ctx.next)
            if block is not None
            for m in within_budget(block.l5_raw)
        ),
    ]
    for text in texts:
        for organization in find_organizations(text):
            known.add_organization(organization.name)
    for text in texts:
        for person in find_people(text, known):
            if " " in person.name:
                known.add_person(person.name)
    return known


def _mentioned(sentence: str, names: list[str]) -> list[str]:
    return [name for name in names if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", sentence)]


def _status(
    sentence: str, signal: tuple[Kind, ...], time: TimeResolution | None, said: datetime,
    direction: str | None,
) -> TemporalStatus:  # fmt: skip
    if is_cancelled(sentence):
        return "cancelled"
    if time is not None:
        start = partial_bounds(time.happened_start)[0]
        end = partial_bounds(time.happened_end)[1]
        day_start, day_end = partial_bounds(said.date().isoformat())
        if end <= day_start:
            return "occurred"
        if start >= day_end:
            return "planned"
    if signal[:1] in (("preference",), ("identity",)):
        return "ongoing"
    if direction == "future" or "plan" in signal:
        return "planned"
    if is_ongoing(sentence) or signal[:1] == ("activity",):
        return "ongoing"
    if direction == "past" or "milestone" in signal:
        return "occurred"
    return "unknown"


def _lead_in_time(sentence: str, message: RawMessage) -> TimeResolution | None:
    """The time a skipped sentence sets up for the next one ("Guess what I did this week?")."""
    found = find_time_expressions(sentence, message.created_at, tense=tense(sentence))
    return replace(found[0], basis="inferred") if found else None


_SELF_INTRODUCTION = re.compile(r"\b(?:i'?m|i\s+am|my\s+name\s+is)\s+$|我叫$", re.IGNORECASE)


def _participants(text: str, speaker: str, speakers: list[str], known: Known) -> tuple[str, ...]:
    """The speaker, known speakers mentioned, and the people named (not the speaker's own name
    in "I'm Lin Wei")."""
    named = [
        p.name for p in find_people(text, known)
        if not _SELF_INTRODUCTION.search(text[: p.start])
    ]  # fmt: skip
    found = [speaker, *_mentioned(text, speakers), *named]
    return tuple(dict.fromkeys(name for name in found if name))


def _inside(inner: TimeResolution, outer: TimeResolution) -> bool:
    start, end = partial_bounds(outer.happened_start)[0], partial_bounds(outer.happened_end)[1]
    return start <= partial_bounds(inner.happened_start)[0] and (
        partial_bounds(inner.happened_end)[1] <= end
    )


def _pick_time(
    times: list[TimeResolution], lead_in: TimeResolution | None
) -> TimeResolution | None:
    """The first explicit or relative expression (else the first one, else the lead-in); a
    month or year is narrowed by a day inside it ("下个月上线，目标是四月二十号")."""
    time = next((t for t in times if t.basis != "inferred"), times[0] if times else lead_in)
    if time is not None and time.precision in ("month", "year"):
        inner = [t for t in times if t.precision == "day" and t is not time and _inside(t, time)]
        if inner:
            return inner[0]
    return time


def _candidate(
    sentence: str,
    message: RawMessage,
    speakers: list[str],
    known: Known,
    order: int,
    min_content_words: int,
    lead_in: TimeResolution | None = None,
) -> _Candidate | None:
    if _SKIP_SENTENCE.match(sentence) or sentence.rstrip().endswith(("?", "？")):
        return None
    signal = tuple(kinds(sentence))
    if message.role == "assistant" and not message.name:
        signal = tuple(kind for kind in signal if kind in _UNNAMED_ASSISTANT_KINDS)
        if not signal:
            return None
    direction = tense(sentence)
    if direction is None and "plan" in signal:
        direction = "future"
    cancelled = is_cancelled(sentence)  # "cancelled" is no past marker for the plan's date
    times = find_time_expressions(
        sentence, message.created_at, tense=None if cancelled else direction
    )
    if not signal and not times and not _names_someone(sentence, speakers, known):
        return None
    content = content_words(sentence)
    if len(set(content)) < min_content_words:
        return None
    speaker = _speaker(message)
    time = _pick_time(times, lead_in)
    return _Candidate(
        sentence=clean(sentence),
        message=message,
        speaker=speaker,
        kinds=signal,
        time=time,
        status=_status(sentence, signal, time, message.created_at, direction),
        participants=_participants(sentence, speaker, speakers, known),
        content=frozenset(content),
        order=order,
    )


def _names_someone(sentence: str, speakers: list[str], known: Known) -> bool:
    """The sentence names a person other than the speakers, a place or an organization: what
    it says about them is worth an event of its own (an introduction, a trip, a book's author).
    Not when it names a tool: tool talk counts through its decision and change signals, and a
    bare mention ("Fly.io in Tokyo is out") would stand in for the decision a switch replaces."""
    if find_tools(sentence):
        return False
    if find_places(sentence, known) or find_organizations(sentence, known):
        return True
    own = {speaker.casefold() for speaker in speakers}
    return any(p.name.casefold() not in own for p in find_people(sentence, known))


def _dates_previous(current: _Candidate, found: _Candidate) -> bool:
    """``found`` only dates ``current``: "The prototype is done! Finished it this afternoon."."""
    return (
        current.time is None
        and not current.continuation
        and current.kinds[:1] in ((), ("milestone",), ("activity",))
        and found.time is not None
        and not found.kinds
        and _BACK_REFERENCE.search(found.sentence) is not None
    )


def _continues(sentence: str, current: _Candidate, min_content_words: int) -> bool:
    """A following sentence of the same message that tells more of the same story."""
    if len(current.continuation) >= MAX_CONTINUATION or _SKIP_SENTENCE.match(sentence):
        return False
    if sentence.rstrip().endswith(("?", "？")):
        return False
    return len(set(content_words(sentence))) >= min_content_words


def _near_duplicate(a: frozenset[str], b: frozenset[str], threshold: float = 0.8) -> bool:
    union = a | b
    return bool(union) and len(a & b) / len(union) >= threshold


def _echoes(candidate: _Candidate, earlier: _Candidate) -> bool:
    """An unnamed assistant's acknowledgement that only restates an earlier sentence ("Let's
    switch to pnpm" → "Switching to pnpm."): every content word of it, stemmed, is in that one."""
    if candidate.message.role != "assistant" or candidate.message.name:
        return False
    return {stem(w) for w in candidate.content} <= {stem(w) for w in earlier.content}


def _deduplicate(candidates: list[_Candidate]) -> list[_Candidate]:
    """Near-duplicates merge into the first (its sources grow); assistant echoes are dropped."""
    kept: list[_Candidate] = []
    for candidate in candidates:
        if any(_echoes(candidate, k) for k in kept):
            continue
        twin = next((k for k in kept if _near_duplicate(k.content, candidate.content)), None)
        if twin is None:
            kept.append(candidate)
        elif candidate.message.id != twin.message.id and (
            candidate.message.id not in twin.extra_message_ids
        ):
            twin.extra_message_ids.append(candidate.message.id)
    return kept


def third_person(text: str, name: str | None) -> str:
    """``text`` with the speaker's first-person words replaced by their name ("I'm" → "Caroline
    is", "my" → "Caroline's", "me" → "Caroline"): a card reads the same whoever reads it. A
    leading 我 becomes the name too; an unnamed speaker (a bare role) keeps the text as is."""
    if not name:
        return text
    for pattern, replacement in _FIRST_PERSON_ANYWHERE:
        text = pattern.sub(replacement.format(name=name), text)
    for pattern, replacement in _FIRST_PERSON:
        if pattern.search(text):
            return pattern.sub(replacement.format(name=name), text, count=1)
    return text


def _title(candidate: _Candidate, limit: int = 80) -> str:
    text = _LEAD_IN.sub("", candidate.sentence).strip() or candidate.sentence
    text = third_person(text, candidate.message.name)
    text = text[0].upper() + text[1:] if text else text
    return truncate(text.rstrip(" .!?。！？"), limit)


def _tags(candidate: _Candidate, limit: int = 6) -> list[str]:
    tags: dict[str, None] = {}
    for word in content_words(" ".join([candidate.sentence, *candidate.continuation])):
        tags.setdefault(word, None)
    return [*list(tags)[: limit - 1], candidate.event_type]


def _criticality(candidate: _Candidate) -> Criticality:
    if "identity" in candidate.kinds[:1]:
        return "identity"
    if "preference" in candidate.kinds[:1]:
        return "preference"
    return "routine"


@dataclass(frozen=True, slots=True)
class _Earlier:
    """An event this one may supersede: a timeline entry (by id) or an earlier sibling."""

    ref: str | int
    title: str
    temporal: EventTemporal | None


def _topics(text: str) -> set[str]:
    """Topic words: content words minus cue, calendar and capitalised (name) words, with the
    bilingual topic groups folded to one word each."""
    names = {w.casefold() for w in re.findall(r"\b[A-Z][\w'’-]*", text)}
    found = set()
    for word in content_words(text):
        if word in TOPIC_STOP_WORDS or word in names or word in MONTHS or word in WEEKDAYS:
            continue
        found.add(_TOPIC_INDEX.get(word, word))
    for word, group in _TOPIC_INDEX.items():
        if has_han(word) and word in text:  # jieba may cut a Han topic word differently
            found.add(group)
    return found


def _status_of(earlier: _Earlier) -> str | None:
    return earlier.temporal.status if earlier.temporal else None


def _supersedes(candidate: _Candidate, earlier: list[_Earlier]) -> _Earlier | None:
    """The one earlier event this candidate replaces (see the module rules), latest first."""
    newest_first = list(reversed(earlier))
    sentence = candidate.sentence
    if candidate.status == "cancelled":
        topics = _topics(sentence)
        return next(
            (e for e in newest_first
             if _status_of(e) == "planned" and topics & _topics(e.title)),
            None,
        )  # fmt: skip
    if "change" not in candidate.kinds:
        return None
    old, _ = switch_targets(sentence)
    if old:
        return next(
            (e for e in newest_first if _names(e.title, old) and not _same_switch(e, old)),
            None,
        )
    for tool in find_tools(sentence):
        for entry in newest_first:
            others = {t.name for t in find_tools(entry.title) if t.detail == tool.detail}
            if others and tool.name not in others:
                return entry
    time = candidate.time
    if time is not None and time.precision in ("day", "range"):
        topics = _topics(sentence)
        return next(
            (e for e in newest_first
             if _status_of(e) == "planned" and topics & _topics(e.title) and e.temporal
             and e.temporal.happened_start not in (None, time.happened_start)),
            None,
        )  # fmt: skip
    return None


def _names(title: str, old: str) -> bool:
    """``title`` names ``old``: the same catalogue tool (any spelling), else all its words."""
    tools = {t.name for t in find_tools(old)}
    if tools:
        return bool(tools & {t.name for t in find_tools(title)})
    wanted = set(words(old))
    return bool(wanted) and wanted <= set(words(title))


def _same_switch(earlier: _Earlier, old: str) -> bool:
    """An earlier change away from the same thing (a restatement, not what is replaced)."""
    if earlier.temporal is None or earlier.temporal.event_type != "change":
        return False
    earlier_old, _ = switch_targets(earlier.title)
    return bool(earlier_old) and _names(earlier_old or "", old)


def _links(
    kept: list[_Candidate], timeline: list[TimelineEntry]
) -> list[tuple[_Earlier | None, str | int | None]]:
    """For each candidate: the earlier event it relates to, and the one it supersedes."""
    earlier = [_Earlier(e.id, e.title, e.temporal) for e in timeline]
    used: set[str | int] = set()
    links: list[tuple[_Earlier | None, str | int | None]] = []
    for index, candidate in enumerate(kept):
        match = _supersedes(candidate, earlier)
        superseded = match.ref if match is not None and match.ref not in used else None
        if superseded is not None:
            used.add(superseded)
        links.append((match, superseded))
        temporal = EventTemporal(
            happened_start=candidate.time.happened_start if candidate.time else None,
            status=candidate.status,
            event_type=candidate.event_type,
        )
        earlier.append(_Earlier(index, _title(candidate), temporal))
    return links


def _event(
    candidate: _Candidate,
    target: MemoryBlock,
    related: _Earlier | None,
    supersedes: list[str],
    event_id: str | None,
) -> EventCardInput:
    time = candidate.time
    times = {
        "happened_start": time.happened_start if time else None,
        "happened_end": time.happened_end if time else None,
        "original_text": time.original_text if time else None,
        "precision": time.precision if time else "unknown",
        "basis": time.basis if time else "unknown",
    }
    inherited = related.temporal if related is not None else None
    if time is None and candidate.status == "cancelled" and inherited and inherited.happened_start:
        times.update(
            happened_start=inherited.happened_start,
            happened_end=inherited.happened_end or inherited.happened_start,
            precision=inherited.precision or "unknown",
            basis="inferred",
        )
    temporal = EventTemporal(
        mentioned_at=format_utc(candidate.message.created_at),
        **times,
        status=candidate.status,
        participants=list(candidate.participants),
        event_type=candidate.event_type,
        supersedes_event_ids=supersedes,
    )
    return EventCardInput(
        id=event_id,
        title=_title(candidate),
        summary=third_person(
            " ".join([candidate.sentence, *candidate.continuation]), candidate.message.name
        ),
        narrative=f"{candidate.speaker}: {truncate(candidate.message.content, 600)}",
        tags=_tags(candidate),
        quotes=[candidate.sentence, *candidate.continuation],
        source_block_id=target.id,
        source_message_ids=[candidate.message.id, *candidate.extra_message_ids],
        temporal=temporal,
        criticality=_criticality(candidate),
        confidence=0.7 if time is not None or candidate.kinds[:1] != ("milestone",) else 0.5,
    )


def extract_events(
    ctx: ExtractionContext, *, max_events: int = 24, min_content_words: int = 2
) -> ExtractionResult:
    """Event cards for ``ctx.target`` from its own messages only (deterministic), read up to
    the offline reading budget."""
    speakers = _known_speakers(ctx)
    known = _known_people(ctx, speakers)
    candidates: list[_Candidate] = []
    for message in within_budget(ctx.target.l5_raw):
        if message.role not in ("user", "assistant") or not message.content.strip():
            continue
        current: _Candidate | None = None
        lead_in: TimeResolution | None = None
        for sentence in split_sentences(message.content):
            found = _candidate(
                sentence, message, speakers, known, len(candidates), min_content_words, lead_in
            )
            if found is not None and current is not None and _dates_previous(current, found):
                current.continuation.append(found.sentence)
                current.time = found.time
                current.status = _status(
                    f"{current.sentence} {found.sentence}", current.kinds, found.time,
                    message.created_at, tense(found.sentence),
                )  # fmt: skip
                current.participants = tuple(
                    dict.fromkeys((*current.participants, *found.participants))
                )
            elif found is not None:
                candidates.append(found)
                current, lead_in = found, None
            elif current is not None and _continues(sentence, current, min_content_words):
                current.continuation.append(clean(sentence))
                current.participants = tuple(
                    dict.fromkeys((*current.participants, *_participants(sentence, "", [], known)))
                )
            else:
                lead_in = _lead_in_time(sentence, message) or lead_in
    kept = _deduplicate(candidates)
    if len(kept) > max_events:
        best = sorted(kept, key=lambda c: (c.rank, c.order))[:max_events]
        kept = sorted(best, key=lambda c: c.order)
    if not kept:
        return ExtractionResult(should_extract=False, reason=NO_EVENTS_REASON)
    links = _links(kept, ctx.timeline)
    sibling_ids = {ref: f"{ctx.target.id}-e{ref + 1}" for _, ref in links if isinstance(ref, int)}
    events = [
        _event(
            candidate, ctx.target, related,
            [sibling_ids[ref] if isinstance(ref, int) else ref] if ref is not None else [],
            sibling_ids.get(index),
        )
        for index, (candidate, (related, ref)) in enumerate(zip(kept, links, strict=True))
    ]  # fmt: skip
    return ExtractionResult(
        should_extract=True,
        reason=f"{len(events)} event(s) from {len({c.message.id for c in kept})} message(s)",
        events=events,
    )


@dataclass(frozen=True, slots=True)
class OfflineExtractor:
    """The ``extractor`` callback: ``extract_events`` with fixed limits (picklable)."""

    max_events: int = 24
    min_content_words: int = 2

    def __call__(self, ctx: ExtractionContext) -> ExtractionResult:
        return extract_events(
            parse_input(ExtractionContext, ctx, what="extraction context"),
            max_events=self.max_events,
            min_content_words=self.min_content_words,
        )


__all__ = ["EVENT_TYPES", "NO_EVENTS_REASON", "OfflineExtractor", "extract_events"]
