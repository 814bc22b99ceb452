"""What a search may be narrowed by: one frozen filter object per search, validated once.

``EventFilters``, ``ElementFilters`` and ``RawFilters`` are built where a search enters (the
façade's message, a time-travel view's method) and reach the search index unchanged, so each
option is spelled once; a bad value is an ``InvalidInputError`` naming it, before anything is
ranked or logged. The query text and the hit limit are checked by ``query_text`` and
``hit_limit``, the same rules for every search.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from stratagate.errors import InvalidInputError
from stratagate.models import ElementType, first_error
from stratagate.timeutil import parse_datetime

MAX_LIMIT = 10_000
"""The largest ``limit`` a search accepts (larger asks are input errors, not slow queries)."""
MAX_QUERY_CHARS = 4_000
"""The longest query text a search accepts (a query is a question, not a document)."""

TemporalIntent = Literal["first", "latest"]
"""Which end of the timeline an event search prefers."""
INTENT_WORDS: dict[str, TemporalIntent] = {
    "first": "first",
    "earliest": "first",
    "oldest": "first",
    "latest": "latest",
    "last": "latest",
    "recent": "latest",
    "newest": "latest",
}
"""The words a caller may use for each temporal intent."""


def hit_limit(value: object) -> int:
    """A search's ``limit``: an integer from 1 to ``MAX_LIMIT``."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_LIMIT:
        raise ValueError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {value!r}")
    return value


def query_text(value: object) -> str:
    """A search's query: text of at most ``MAX_QUERY_CHARS`` characters, valid Unicode."""
    if not isinstance(value, str):
        raise ValueError(f"query must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise ValueError(f"query is {len(value)} characters, more than {MAX_QUERY_CHARS}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"query is not valid Unicode text: {exc.reason}") from exc
    return value


def checked(rule: Any, value: object) -> Any:
    """``rule(value)``, its ``ValueError`` raised as an ``InvalidInputError``."""
    try:
        return rule(value)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc


def moment(value: object) -> datetime | None:
    """A point in time: a datetime or ISO-8601 text (naive means UTC), or ``None``."""
    if value is None:
        return None
    if not isinstance(value, datetime | str):
        raise ValueError(f"not a datetime or ISO-8601 text: {value!r}")
    try:
        return parse_datetime(value)
    except ValueError as exc:
        raise ValueError(f"not a datetime or ISO-8601 text: {value!r}") from exc


def _intent(value: object) -> TemporalIntent | None:
    if value is None:
        return None
    intent = INTENT_WORDS.get(value.strip().lower()) if isinstance(value, str) else None
    if intent is None:
        raise ValueError(f"unknown temporal intent {value!r}: use 'first' or 'latest'")
    return intent


def _names(value: object) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise ValueError(f"must be a list of strings, got {type(value).__name__}")
    return list(value)


Limit = Annotated[int, BeforeValidator(hit_limit)]
QueryText = Annotated[str, BeforeValidator(query_text)]
Moment = Annotated[datetime | None, BeforeValidator(moment)]
Intent = Annotated[TemporalIntent | None, BeforeValidator(_intent)]
Names = Annotated[list[str] | None, BeforeValidator(_names)]


class Filters(BaseModel):
    """Base of the filter objects: frozen, no unknown fields, errors as ``InvalidInputError``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInputError(f"{type(self).__name__}: {first_error(exc)}") from exc

    def logged(self) -> dict[str, Any]:
        """The filters a retrieval batch records: the ones set, as JSON values."""
        return self.model_dump(mode="json", exclude_none=True)


class EventFilters(Filters):
    """What an event search is narrowed by (each one also a ranking of its own)."""

    temporal_intent: Intent = None
    participants: Names = None
    event_type: str | None = None
    happened_from: Moment = None
    happened_to: Moment = None

    def any(self) -> bool:
        """Whether any filter narrows the search (an empty query then lists nothing else)."""
        return bool(self.participants or self.event_type or self.happened_from or self.happened_to)


class ElementFilters(Filters):
    """What an element (fact) search is narrowed by."""

    name: str | None = None
    type: ElementType | None = None


class RawFilters(Filters):
    """What a raw-message search is narrowed by."""

    thread_id: str | None = None


__all__ = [
    "INTENT_WORDS",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "ElementFilters",
    "EventFilters",
    "Filters",
    "Limit",
    "Moment",
    "Names",
    "QueryText",
    "RawFilters",
    "TemporalIntent",
    "checked",
    "hit_limit",
    "moment",
    "query_text",
]
