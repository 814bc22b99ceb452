"""The offline extractor: event cards from the target block's own sentences, no model.

A sentence becomes a candidate event when it carries a signal (cancellation, change, decision,
plan, preference, identity, a first-person happening such as "I joined …") or a time
expression the resolver can place. Only the target block's messages are read as sources;
the neighbouring blocks are context (their speaker names count as known people), never a
source. Unnamed assistant messages (a model's own words) contribute decisions and changes only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

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
from stratagate.offline.cues import Kind, is_cancelled, is_ongoing, kinds, switch_targets, tense
from stratagate.offline.temporal import TimeResolution, find_time_expressions
from stratagate.offline.text import clean, content_words, split_sentences, truncate, words
from stratagate.timeutil import format_utc, partial_bounds

EVENT_TYPES: dict[Kind, str] = {
    "cancellation": "plan",
    "change": "change",
    "decision": "decision",
    "plan": "plan",
    "preference": "preference",
    "identity": "identity",
    "activity": "activity",
    "milestone": "happening",
}
"""The ``event_type`` each signal gives; a sentence with only a time expression is a happening."""

NO_EVENTS_REASON = (
    "no decision, preference, plan, change, identity statement or dated happening in the target"
)
MAX_CONTINUATION = 2
"""Following sentences of the same message an event's summary may carry (not questions)."""
_UNNAMED_ASSISTANT_KINDS: frozenset[Kind] = frozenset({"decision", "change", "cancellation"})
_LEAD_IN = re.compile(
    r"^(?:(?:oh|wow|yeah|yep|yes|so|and|but|well|hey|btw|by\s+the\s+way|anyway|guess\s+what|"
    r"haha|lol|ok|okay|plus|also|actually|woo+|woah|whoa|aww+|hmm+|ah|um+|omg)\b[\s,!.:?\-–—]*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = [
    (re.compile(r"^i'?m\b|^i\s+am\b", re.IGNORECASE), "{name} is"),
    (re.compile(r"^i'?ve\b|^i\s+have\b", re.IGNORECASE), "{name} has"),
    (re.compile(r"^i'?ll\b|^i\s+will\b", re.IGNORECASE), "{name} will"),
    (re.compile(r"^i'?d\b", re.IGNORECASE), "{name} would"),
    (re.compile(r"^i\b", re.IGNORECASE), "{name}"),
    (re.compile(r"^my\b", re.IGNORECASE), "{name}'s"),
    (re.compile(r"^我(?!们)"), "{name}"),
]
_SKIP_SENTENCE = re.compile(r"^\[image:", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
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
    if direction == "future" or "plan" in signal:
        return "planned"
    if is_ongoing(sentence):
        return "ongoing"
    if direction == "past" or "milestone" in signal:
        return "occurred"
    if signal[:1] in (("preference",), ("identity",)):
        return "ongoing"
    return "unknown"


def _lead_in_time(sentence: str, message: RawMessage) -> TimeResolution | None:
    """The time a skipped sentence sets up for the next one ("Guess what I did this week?")."""
    found = find_time_expressions(sentence, message.created_at, tense=tense(sentence))
    return replace(found[0], basis="inferred") if found else None


def _candidate(
    sentence: str,
    message: RawMessage,
    known: list[str],
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
    times = find_time_expressions(sentence, message.created_at, tense=direction)
    if not signal and not times:
        return None
    content = content_words(sentence)
    if len(set(content)) < min_content_words:
        return None
    speaker = _speaker(message)
    participants = [speaker, *(name for name in _mentioned(sentence, known) if name != speaker)]
    time = next((t for t in times if t.basis != "inferred"), times[0] if times else lead_in)
    return _Candidate(
        sentence=clean(sentence),
        message=message,
        speaker=speaker,
        kinds=signal,
        time=time,
        status=_status(sentence, signal, time, message.created_at, direction),
        participants=tuple(participants),
        content=frozenset(content),
        order=order,
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


def _deduplicate(candidates: list[_Candidate]) -> list[_Candidate]:
    kept: list[_Candidate] = []
    for candidate in candidates:
        twin = next((k for k in kept if _near_duplicate(k.content, candidate.content)), None)
        if twin is None:
            kept.append(candidate)
        elif candidate.message.id != twin.message.id and (
            candidate.message.id not in twin.extra_message_ids
        ):
            twin.extra_message_ids.append(candidate.message.id)
    return kept


def _title(candidate: _Candidate, limit: int = 80) -> str:
    text = _LEAD_IN.sub("", candidate.sentence).strip() or candidate.sentence
    if candidate.message.name:
        for pattern, replacement in _FIRST_PERSON:
            if pattern.search(text):
                text = pattern.sub(replacement.format(name=candidate.message.name), text, count=1)
                break
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


def _supersedes(candidate: _Candidate, timeline: list[TimelineEntry]) -> list[str]:
    """The latest timeline event whose title names what this change moved away from."""
    if "change" not in candidate.kinds:
        return []
    old, _ = switch_targets(candidate.sentence)
    if not old:
        return []
    wanted = set(words(old))
    for entry in reversed(timeline):
        if wanted and wanted <= set(words(entry.title)):
            return [entry.id]
    return []


def _event(
    candidate: _Candidate, target: MemoryBlock, timeline: list[TimelineEntry]
) -> EventCardInput:
    time = candidate.time
    temporal = EventTemporal(
        mentioned_at=format_utc(candidate.message.created_at),
        happened_start=time.happened_start if time else None,
        happened_end=time.happened_end if time else None,
        original_text=time.original_text if time else None,
        precision=time.precision if time else "unknown",
        basis=time.basis if time else "unknown",
        status=candidate.status,
        participants=list(candidate.participants),
        event_type=candidate.event_type,
        supersedes_event_ids=_supersedes(candidate, timeline),
    )
    return EventCardInput(
        title=_title(candidate),
        summary=" ".join([candidate.sentence, *candidate.continuation]),
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
    """Event cards for ``ctx.target`` from its own messages only (deterministic)."""
    known = _known_speakers(ctx)
    candidates: list[_Candidate] = []
    for message in ctx.target.l5_raw:
        if message.role not in ("user", "assistant") or not message.content.strip():
            continue
        current: _Candidate | None = None
        lead_in: TimeResolution | None = None
        for sentence in split_sentences(message.content):
            found = _candidate(
                sentence, message, known, len(candidates), min_content_words, lead_in
            )
            if found is not None:
                candidates.append(found)
                current, lead_in = found, None
            elif current is not None and _continues(sentence, current, min_content_words):
                current.continuation.append(clean(sentence))
            else:
                lead_in = _lead_in_time(sentence, message) or lead_in
    kept = _deduplicate(candidates)
    if len(kept) > max_events:
        best = sorted(kept, key=lambda c: (c.rank, c.order))[:max_events]
        kept = sorted(best, key=lambda c: c.order)
    if not kept:
        return ExtractionResult(should_extract=False, reason=NO_EVENTS_REASON)
    events = [_event(candidate, ctx.target, ctx.timeline) for candidate in kept]
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
