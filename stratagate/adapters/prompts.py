"""System prompts and payload builders for the four model callbacks (pure: no I/O).

Each ``*_messages`` function returns the chat messages for one call: a system prompt that states
the exact JSON schema expected, and a user message holding one JSON payload. The extraction
payload is target-first: the target block's messages are the only legal evidence, neighbouring
blocks appear only as their L2 key points.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from stratagate.adapters.openai_compat import Message
from stratagate.models import (
    ElementCard,
    ElementProjectionContext,
    EventCard,
    EventTemporal,
    ExtractionContext,
    RawMessage,
    TimelineEntry,
)
from stratagate.timeutil import format_utc

_SHARED_RULES = """\
Answer with exactly one JSON object and nothing else: no prose, no markdown fences, no comments.
Use only the keys the schema names. Write text in the language of the conversation."""

SUMMARY_PROMPT = f"""\
You write the index views of one sealed block of a conversation between a user and an assistant.

Input: a JSON object with "messages", each with "id", "role", "created_at" (ISO-8601 UTC, when \
the message was sent), "content", and optionally "name" (the speaker) and "tool_names".

Output schema:
{{
  "l0_title": string, a title of at most 12 words,
  "l0_tags": array of 3 to 8 short lowercase topic tags,
  "l1_summary": string, 1 to 3 sentences on what the block is about,
  "l2_keypoints": array of strings, each one self-contained fact, decision, preference, plan, \
constraint or outcome, naming people and things instead of using pronouns,
  "should_extract": boolean
}}

Rules:
- Say only what the messages say. Do not guess or add outside knowledge.
- Keep dates as the messages state them. A relative date ("last week", "next Friday") keeps its \
wording plus the date of the message that said it, e.g. "last week (said on 2023-06-09)". \
A message timestamp is not the date of the event it mentions.
- should_extract decides whether the block may hold anything worth remembering in a later \
session (decisions, preferences, plans, changes, personal events, facts about people, projects, \
organisations, tools or places). Be conservative: answer false only when the block is nothing \
but greetings, small talk or chatter about the conversation itself; when in doubt, answer true.
{_SHARED_RULES}"""

EXTRACTION_PROMPT = f"""\
You extract long-term memory events from ONE target block of a conversation.

Input: a JSON object with
- "target_block": the block to extract from: its "id" and its "messages", each with "id", \
"role", "created_at" (ISO-8601 UTC, when the message was sent), "content", and optionally \
"name" (the speaker) and "tool_names". These messages are the ONLY legal source of facts, \
events, dates and quotations.
- "legal_message_ids": the message ids you may cite.
- "previous_block_keypoints" (may be null) and "next_block_keypoints": notes about the \
neighbouring blocks, for context only: use them to understand what the target refers to, but \
never take an event, fact, date or quote from them and never cite them.
- "timeline": events already stored, each with "id", "title" and "temporal". Do not extract \
them again. When a new event replaces one of them, put its id in "supersedes_event_ids"; when \
it contradicts one and it is unclear which is right, put its id in "conflicts_with_event_ids".

Extract what is worth remembering in a later session: decisions, preferences, plans, changes of \
state, personal events, and facts about people, projects, organisations, tools and places. Skip \
greetings, small talk and anything only about the conversation itself. If nothing qualifies, \
answer "should_extract": false, an empty "events" array and the reason.

Output schema:
{{
  "should_extract": boolean,
  "reason": string, one sentence,
  "events": [
    {{
      "title": string, short,
      "summary": string, 1 or 2 self-contained sentences (names, not pronouns),
      "narrative": string or null, a fuller account if useful,
      "tags": array of short lowercase strings,
      "quotes": array of strings copied verbatim from the cited messages,
      "source_message_ids": array of ids from "legal_message_ids", at least one,
      "temporal": {{
        "mentioned_at": ISO-8601 string, the created_at of the cited message that mentions it,
        "happened_start": ISO-8601 string or null, when the event began or will begin,
        "happened_end": ISO-8601 string or null, when it ended or will end,
        "original_text": string or null, the time wording exactly as written,
        "precision": "instant" | "day" | "month" | "year" | "range" | "unknown",
        "basis": "explicit" | "relative" | "inferred" | "unknown",
        "status": "occurred" | "planned" | "cancelled" | "ongoing" | "unknown",
        "participants": array of names,
        "event_type": string or null, e.g. "decision", "plan", "preference", "life_event",
        "supersedes_event_ids": array of timeline ids,
        "conflicts_with_event_ids": array of timeline ids
      }},
      "criticality": "routine" | "preference" | "identity" | "safety",
      "confidence": number from 0 to 1
    }}
  ]
}}

Two time axes, never mixed:
- "mentioned_at" is when the conversation talked about the event: the created_at of the message.
- "happened_start"/"happened_end" are when the event itself happened or is planned to happen. \
A date named in the message is "basis": "explicit". A relative phrase ("last week", "next \
Friday", "two years ago") is resolved against the created_at of the message that says it, with \
"basis": "relative". Use partial ISO dates when that is all that is known ("2023", "2023-05", \
"2023-05-07") and set "precision" to match.
- Unknown dates stay unknown: when the time of the event cannot be established from the target \
messages, leave "happened_start" and "happened_end" null, set "precision" and "basis" to \
"unknown", and keep any time wording in "original_text". Never use a message timestamp as the \
event date unless the message says the event happens at that moment.
- A plan is not evidence that something happened: planned events keep "status": "planned".

Every event must cite at least one id from "legal_message_ids", and every fact in it must be \
stated in the cited target messages.
{_SHARED_RULES}"""

PROJECTION_PROMPT = f"""\
You update element cards (people, projects, organisations, tools, places) from a batch of \
event cards.

Input: a JSON object with
- "events": the batch, each with "id", "title", "summary" and "temporal" (when the event was \
mentioned and when it happened). These events are the ONLY legal source of changes.
- "existing_elements": elements that exist now, each with "id", "name", "type", "aliases" and \
"current_state" (key to value).

Each change writes one fact of one element, in one of three modes:
- "set_state" (mode "state"): the element's current value for a key, e.g. key "job", value \
"nurse". A new state for the same key replaces the previous one, which stays in history.
- "add_set_item" (mode "set"): adds values to a growing set, e.g. key "hobbies", value \
["painting"]. Existing values are kept.
- "set_relation" (mode "relation"): a directed link to another element, e.g. key "works_at", \
value "Acme Corp" (the other element's name). A new relation for the same key replaces the \
previous one.

Output schema:
{{
  "reason": string, one sentence,
  "changes": [
    {{
      "element": {{
        "name": string, the element's name (repeat an existing element's name exactly),
        "type": "person" | "project" | "organization" | "tool" | "place",
        "aliases": array of other names used for it
      }},
      "operation": "set_state" | "add_set_item" | "set_relation",
      "key": string, short snake_case,
      "mode": "state" | "set" | "relation", matching the operation,
      "value": string, or array of strings for "add_set_item",
      "valid_from": ISO-8601 string or null, when the fact became true (the event's happened \
time when known; otherwise null),
      "valid_to": ISO-8601 string or null, when it stopped being true, if an event says so,
      "source_event_ids": array of ids from "events", at least one,
      "confidence": number from 0 to 1
    }}
  ]
}}

Rules:
- Every change cites only ids of events in this batch, and only events that state the fact.
- Record facts the events state; do not infer owners, states or relations they do not support. \
A plan supports a plan ("planned_move": "Paris"), not a completed change.
- Unknown dates stay unknown: leave "valid_from" null rather than guessing.
- If the batch holds nothing to record, return an empty "changes" array and say why.
{_SHARED_RULES}"""

ASSESSMENT_PROMPT = f"""\
You judge whether retrieved memory answers a question. Judge only; do not answer the question.

Input: a JSON object with "question" and "hits", the items retrieved in this batch. The \
reference of a hit is its "ref" value, or its "id" when it has no "ref".

Output schema (exactly these five keys):
{{
  "verdict": "sufficient" | "partial" | "wrong",
  "evidence_refs": array of references of the hits that support your judgement,
  "fit": string, one sentence on how the evidence matches the question,
  "missing": string, one sentence on what is still missing ("" when nothing is),
  "next_strategy": "answer" | "search_events" | "expand_event" | "search_elements" | \
"expand_element" | "search_raw_memory" | "expand_block"
}}

Rules:
- "sufficient" only when the cited hits answer the actual question, including its date, reason \
or detail; then "next_strategy" is "answer".
- "partial" when the hits are relevant but lack something the question asks for (for example \
the date or the reason); choose the strategy most likely to find it: expand an event or \
element, or search the raw messages for exact wording and timestamps.
- "wrong" when the hits are about something else; choose a new search.
- Cite only references of hits in this batch. A relative date in a hit ("last week") counts \
only together with the date it was said.
{_SHARED_RULES}"""


def summary_messages(messages: list[RawMessage]) -> list[Message]:
    """The chat messages asking for a block's L0-L2 views and its extraction decision."""
    return _chat(SUMMARY_PROMPT, {"messages": [message_view(m) for m in messages]})


def extraction_messages(ctx: ExtractionContext) -> list[Message]:
    """The chat messages asking for the event cards of the target block."""
    return _chat(EXTRACTION_PROMPT, extraction_payload(ctx))


def projection_messages(ctx: ElementProjectionContext) -> list[Message]:
    """The chat messages asking for element changes supported by the claimed events."""
    return _chat(PROJECTION_PROMPT, projection_payload(ctx))


def assessment_messages(question: str, hits: list[dict[str, Any]]) -> list[Message]:
    """The chat messages asking for the five-field assessment of one retrieval batch."""
    return _chat(ASSESSMENT_PROMPT, {"question": question, "hits": hits})


def extraction_payload(ctx: ExtractionContext) -> dict[str, Any]:
    """Target first: its messages are the evidence; neighbours only as their L2 key points."""
    target = ctx.target
    return {
        "target_block": {
            "id": target.id,
            "messages": [message_view(m) for m in target.l5_raw],
        },
        "legal_message_ids": [m.id for m in target.l5_raw],
        "previous_block_keypoints": list(ctx.previous.l2_keypoints) if ctx.previous else None,
        "next_block_keypoints": list(ctx.next.l2_keypoints),
        "timeline": [timeline_view(entry) for entry in ctx.timeline],
    }


def projection_payload(ctx: ElementProjectionContext) -> dict[str, Any]:
    """The claimed events (the only legal sources) and the elements that exist now."""
    return {
        "events": [event_view(event) for event in ctx.events],
        "existing_elements": [element_view(element) for element in ctx.existing_elements],
    }


def message_view(message: RawMessage) -> dict[str, Any]:
    """One message as evidence: id, role, speaker, ISO time, content and tool names."""
    view: dict[str, Any] = {"id": message.id, "role": message.role}
    if message.name:
        view["name"] = message.name
    view["created_at"] = format_utc(message.created_at)
    view["content"] = message.content
    if message.tool_calls:
        view["tool_names"] = [call.name for call in message.tool_calls]
    return view


def timeline_view(entry: TimelineEntry) -> dict[str, Any]:
    """One existing event for the extractor: id, title and its known time fields."""
    return {"id": entry.id, "title": entry.title, "temporal": _temporal(entry.temporal)}


def event_view(event: EventCard) -> dict[str, Any]:
    """One claimed event for the projector: id, title, summary and time fields."""
    return {
        "id": event.id,
        "title": event.title,
        "summary": event.summary,
        "temporal": _temporal(event.temporal),
    }


def element_view(element: ElementCard) -> dict[str, Any]:
    """One existing element for the projector: identity and current state, not its history."""
    return {
        "id": element.id,
        "name": element.name,
        "type": element.type,
        "aliases": list(element.aliases),
        "current_state": dict(element.current_state),
    }


def _temporal(temporal: EventTemporal | None) -> dict[str, Any]:
    if temporal is None:
        return {}
    return temporal.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def _chat(system_prompt: str, payload: dict[str, Any]) -> list[Message]:
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False, default=_jsonable)},
    ]


def _jsonable(value: Any) -> Any:
    """Encode what callers may put in assessment hits: models, datetimes, anything else as text."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, datetime):
        return format_utc(value)
    return str(value)


__all__ = [
    "ASSESSMENT_PROMPT",
    "EXTRACTION_PROMPT",
    "PROJECTION_PROMPT",
    "SUMMARY_PROMPT",
    "assessment_messages",
    "element_view",
    "event_view",
    "extraction_messages",
    "extraction_payload",
    "message_view",
    "projection_messages",
    "projection_payload",
    "summary_messages",
    "timeline_view",
]
