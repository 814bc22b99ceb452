"""The offline element projector: people, tool/project state and places from event cards.

Rules, in order, for each event of the claimed batch (every change cites only that event):

1. every participant is a ``person`` with ``add_set_item participated_in = <event title>``;
2. a preference adds ``preferences = <what is preferred>`` to the speaker (first participant),
   an identity statement adds ``identity = <what they are>``;
3. a usage or switch ("uses / switched to / moved to / adopted Y", 改用, 换成, 使用 …) sets a
   state on the subject: ``set_state <key> = Y``. The subject is a named project ("the Atlas
   project", "project Atlas"), else the speaker for "I …", else the element ``shared project``
   for "we / our / let's …". The key is the key of the subject's current state whose value is
   the old tool X when the sentence names one (so "from X to Y" replaces exactly that fact),
   else the category of Y or X from ``TOOL_CATEGORIES`` (``package_manager``, ``editor`` …),
   else ``uses``. "moved to <Capitalised place>" that is not a known tool sets ``location``.
   Y becomes a ``tool`` (or ``place``) with ``adopted_by`` (``residents``) = subject; a named X
   gets ``replaced_by = Y``.

A later switch therefore proposes a new value for the same key; the platform closes the earlier
fact's validity interval. ``valid_from`` is the event's happened start when known, else the
day it was mentioned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
from stratagate.offline.cues import switch_targets, usage_target

SHARED_PROJECT = "shared project"
TOOL_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(["npm", "pnpm", "yarn", "bun", "pip", "poetry", "uv", "conda", "pipenv",
                     "cargo", "maven", "gradle", "homebrew"], "package_manager"),
    **dict.fromkeys(["vim", "neovim", "emacs", "vscode", "vs code", "sublime", "atom", "cursor",
                     "intellij", "pycharm", "zed"], "editor"),
    **dict.fromkeys(["postgres", "postgresql", "mysql", "sqlite", "mongodb", "redis", "dynamodb",
                     "cassandra", "mariadb", "oracle"], "database"),
    **dict.fromkeys(["python", "rust", "go", "golang", "java", "javascript", "typescript",
                     "kotlin", "swift", "ruby", "c++", "c#", "php", "scala", "elixir"], "language"),
    **dict.fromkeys(["react", "vue", "angular", "svelte", "django", "flask", "fastapi", "rails",
                     "spring", "next.js", "nextjs", "express"], "framework"),
    **dict.fromkeys(["linux", "windows", "macos", "ubuntu", "debian", "fedora"], "os"),
    **dict.fromkeys(["aws", "gcp", "azure", "heroku", "vercel", "netlify"], "cloud"),
    **dict.fromkeys(["git", "mercurial", "svn"], "version_control"),
    **dict.fromkeys(["jenkins", "github actions", "circleci", "gitlab ci", "travis"], "ci"),
    **dict.fromkeys(["webpack", "vite", "rollup", "esbuild", "parcel"], "bundler"),
    **dict.fromkeys(["docker", "podman", "kubernetes"], "container_runtime"),
}  # fmt: skip
"""Known tools and the state key a switch between them sets (matched case-insensitively)."""

_NAMED_PROJECT = re.compile(
    r"\b(?:the\s+)?(?P<a>[A-Z][\w.-]+)\s+(?:project|repo|app|service)\b|"
    r"\b(?:project|repo)\s+(?P<b>[A-Z][\w.-]+)"
)
_FIRST_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me)\b|我(?!们)", re.IGNORECASE)
_FIRST_PLURAL = re.compile(r"\b(?:we|we're|we've|we'll|our|us|let's)\b|我们|咱们", re.IGNORECASE)
_PREFERENCE_OBJECT = re.compile(
    r"\b(?:prefer|love|adore|like|enjoy|hate|dislike|favou?rite\s+\w+\s+is|fan\s+of|into)\s+"
    r"(?P<x>[^,.;!?]+)|(?:喜欢|偏好|最爱|偏爱)(?P<y>[^，。！？,.!?]+)",
    re.IGNORECASE,
)
_IDENTITY_OBJECT = re.compile(
    r"\b(?:i'?m|i\s+am)\s+(?P<x>an?\s+[^,.;!?]+)|\bi\s+work\s+(?P<w>(?:as|at|for)\s+[^,.;!?]+)|"
    r"我是(?P<y>[^，。！？,.!?]+)",
    re.IGNORECASE,
)


def _bounded(text: str, words: int = 6) -> str:
    return " ".join(text.split()[:words]).strip()


def _valid_from(event: EventCard) -> str | None:
    temporal = event.temporal
    if temporal is None:
        return None
    if temporal.happened_start and temporal.status in ("occurred", "ongoing", None, "unknown"):
        return temporal.happened_start
    return temporal.mentioned_at[:10] if temporal.mentioned_at else None


def _speaker(event: EventCard) -> str | None:
    participants = event.temporal.participants if event.temporal else []
    return participants[0] if participants else None


def _change(
    event: EventCard, name: str, kind: ElementType, operation: ProjectionOperation, key: str,
    value: str,
) -> ElementProjectionChange:  # fmt: skip
    return ElementProjectionChange(
        element=ElementRef(name=name, type=kind),
        operation=operation,
        key=key,
        value=value,
        valid_from=_valid_from(event),
        source_event_ids=[event.id],
        confidence=min(event.confidence, 0.8),
    )


def _subject(event: EventCard) -> tuple[str, ElementType] | None:
    text = event.summary
    named = _NAMED_PROJECT.search(text)
    if named:
        return named["a"] or named["b"], "project"
    speaker = _speaker(event)
    if _FIRST_SINGULAR.search(text) and speaker:
        return speaker, "person"
    if _FIRST_PLURAL.search(text):
        return SHARED_PROJECT, "project"
    return (speaker, "person") if speaker else None


StateView = dict[tuple[str, str], dict[str, str]]
"""Current string states by (element type, case-folded name): existing plus this batch's."""


def _state_view(existing: list[ElementCard]) -> StateView:
    view: StateView = {}
    for element in existing:
        states = {k: v for k, v in element.current_state.items() if isinstance(v, str)}
        view.setdefault((element.type, element.name.casefold()), {}).update(states)
    return view


def _existing_key(view: StateView, name: str, kind: ElementType, old: str | None) -> str | None:
    if not old:
        return None
    for key, value in view.get((kind, name.casefold()), {}).items():
        if value.casefold() == old.casefold():
            return key
    return None


def _state_changes(event: EventCard, view: StateView) -> list[ElementProjectionChange]:
    event_type = event.temporal.event_type if event.temporal else None
    if event_type not in ("change", "decision"):
        return []
    old, new = switch_targets(event.summary)
    new = new or usage_target(event.summary)
    subject = _subject(event)
    if not new or subject is None:
        return []
    name, kind = subject
    category = TOOL_CATEGORIES.get(new.casefold()) or TOOL_CATEGORIES.get((old or "").casefold())
    moved_to_place = (
        category is None and new[:1].isupper() and re.search(r"\bmoved\s+to\b", event.summary, re.I)
    )
    key = (
        _existing_key(view, name, kind, old)
        or category
        or ("location" if moved_to_place else "uses")
    )
    view.setdefault((kind, name.casefold()), {})[key] = new
    changes = [_change(event, name, kind, "set_state", key, new)]
    if moved_to_place:
        changes.append(_change(event, new, "place", "add_set_item", "residents", name))
        return changes
    changes.append(_change(event, new, "tool", "add_set_item", "adopted_by", name))
    if old:
        changes.append(_change(event, old, "tool", "set_state", "replaced_by", new))
    return changes


def _person_changes(event: EventCard) -> list[ElementProjectionChange]:
    temporal = event.temporal
    participants = temporal.participants if temporal else []
    changes = [
        _change(event, person, "person", "add_set_item", "participated_in", event.title)
        for person in participants
    ]
    speaker = _speaker(event)
    if speaker is None:
        return changes
    if event.criticality == "preference":
        match = _PREFERENCE_OBJECT.search(event.summary)
        liked = (match["x"] or match["y"]) if match else None
        changes.append(
            _change(event, speaker, "person", "add_set_item", "preferences",
                    _bounded(liked) if liked else event.title)
        )  # fmt: skip
    if event.criticality == "identity":
        match = _IDENTITY_OBJECT.search(event.summary)
        what = (match["x"] or match["w"] or match["y"]) if match else None
        changes.append(
            _change(event, speaker, "person", "add_set_item", "identity",
                    _bounded(what) if what else event.title)
        )  # fmt: skip
    return changes


def project_elements(ctx: ElementProjectionContext) -> ElementProjectionResult:
    """Element changes for the claimed batch, each citing only its own event (deterministic)."""
    changes: list[ElementProjectionChange] = []
    seen: set[tuple[str, str, str, str, str]] = set()
    view = _state_view(ctx.existing_elements)
    for event in ctx.events:
        for change in (*_person_changes(event), *_state_changes(event, view)):
            key = (
                change.element.type, change.element.name.casefold(), change.operation, change.key,
                str(change.value).casefold(),
            )  # fmt: skip
            if key not in seen:
                seen.add(key)
                changes.append(change)
    reason = (
        f"{len(changes)} change(s) from {len(ctx.events)} event(s)"
        if changes
        else ("no participants, preferences, identity statements or tool changes in the batch")
    )
    return ElementProjectionResult(reason=reason, changes=changes)


@dataclass(frozen=True, slots=True)
class OfflineElementProjector:
    """The ``element_projector`` callback: ``project_elements`` (picklable, stateless)."""

    def __call__(self, ctx: ElementProjectionContext) -> ElementProjectionResult:
        parsed = parse_input(ElementProjectionContext, ctx, what="projection context")
        return project_elements(parsed)


__all__ = ["SHARED_PROJECT", "TOOL_CATEGORIES", "OfflineElementProjector", "project_elements"]
