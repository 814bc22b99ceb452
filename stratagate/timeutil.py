"""Time in one place: aware UTC datetimes, canonical ISO text, and partial ISO dates.

Every timestamp stratagate stores is timezone-aware UTC; a naive input is taken to be UTC.
Event times (``happened_start`` and friends) may be partial ISO dates (``2023``, ``2023-05``,
``2023-05-07``) or full timestamps; ``partial_bounds`` turns either into a half-open interval.
"""

from __future__ import annotations

import calendar
import functools
import re
from datetime import UTC, date, datetime, timedelta

_PARTIAL = re.compile(r"^(?P<y>\d{4})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2}))?)?$")


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)


def ensure_utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime; naive input is taken to be UTC."""
    zone = value.tzinfo
    if zone is UTC:  # already UTC (most values): no conversion call
        return value
    if zone is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def parse_datetime(value: datetime | date | str) -> datetime:
    """Parse a datetime, a date or ISO-8601 text (partial dates allowed) into aware UTC.

    A partial date stands for the first instant of its period. Raises ``ValueError``.
    """
    if isinstance(value, datetime):
        return ensure_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    text = value.strip()
    match = _PARTIAL.match(text)
    if match:
        return partial_bounds(text)[0]
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return ensure_utc(datetime.fromisoformat(text))


STRFTIME_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"
"""``format_utc``'s text as ``strftime`` writes it (used before year 1000, where the
platform's ``%Y`` may not pad to four digits)."""


def format_utc(value: datetime) -> str:
    """Canonical text of an instant: ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC."""
    utc = ensure_utc(value)
    if utc.year >= 1000:  # isoformat writes the same text several times faster than strftime
        return utc.isoformat(timespec="microseconds")[:-6] + "Z"
    return utc.strftime(STRFTIME_UTC)


@functools.lru_cache(maxsize=4096)
def is_iso_time(text: str) -> bool:
    """True when ``text`` is a partial ISO date or a full ISO-8601 timestamp."""
    try:
        partial_bounds(text)
    except ValueError:
        return False
    return True


def partial_bounds(text: str) -> tuple[datetime, datetime]:
    """The half-open UTC interval ``[start, end)`` an ISO date or timestamp stands for.

    ``2023`` covers the year, ``2023-05`` the month, ``2023-05-07`` the day; a full timestamp
    covers one microsecond. Raises ``ValueError`` for anything else.
    """
    stripped = text.strip()
    match = _PARTIAL.match(stripped)
    if not match:
        instant = parse_datetime(stripped)
        return instant, instant + timedelta(microseconds=1)
    year = int(match["y"])
    if match["m"] is None:
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    month = int(match["m"])
    if not 1 <= month <= 12:
        raise ValueError(f"month out of range in {text!r}")
    if match["d"] is None:
        days = calendar.monthrange(year, month)[1]
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, start + timedelta(days=days)
    start = datetime(year, month, int(match["d"]), tzinfo=UTC)
    return start, start + timedelta(days=1)


__all__ = [
    "STRFTIME_UTC",
    "ensure_utc",
    "format_utc",
    "is_iso_time",
    "parse_datetime",
    "partial_bounds",
    "utc_now",
]
