"""The ``stratagate.external-memory.v2`` format: parsing, item identity, candidate events,
decider answers, and the prompt that asks another AI to export its memory in this format.

A document is JSON (a dict or text)::

    {"format": "stratagate.external-memory.v2",
     "source": "ChatGPT memory export",
     "exported_at": "2026-11-01T10:00:00Z",            # optional
     "items": [{"text": "Prefers pnpm over npm.",       # required, non-empty
                "kind": "preference",                    # optional: fact, preference, identity,
                                                         #   decision, plan, event, relationship
                "time": {"original_text": "last spring", # optional; start/end ISO-8601, partial
                         "start": "2025-03", "end": null},#   dates allowed; unknown stays unknown
                "source": "chat 2025-04-02",             # optional per-item origin
                "tags": ["tools"],                       # optional
                "participants": ["user"],                # optional
                "criticality": "preference",            # optional: routine/preference/identity/safety
                "data": {"theme": "dark"},               # optional: a JSON object kept verbatim
                "supersedes": ["evt_…"]}]}              # optional: active events it replaces

Malformed documents raise ``InvalidInputError`` naming the first problem; nothing is appended.

``data`` travels with the item's message as a tool trace named ``data`` (sealed like the text),
so a host that stores structured values (LangGraph's store) reads back exactly what it put.
Each event ``supersedes`` names must be active: the item's card replaces it (an appended
``EventSuperseded``), as a decider's ``supersede`` does. Both count in the item's identity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson
from pydantic import Field, field_validator

from stratagate.errors import InvalidInputError
from stratagate.models import (
    Criticality,
    EventCard,
    EventCardInput,
    EventTemporal,
    IsoTime,
    Model,
    RawMessage,
    ToolTrace,
    parse_input,
)
from stratagate.timeutil import partial_bounds

FORMAT = "stratagate.external-memory.v2"
DATA_TRACE = "data"
"""The name of the tool trace an item's ``data`` is kept in, on its message."""
MAX_ITEMS = 5000
TITLE_CHARS = 80
Action = Literal["add", "merge", "supersede", "conflict", "ignore"]
KIND_CRITICALITY: dict[str, Criticality] = {"preference": "preference", "identity": "identity"}


class ExternalTime(Model):
    """When an item happened, as the exporting AI knew it; unknown parts stay ``None``."""

    original_text: str | None = None
    start: IsoTime | None = None
    end: IsoTime | None = None


class ExternalItem(Model):
    """One remembered item."""

    text: str = Field(min_length=1)
    kind: str | None = None
    time: ExternalTime | None = None
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    participants: list[str] = Field(default_factory=list)
    criticality: Criticality | None = None
    data: dict[str, Any] | None = None
    supersedes: list[str] = Field(default_factory=list)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("text is blank")
        return text.strip()


class ExternalMemoryDocument(Model):
    """A whole export."""

    format: Literal["stratagate.external-memory.v2"]
    source: str = Field(min_length=1)
    exported_at: IsoTime | None = None
    items: list[ExternalItem] = Field(min_length=1, max_length=MAX_ITEMS)


class PlannedItem(Model):
    """One new item of an import, ready for a decision: its message, candidate and matches."""

    item: ExternalItem
    digest: str
    message: RawMessage
    candidate: EventCardInput
    matches: list[EventCard] = Field(default_factory=list)


class ImportPlan(Model):
    """What an import would append, before the caller's decider has answered."""

    batch_id: str
    block_id: str
    format: str
    source: str
    items: list[PlannedItem] = Field(default_factory=list)
    skipped_duplicates: int = 0


class Decision(Model):
    """A decider's answer for one candidate."""

    action: Action
    target_event_id: str | None = None


def parse_document(document: Mapping[str, Any] | str | bytes) -> ExternalMemoryDocument:
    """Validate an export (dict or JSON text); ``InvalidInputError`` names the first problem."""
    data: Any = document
    if isinstance(document, str | bytes):
        try:
            data = orjson.loads(document)
        except orjson.JSONDecodeError as exc:
            raise InvalidInputError(f"external memory: not valid JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            f"external memory: expected a JSON object, got {type(data).__name__}"
        )
    declared = data.get("format")
    if declared != FORMAT:
        raise InvalidInputError(f"external memory: format must be {FORMAT!r}, got {declared!r}")
    return parse_input(ExternalMemoryDocument, data, what="external memory")


def item_hash(item: ExternalItem) -> str:
    """Identity of an item for exact-duplicate detection: text (whitespace-normalised,
    case-folded), kind and time, and its ``data`` and ``supersedes`` when it has them."""
    key: dict[str, Any] = {
        "text": " ".join(item.text.split()).casefold(),
        "kind": (item.kind or "").casefold(),
        "time": item.time.model_dump() if item.time else None,
    }
    if item.data is not None:
        key["data"] = item.data
    if item.supersedes:
        key["supersedes"] = item.supersedes
    return hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()


def data_trace(data: dict[str, Any]) -> ToolTrace:
    """The tool trace that keeps an item's ``data`` on its message."""
    return ToolTrace(name=DATA_TRACE, arguments=None, result=data)


def item_data(message: RawMessage) -> dict[str, Any] | None:
    """The ``data`` an imported item's message carries, if any."""
    for trace in message.tool_calls or ():
        if trace.name == DATA_TRACE and isinstance(trace.result, dict):
            return trace.result
    return None


def _title(text: str) -> str:
    first = text.split("\n", 1)[0]
    for stop in (". ", "。", "! ", "? "):
        if stop in first:
            first = first.split(stop, 1)[0]
    first = " ".join(first.split())
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


def _precision(time: ExternalTime) -> str:
    if time.start and time.end and time.start != time.end:
        return "range"
    value = time.start or time.end
    assert value is not None
    start, end = partial_bounds(value)
    days = (end - start).days
    return "year" if days >= 365 else "month" if days >= 28 else "day" if days == 1 else "instant"


def candidate(item: ExternalItem, *, block_id: str, message_id: str) -> EventCardInput:
    """The event card an item proposes; its time is copied, never guessed."""
    time = item.time
    known = time is not None and (time.start or time.end)
    temporal = EventTemporal(
        happened_start=time.start if time else None,
        happened_end=time.end if time else None,
        original_text=time.original_text if time else None,
        precision=_precision(time) if known and time else "unknown",
        basis="explicit" if known else "unknown",
        status="unknown",
        participants=item.participants,
        event_type=item.kind,
        supersedes_event_ids=item.supersedes,
    )
    return EventCardInput(
        title=_title(item.text),
        summary=item.text,
        tags=[*([item.kind] if item.kind else []), *item.tags, "imported"],
        quotes=[item.text],
        source_block_id=block_id,
        source_message_ids=[message_id],
        temporal=temporal,
        criticality=item.criticality
        or KIND_CRITICALITY.get((item.kind or "").casefold(), "routine"),
    )


def check_decision(raw: Any, matches: Sequence[EventCard]) -> Decision:
    """Validate a decider's answer; merge/supersede/conflict must target one of the matches."""
    decision = parse_input(Decision, raw, what="decide() answer")
    if decision.action in ("merge", "supersede", "conflict"):
        allowed = {card.id for card in matches}
        if decision.target_event_id not in allowed:
            raise InvalidInputError(
                f"decide() answered {decision.action} with target {decision.target_event_id!r}, "
                "which is not one of the matches it was shown"
            )
    return decision


EXPORT_PROMPT = f"""\
Export everything you remember about me as one JSON object, and nothing else, in this format:

{{"format": "{FORMAT}",
 "source": "<your product name> memory export",
 "exported_at": "<now, ISO-8601>",
 "items": [
   {{"text": "<one self-contained memory in plain words, one fact per item>",
    "kind": "fact | preference | identity | decision | plan | event | relationship",
    "time": {{"original_text": "<the time wording you have, e.g. 'last spring', or null>",
             "start": "<ISO-8601 date if you truly know it: 2025, 2025-03 or 2025-03-14; else null>",
             "end": "<ISO-8601 end date if it is a period; else null>"}},
    "tags": ["<a few topic words>"],
    "participants": ["<people involved, if any>"]}}
 ]}}

Rules:
- One item per memory; write each so it can be understood on its own.
- Never invent dates. If you do not know when something happened, set start and end to null and
  keep whatever wording you have in original_text (or null).
- Do not guess a date from the order of our conversations or from today's date.
- Keep my own words where you remember them; do not embellish.
- Include preferences, decisions (and later changes of mind), plans, important events, people,
  projects and tools.
"""

__all__ = [
    "DATA_TRACE",
    "EXPORT_PROMPT",
    "FORMAT",
    "Decision",
    "ExternalItem",
    "ExternalMemoryDocument",
    "ExternalTime",
    "ImportPlan",
    "PlannedItem",
    "candidate",
    "check_decision",
    "data_trace",
    "item_data",
    "item_hash",
    "parse_document",
]
