"""Which stored payload fields are content, and under which data key each is encrypted.

Content is every user-authored or model-derived text an event carries: message content and tool
traces, block views and summaries, card titles, summaries and quotes, fact values, logged
queries and assessments, imported documents, model errors. Structural fields (ids, types,
positions, times, statuses) stay clear, so the log stays auditable without keys.

A ``Group`` names the objects of a payload whose fields are content (``at`` is a path, ``*``
stepping into each item of a list), the data key they are encrypted under (``scope`` names it
from the payload and the object: a key name, not a key), and each field with the value it
reads as once its key is destroyed (the redaction, fixed per field, so every replay of an
erased row folds the same state). Key names: ``thread:<id>`` (``thread:`` for the default
thread), ``block:<id>``, ``event:<card id>``, ``job:<projection job id>``, ``namespace`` (the
weight keeper's: logged queries, their options, assessments) and ``elements`` (the projector's:
element names and aliases, which several threads may share, so only the namespace's erasure
takes them).
Which role writes which key names matters: each name is created by the one role writing the
event types that use it, so two writers never race to create one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ERASED = "[erased]"
"""What an erased text reads as."""

Path = tuple[str, ...]
Scope = Callable[[Mapping[str, Any], Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Group:
    """Content fields of the objects at ``at``, encrypted under the key ``scope`` names."""

    at: Path
    scope: Scope
    fields: Mapping[Path, Any]
    """Field path (within each object) → the value it reads as once erased."""


def thread_key(payload: Mapping[str, Any], _obj: Mapping[str, Any]) -> str:
    """The key of a thread's ingest events (``thread:`` for the default thread)."""
    return f"thread:{payload.get('thread_id') or ''}"


def block_key(payload: Mapping[str, Any], _obj: Mapping[str, Any]) -> str:
    """The key of an extraction job's or an import's block."""
    return f"block:{payload['block_id']}"


def card_key(_payload: Mapping[str, Any], obj: Mapping[str, Any]) -> str:
    """The key of one event card (so a card can be erased alone)."""
    return f"event:{obj['id']}"


def job_key(payload: Mapping[str, Any], _obj: Mapping[str, Any]) -> str:
    """The key of one element-projection job (the facts it applied)."""
    return f"job:{payload['job_id']}"


def namespace_key(_payload: Mapping[str, Any], _obj: Mapping[str, Any]) -> str:
    """The namespace-wide key (logged queries and assessments)."""
    return "namespace"


def elements_key(_payload: Mapping[str, Any], _obj: Mapping[str, Any]) -> str:
    """The namespace-wide key of element names and aliases (written by the projector only)."""
    return "elements"


MESSAGE: Mapping[Path, Any] = {("content",): ERASED, ("tool_calls",): None}
SUMMARY: Mapping[Path, Any] = {
    ("summary", "l0_title"): ERASED,
    ("summary", "l0_tags"): [],
    ("summary", "l1_summary"): ERASED,
    ("summary", "l2_keypoints"): [],
    ("l3_condensed",): ERASED,
    ("l4_readable",): ERASED,
}
CARD: Mapping[Path, Any] = {
    ("title",): ERASED,
    ("summary",): ERASED,
    ("narrative",): ERASED,
    ("tags",): [],
    ("quotes",): [],
    ("temporal", "original_text"): ERASED,
    ("temporal", "participants"): [],
}
ASSESSMENT: Mapping[Path, Any] = {("fit",): ERASED, ("missing",): ERASED}

CONTENT: Mapping[str, tuple[Group, ...]] = {
    "TurnAppended": (Group(("messages", "*"), thread_key, MESSAGE),),
    "BlockSealed": (
        Group((), thread_key, SUMMARY),
        Group(("l5_raw", "*"), thread_key, MESSAGE),
    ),
    "SealFailed": (Group((), thread_key, {("error",): ERASED}),),
    "ExtractionSucceeded": (
        Group((), block_key, {("reason",): ERASED}),
        Group(("events", "*"), card_key, CARD),
    ),
    "ExtractionSkipped": (Group((), block_key, {("reason",): ERASED}),),
    "ExtractionFailed": (Group((), block_key, {("error",): ERASED}),),
    "EventAdded": (Group(("event",), card_key, CARD),),
    "ExternalImportRecorded": (
        Group((), block_key, {**SUMMARY, ("source",): ERASED}),
        Group(("messages", "*"), block_key, MESSAGE),
    ),
    "ProjectionCompleted": (
        Group((), job_key, {("reason",): ERASED, ("diagnostic",): ERASED}),
        Group(("plan", "facts_added", "*", "fact"), job_key, {("value",): ERASED}),
        Group(
            ("plan", "elements_created", "*"), elements_key, {("name",): ERASED, ("aliases",): []}
        ),
        Group(("plan", "aliases_added", "*"), elements_key, {("alias",): ERASED}),
        Group(("plan", "dropped", "*"), elements_key, {("element_name",): ERASED}),
    ),
    "ProjectionFailed": (Group((), job_key, {("error",): ERASED}),),
    "RetrievalBatchRecorded": (Group((), namespace_key, {("query",): ERASED, ("options",): {}}),),
    "AssessmentRecorded": (Group(("assessment",), namespace_key, ASSESSMENT),),
    "MemoryUseRecorded": (Group(("receipt", "audit", "assessment"), namespace_key, ASSESSMENT),),
}
"""Per domain event type, its content groups (types not named here carry no content)."""


def objects_at(data: Any, path: Path) -> list[dict[str, Any]]:
    """The objects of ``data`` at ``path`` (``*`` steps into each list item; missing or
    ``None`` steps yield nothing)."""
    nodes: list[Any] = [data]
    for step in path:
        found: list[Any] = []
        for node in nodes:
            if step == "*":
                if isinstance(node, list):
                    found.extend(node)
            elif isinstance(node, dict):
                value = node.get(step)
                if value is not None:
                    found.append(value)
        nodes = found
    return [node for node in nodes if isinstance(node, dict)]


def field_slots(obj: dict[str, Any], path: Path) -> tuple[dict[str, Any], str] | None:
    """The mapping holding the field at ``path`` and its name, when it holds a value."""
    holder: Any = obj
    for step in path[:-1]:
        holder = holder.get(step) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or holder.get(path[-1]) is None:
        return None
    return holder, path[-1]


__all__ = [
    "CONTENT",
    "ERASED",
    "Group",
    "block_key",
    "card_key",
    "elements_key",
    "field_slots",
    "job_key",
    "namespace_key",
    "objects_at",
    "thread_key",
]
