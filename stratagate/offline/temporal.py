"""Resolve time expressions in one sentence against the message's timestamp (pure, no clock).

Conventions (documented in docs/EVALUATION.md as well):

- Weeks run Monday to Sunday. "last week" is the whole Monday-Sunday week before the message's
  week, "this week" the message's week, "next week" the one after; all three have precision
  ``range``. "N weeks ago" / "in N weeks" are the Monday-Sunday week N weeks away.
- "last Friday" (any weekday, also "last Fri") is the most recent Friday strictly before the
  message day; "next Friday" is the Friday of next week; "this Friday" the Friday of this week;
  a bare "on Friday" / "Friday" looks back (most recent strictly before) unless the sentence is
  about the future (``tense="future"``), then forward (first strictly after).
- Chinese weekday forms are week-based: 上周五 is the Friday of last week, 这周五 of this week,
  下周五 of next week; a bare 周五/星期五 follows the tense like "on Friday".
- "last weekend" / "this past weekend" is Saturday-Sunday of the previous week; "this weekend"
  of the message's week; "next weekend" of the next week; "N weekends ago" of N weeks back.
- "in May" looks back to the most recent May (the message's month included) unless the sentence
  is about the future; "last May" is the most recent May strictly before the message's month.
- Seasons are meteorological, northern hemisphere (summer = June-August ...).
- Dates without a year ("May 7", "5月7日") take the year that puts them on the side of the
  message the tense points to, or, when the sentence has no tense marker, the occurrence nearest
  to the message; their basis is ``inferred``.
- "just" before a past-tense verb ("I just signed up") is read as the seven days up to the
  message day: precision ``range``, basis ``inferred``; never for future sentences.
- Vague wording ("recently", "a few days ago", "the other day") resolves to nothing.
- "currently" / "right now" / "at the moment" is the message day, basis ``inferred`` (the one
  day the sentence is surely true); any other expression in the sentence is preferred.
- Ranges of dates ("March 27-28", "from April 6 to April 10", "between May 1 and May 5",
  3月27日到28日) are one ``range``; a yearless range takes its year like its first date.
- A date right after a rescheduling verb ("moved to April 27", "postponed until May 3", 改到,
  推迟到) is read as lying ahead, whatever the tense of the rest of the sentence; one right
  after "until" / "by" is too, unless the sentence is in the past ("working from Kunming until
  Friday").
- A day followed in the same clause by a duration ("on March 30 and runs for two weeks",
  为期两周) becomes the range of that many days; ``original_text`` spans both.
- Chinese dates may be written in Han numerals (四月二十号); 上旬/中旬/下旬 of a month are days
  1-10, 11-20 and 21 to the month's end, 月初 the first ten days and 月底 the last ten; without
  a tense such a month is its occurrence nearest to the message.

A resolution gives ``happened_start`` and ``happened_end`` as ISO dates at their own precision
(``2023``, ``2023-05``, ``2023-05-07``); the end is inclusive at its precision, so the covered
interval is ``[partial_bounds(start)[0], partial_bounds(end)[1])``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from stratagate.timeutil import ensure_utc

Tense = Literal["past", "future"]
Granularity = Literal["day", "month", "year"]

WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0,
    "tuesday": 1, "tue": 1, "tues": 1,
    "wednesday": 2, "wed": 2, "weds": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3,
    "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}  # fmt: skip
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
    "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
    "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10,
    "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
SEASONS: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
"""First month of each meteorological season (winter runs December to February)."""

NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30,
}  # fmt: skip
HAN_DIGITS: dict[str, int] = {
    "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
JUST_DAYS = 7
""""just" + a past verb ("I just signed up"): the happening lies in the 7 days up to the message."""
HAN_WEEKDAYS: dict[str, int] = {
    "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TimeResolution:
    """One resolved time expression: the happened range, how precise, and the exact wording."""

    original_text: str
    happened_start: str
    happened_end: str
    precision: Literal["day", "month", "year", "range"]
    basis: Literal["explicit", "relative", "inferred"]
    span: tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Range:
    start: date
    end: date
    start_grain: Granularity
    end_grain: Granularity
    basis: Literal["explicit", "relative", "inferred"]


Handler = Callable[[re.Match[str], date, Tense | None], "_Range | None"]


# ---------------------------------------------------------------- calendar arithmetic


def _day(value: date, basis: Literal["explicit", "relative", "inferred"] = "relative") -> _Range:
    return _Range(value, value, "day", "day", basis)


def _days(start: date, end: date) -> _Range:
    return _Range(start, end, "day", "day", "relative")


def _month(year: int, month: int, basis: Literal["explicit", "relative", "inferred"]) -> _Range:
    first = date(year, month, 1)
    return _Range(first, first, "month", "month", basis)


def _year(year: int, basis: Literal["explicit", "relative", "inferred"]) -> _Range:
    first = date(year, 1, 1)
    return _Range(first, first, "year", "year", basis)


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _week_start(value: date, weeks: int = 0) -> date:
    return value - timedelta(days=value.weekday()) + timedelta(weeks=weeks)


def _week(ref: date, weeks: int) -> _Range:
    monday = _week_start(ref, weeks)
    return _days(monday, monday + timedelta(days=6))


def _weekend(ref: date, weeks: int) -> _Range:
    saturday = _week_start(ref, weeks) + timedelta(days=5)
    return _days(saturday, saturday + timedelta(days=1))


def _weekday_before(ref: date, weekday: int) -> date:
    back = (ref.weekday() - weekday) % 7 or 7
    return ref - timedelta(days=back)


def _weekday_after(ref: date, weekday: int) -> date:
    ahead = (weekday - ref.weekday()) % 7 or 7
    return ref + timedelta(days=ahead)


def _safe_date(year: int, month: int, day: int) -> date | None:
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return date(year, month, day)


def _number(text: str) -> int | None:
    token = text.strip().lower()
    if token.isdigit():
        return int(token)
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    return _han_number(token)


def _han_number(text: str) -> int | None:
    """Han numerals up to 99 (十, 十二, 二十, 二十三, 两); ``None`` for anything else."""
    if not text or any(ch not in HAN_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return HAN_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (HAN_DIGITS[tens] if tens else 1) * 10 + (HAN_DIGITS[ones] if ones else 0)


def _offset(ref: date, unit: str, amount: int) -> _Range:
    """The period ``amount`` units away from ``ref`` (negative = ago), at that unit's grain."""
    if unit == "day":
        return _day(ref + timedelta(days=amount))
    if unit == "week":
        return _week(ref, amount)
    if unit == "month":
        year, month = _shift_month(ref.year, ref.month, amount)
        return _month(year, month, "relative")
    return _year(ref.year + amount, "relative")


def _month_occurrence(ref: date, month: int, mode: str) -> tuple[int, int]:
    """The year of ``month`` relative to ``ref``: ``last``/``next`` exclude the current month."""
    if mode == "this":
        return ref.year, month
    if mode == "last":
        return (ref.year if month < ref.month else ref.year - 1), month
    if mode == "next":
        return (ref.year if month > ref.month else ref.year + 1), month
    if mode == "future":
        return (ref.year if month >= ref.month else ref.year + 1), month
    return (ref.year if month <= ref.month else ref.year - 1), month


def _season(ref: date, first_month: int, mode: str) -> _Range:
    """A meteorological season; ``last`` is the latest one that ended before today's season."""

    def span(year: int) -> _Range:
        start = date(year, first_month, 1)
        end_year, end_month = _shift_month(year, first_month, 2)
        return _Range(start, date(end_year, end_month, 1), "month", "month", "relative")

    # the year whose season contains ref (seasons start in the listed month)
    current_year = ref.year if ref.month >= first_month else ref.year - 1
    current = span(current_year)
    in_season = current.start <= ref < _next_month(current.end)
    if mode == "this":
        return current if in_season or current_year == ref.year else span(ref.year)
    if mode == "last":
        return span(current_year - 1) if in_season else current
    if mode == "next":
        return span(current_year + 1)
    return current if in_season or mode == "past" else span(current_year + 1)


def _next_month(value: date) -> date:
    year, month = _shift_month(value.year, value.month, 1)
    return date(year, month, 1)


def _past_or_future(tense: Tense | None) -> str:
    return "future" if tense == "future" else "past"


def _dated(ref: date, month: int, day: int, tense: Tense | None) -> date | None:
    """A month-day without a year: on the side of ``ref`` the tense points to, or — when the
    grammar says nothing — the occurrence nearest to ``ref``."""
    this_year = _safe_date(ref.year, month, day)
    if tense == "future":
        if this_year is not None and this_year >= ref:
            return this_year
        return _safe_date(ref.year + 1, month, day)
    if tense == "past":
        if this_year is not None and this_year <= ref:
            return this_year
        return _safe_date(ref.year - 1, month, day)
    options = [
        d for d in (_safe_date(ref.year + k, month, day) for k in (-1, 0, 1)) if d is not None
    ]
    return min(options, key=lambda d: (abs((d - ref).days), d)) if options else None


# ---------------------------------------------------------------- English rules

_WD = (
    r"(?P<wd>monday|mon|tuesday|tues|tue|wednesday|weds|wed|thursday|thurs|thur|thu|friday|fri|"
    r"saturday|sat|sunday|sun)"
)
_MONTH = (
    r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_NUM = (
    r"(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    r"twenty|thirty)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_DAYNUM = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_MONTH2 = _MONTH.replace("?P<mon>", "?P<mon2>")
_DAYNUM2 = _DAYNUM.replace("?P<day>", "?P<day2>")


def _month_ok(match: re.Match[str], group: str = "mon") -> int | None:
    """The month number, refusing lower-case "may"/"march" (the verbs) and "mar"."""
    word = match.group(group)
    lower = word.lower()
    if lower in {"may", "march", "mar"} and word[0].islower():
        return None
    return MONTHS[lower]


def _span_of_days(
    start: date | None, month2: int, day2: int, basis: Literal["explicit", "inferred"]
) -> _Range | None:
    """``start`` to ``month2``/``day2`` of its year, or of the next one when the months wrap;
    ``None`` when that end lies before the start."""
    if start is None:
        return None
    end = _safe_date(start.year, month2, day2)
    if end is not None and end < start and month2 < start.month:  # "Dec 30 to Jan 2"
        end = _safe_date(start.year + 1, month2, day2)
    if end is None or end < start or (end - start).days > 366:
        return None
    return _Range(start, end, "day", "day", basis)


def _date_range(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _month_ok(m)
    month2 = _month_ok(m, "mon2") if m["mon2"] else month
    if month is None or month2 is None:
        return None
    day, day2 = int(m["day"]), int(m["day2"])
    if m["year"]:
        return _span_of_days(_safe_date(int(m["year"]), month, day), month2, day2, "explicit")
    return _span_of_days(_dated(ref, month, day, tense), month2, day2, "inferred")


def _explicit_iso_day(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    value = _safe_date(int(m["year"]), int(m["m"]), int(m["day"]))
    return _day(value, "explicit") if value else None


def _explicit_iso_month(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = int(m["m"])
    return _month(int(m["year"]), month, "explicit") if 1 <= month <= 12 else None


def _explicit_day(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _month_ok(m)
    if month is None:
        return None
    value = _safe_date(int(m["year"]), month, int(m["day"]))
    return _day(value, "explicit") if value else None


def _explicit_month(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _month_ok(m)
    return _month(int(m["year"]), month, "explicit") if month else None


def _yearless_day(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _month_ok(m)
    if month is None:
        return None
    value = _dated(ref, month, int(m["day"]), tense)
    return _day(value, "inferred") if value else None


def _named_month(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _month_ok(m)
    if month is None:
        return None
    mode = (m["mode"] or "").lower()
    if mode in {"", "in", "early", "mid", "late", "of", "during"}:
        mode = _past_or_future(tense)
    year, month = _month_occurrence(ref, month, mode)
    return _month(year, month, "relative")


def _explicit_year(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    return _year(int(m["year"]), "explicit")


def _since_year(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    start = int(m["year"])
    if start > ref.year:
        return None
    grain: Granularity = "day" if start == ref.year else "year"  # "2023" would outlast today
    return _Range(date(start, 1, 1), ref, grain, "day", "explicit")


def _fixed_day(delta: int) -> Handler:
    def handler(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
        return _day(ref + timedelta(days=delta))

    return handler


def _now(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    """The message day for "currently" / "right now" (the one day the state surely held)."""
    return _day(ref, "inferred")


def _ago(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    amount = _number(m["n"])
    return _offset(ref, m["unit"].lower(), -amount) if amount else None


def _later(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    amount = _number(m["n"])
    return _offset(ref, m["unit"].lower(), amount) if amount else None


_RELATIVE_STEP = {"last": -1, "this past": -1, "this": 0, "next": 1, "coming": 1}


def _relative_unit(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    mode = " ".join(m["mode"].lower().split())
    return _offset(ref, m["unit"].lower(), _RELATIVE_STEP[mode])


def _past_week(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    return _days(ref - timedelta(days=7), ref - timedelta(days=1))


def _weekend_rel(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    mode = " ".join((m["mode"] or "").lower().split())
    if mode in {"last", "this past"}:
        return _weekend(ref, -1)
    if mode in {"next", "coming"}:
        return _weekend(ref, 1)
    if mode == "this":
        return _weekend(ref, 0)
    # "over the weekend" / "on the weekend": the coming one, or the one just gone
    if tense == "future" or ref.weekday() >= 5:
        return _weekend(ref, 0)
    return _weekend(ref, -1)


def _weekends_ago(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    amount = _number(m["n"])
    return _weekend(ref, -amount) if amount else None


def _weekends_later(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    amount = _number(m["n"])
    return _weekend(ref, amount) if amount else None


def _just_done(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    """ "I just finished …": some day of the week up to the message day (inferred)."""
    if tense == "future":
        return None
    return _Range(ref - timedelta(days=JUST_DAYS - 1), ref, "day", "day", "inferred")


def _weekday_rel(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    weekday = WEEKDAYS[m["wd"].lower()]
    mode = (m.groupdict().get("mode") or "").lower()
    if mode == "last":
        return _day(_weekday_before(ref, weekday))
    if mode == "next":
        return _day(_week_start(ref, 1) + timedelta(days=weekday))
    if mode == "this":
        return _day(_week_start(ref) + timedelta(days=weekday))
    if tense == "future":
        return _day(_weekday_after(ref, weekday))
    return _day(_weekday_before(ref, weekday))


def _bare_weekday(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    if m["wd"][0].islower():  # "sunday" in running text is fine, "sun"/"sat" never get here
        return None
    return _weekday_rel(m, ref, tense)


def _season_rel(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    mode = " ".join((m["mode"] or "").lower().split())
    if mode in {"", "in the", "over the", "during the"}:
        mode = _past_or_future(tense)
    if mode == "past":
        mode = "last"
    return _season(ref, SEASONS[m["season"].lower()], mode)


def _season_year(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    first = SEASONS[m["season"].lower()]
    start = date(int(m["year"]), first, 1)
    end_year, end_month = _shift_month(start.year, first, 2)
    return _Range(start, date(end_year, end_month, 1), "month", "month", "explicit")


def _nth_of_month(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    day = int(m["day"])
    candidates = []
    for delta in (-1, 0, 1):
        year, month = _shift_month(ref.year, ref.month, delta)
        value = _safe_date(year, month, day)
        if value is not None:
            candidates.append(value)
    if tense == "future":
        ahead = [value for value in candidates if value >= ref]
        return _day(ahead[0]) if ahead else None
    behind = [value for value in candidates if value <= ref]
    return _day(behind[-1]) if behind else None


_EN_RULES: list[tuple[str, Handler]] = [
    (
        rf"\b(?:from\s+)?{_MONTH}\.?\s+{_DAYNUM}\s*(?:-|–|—|to|through|thru|until|till)\s*"
        rf"(?:{_MONTH2}\.?\s+)?{_DAYNUM2}\b(?:,?\s+{_YEAR}\b)?(?!\s*(?:,\s*)?(?:\d|:))",
        _date_range,
    ),
    (
        rf"\bbetween\s+{_MONTH}\.?\s+{_DAYNUM}\s+and\s+(?:{_MONTH2}\.?\s+)?{_DAYNUM2}\b"
        rf"(?:,?\s+{_YEAR}\b)?",
        _date_range,
    ),
    (rf"\b{_YEAR}-(?P<m>\d{{2}})-(?P<day>\d{{2}})\b", _explicit_iso_day),
    (rf"\b{_YEAR}/(?P<m>\d{{1,2}})/(?P<day>\d{{1,2}})\b", _explicit_iso_day),
    (rf"\b{_YEAR}-(?P<m>\d{{2}})\b(?!-)", _explicit_iso_month),
    (rf"\b{_MONTH}\.?\s+{_DAYNUM},?\s+{_YEAR}\b", _explicit_day),
    (rf"\b(?:the\s+)?{_DAYNUM}(?:\s+of)?\s+{_MONTH}\.?,?\s+{_YEAR}\b", _explicit_day),
    (rf"\b(?:(?:in|of|during|early|mid|late)[\s-]+)?{_MONTH},?\s+{_YEAR}\b", _explicit_month),
    (rf"\b(?:the\s+)?{_DAYNUM}\s+of\s+{_MONTH}(?!\w)", _yearless_day),
    (rf"\b{_MONTH}\.?\s+{_DAYNUM}\b(?!\s*(?:,\s*)?(?:\d|:))", _yearless_day),
    (rf"\b{_DAYNUM}\s+{_MONTH}(?!\w)", _yearless_day),
    (rf"\b(?P<mode>last|this|next|in|early|mid|late|of|during)[\s-]+{_MONTH}(?!\w)", _named_month),
    (rf"\bsince\s+{_YEAR}\b", _since_year),
    (rf"\b(?:in|during|of|from|by|back\s+in|around|year)\s+{_YEAR}\b", _explicit_year),
    (
        rf"\b(?:(?P<mode>last|this|next|in|the|in\s+the|over\s+the|during\s+the|past)\s+)?"
        rf"(?P<season>spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_YEAR}\b",
        _season_year,
    ),
    (
        r"\b(?P<mode>last|this|next|past|in\s+the|over\s+the|during\s+the)\s+"
        r"(?P<season>spring|summer|autumn|fall|winter)\b",
        _season_rel,
    ),
    (r"\bthe\s+day\s+before\s+yesterday\b", _fixed_day(-2)),
    (r"\bthe\s+day\s+after\s+tomorrow\b", _fixed_day(2)),
    (r"(?<!like )(?<!like just )(?<!as if )\b(?:yesterday|last\s+night)\b", _fixed_day(-1)),
    (r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _fixed_day(0)),
    (r"\b(?:currently|right\s+now|at\s+the\s+moment)\b", _now),
    (r"\btomorrow\b", _fixed_day(1)),
    (rf"\b{_NUM}\s+{_UNIT}\s+ago\b", _ago),
    (rf"\bin\s+{_NUM}\s+{_UNIT}\b", _later),
    (rf"\b{_NUM}\s+{_UNIT}\s+(?:from\s+now|later)\b", _later),
    (
        r"\b(?:(?:the\s+)?past\s+(?:week|7\s+days|seven\s+days)|last\s+(?:7|seven)\s+days)\b",
        _past_week,
    ),
    (
        r"\b(?P<mode>this\s+past|last|this|next|coming|over\s+the|on\s+the)\s+weekend\b",
        _weekend_rel,
    ),
    (rf"\b{_NUM}\s+weekends?\s+ago\b", _weekends_ago),
    (rf"\bin\s+{_NUM}\s+weekends?\b", _weekends_later),
    (rf"\b{_NUM}\s+weekends?\s+(?:later|from\s+now)\b", _weekends_later),
    (
        r"\bjust\s+(?=(?:got|won|made|took|went|had|did|saw|met|ran|bought|found|gave|began|came|"
        r"became|sent|spent|brought|left|sold|built|wrote|signed|(?!(?:wanted|needed|loved|liked|"
        r"wished|used|hoped|figured|realized)\b)[a-z]{2,}ed)\b)",
        _just_done,
    ),
    (
        r"\b(?P<mode>last|this\s+past|this|next|coming)\s+(?P<unit>week|month|year)s?\b",
        _relative_unit,
    ),
    (rf"\b(?P<mode>last|next|this|on)\s+{_WD}\b", _weekday_rel),
    (r"\b(?P<wd>Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b", _bare_weekday),
    (r"\bon\s+the\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b(?!\s+of)", _nth_of_month),
]

# ---------------------------------------------------------------- Chinese rules

_HAN_NUM = r"(?P<n>\d{1,3}|[一二两三四五六七八九十]{1,3})"
_HAN_NUMERALS = "一二两三四五六七八九十"
_HAN_DATE_NUM = r"\d{1,2}|[一二三四五六七八九十]{1,3}"
_HAN_UNIT = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week",
             "礼拜": "week", "个礼拜": "week", "个月": "month", "年": "year"}  # fmt: skip
_HAN_WEEK_STEP = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
_HAN_DAY_WORDS = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0,
                  "今晚": 0, "今日": 0, "今早": 0, "明天": 1, "明晚": 1, "明日": 1,
                  "后天": 2, "大后天": 3}  # fmt: skip
_HAN_YEAR_WORDS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}


def _han_explicit_day(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    value = _safe_date(int(m["year"]), int(m["m"]), int(m["day"]))
    return _day(value, "explicit") if value else None


def _han_explicit_month(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = int(m["m"])
    return _month(int(m["year"]), month, "explicit") if 1 <= month <= 12 else None


def _han_yearless_day(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month, day = _number(m["m"]), _number(m["day"])
    value = _dated(ref, month, day, tense) if month and day else None
    return _day(value, "inferred") if value else None


def _han_range(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month, day, day2 = _number(m["m"]), _number(m["day"]), _number(m["day2"])
    month2 = _number(m["m2"]) if m["m2"] else month
    if not (month and day and day2 and month2):
        return None
    return _span_of_days(_dated(ref, month, day, tense), month2, day2, "inferred")


_HAN_MONTH_PARTS = {"上旬": (1, 10), "月初": (1, 10), "初": (1, 10), "中旬": (11, 20),
                    "下旬": (21, 31), "月底": (21, 31), "底": (21, 31), "末": (21, 31)}  # fmt: skip


def _han_month_part(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    month = _number(m["m"])
    if not month or not 1 <= month <= 12:
        return None
    if tense is None:
        year = min((ref.year - 1, ref.year, ref.year + 1),
                   key=lambda y: abs((y - ref.year) * 12 + month - ref.month))  # fmt: skip
    else:
        year, _ = _month_occurrence(ref, month, tense)
    first, last = _HAN_MONTH_PARTS[m["part"]]
    last = min(last, calendar.monthrange(year, month)[1])
    return _Range(date(year, month, first), date(year, month, last), "day", "day", "inferred")


def _han_day_word(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    return _day(ref + timedelta(days=_HAN_DAY_WORDS[m[0]]))


def _han_year_word(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    return _year(ref.year + _HAN_YEAR_WORDS[m[0]], "relative")


def _han_week(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    step = _HAN_WEEK_STEP[m["mode"]]
    tail = m["tail"] or ""
    if tail == "末":
        return _weekend(ref, step)
    if tail:
        return _day(_week_start(ref, step) + timedelta(days=HAN_WEEKDAYS[tail]))
    return _week(ref, step)


def _han_bare_weekday(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    weekday = HAN_WEEKDAYS[m["tail"]]
    if tense == "future":
        return _day(_weekday_after(ref, weekday))
    return _day(_weekday_before(ref, weekday))


def _han_bare_weekend(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    if tense == "future" or ref.weekday() >= 5:
        return _weekend(ref, 0)
    return _weekend(ref, -1)


def _han_month_rel(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    step = {"上": -1, "这": 0, "本": 0, "下": 1}[m["mode"]]
    return _offset(ref, "month", step)


def _han_ago(m: re.Match[str], ref: date, tense: Tense | None) -> _Range | None:
    amount = _number(m["n"])
    if not amount:
        return None
    sign = -1 if m["dir"] in {"前", "以前", "之前"} else 1
    return _offset(ref, _HAN_UNIT[m["unit"]], sign * amount)


_HAN_RULES: list[tuple[str, Handler]] = [
    (rf"{_YEAR}\s*年\s*(?P<m>\d{{1,2}})\s*月\s*(?P<day>\d{{1,2}})\s*[日号]", _han_explicit_day),
    (rf"{_YEAR}\s*年\s*(?P<m>\d{{1,2}})\s*月", _han_explicit_month),
    (rf"{_YEAR}\s*年", _explicit_year),
    (
        rf"(?<![\d{_HAN_NUMERALS}])(?P<m>{_HAN_DATE_NUM})\s*月\s*(?P<day>{_HAN_DATE_NUM})\s*[日号]?"
        rf"\s*(?:到|至|-|–|—|~|～)\s*(?:(?P<m2>{_HAN_DATE_NUM})\s*月\s*)?(?P<day2>{_HAN_DATE_NUM})"
        r"\s*[日号]",
        _han_range,
    ),
    (
        rf"(?<![\d{_HAN_NUMERALS}])(?P<m>{_HAN_DATE_NUM})\s*月\s*(?P<day>{_HAN_DATE_NUM})\s*[日号]",
        _han_yearless_day,
    ),
    (
        rf"(?<![\d{_HAN_NUMERALS}])(?P<m>{_HAN_DATE_NUM})\s*月份?\s*(?P<part>上旬|中旬|下旬|初|底|末)",
        _han_month_part,
    ),
    (r"大前天|前天|昨天|昨晚|昨日|今天|今晚|今日|今早|明天|明晚|明日|大后天|后天", _han_day_word),
    (r"前年|去年|今年|明年|后年", _han_year_word),
    (
        r"(?<!马)(?P<mode>上上|下下|上|这|本|下)(?:个)?(?:周|星期|礼拜)(?P<tail>[一二三四五六日天末])?",
        _han_week,
    ),
    (r"(?<![上这本下个每])(?:周|星期|礼拜)(?P<tail>[一二三四五六日天])", _han_bare_weekday),
    (r"(?<![上这本下个每])周末", _han_bare_weekend),
    (r"(?P<mode>上|这|本|下)(?:个)?月", _han_month_rel),
    (
        rf"(?<!\d){_HAN_NUM}\s*(?P<unit>个星期|个礼拜|星期|礼拜|个月|天|日|周|年)"
        r"(?P<dir>以前|之前|以后|之后|前|后)",
        _han_ago,
    ),
]

_RULES: list[tuple[re.Pattern[str], Handler]] = [
    *((re.compile(pattern, re.IGNORECASE), handler) for pattern, handler in _EN_RULES),
    *((re.compile(pattern), handler) for pattern, handler in _HAN_RULES),
]


# ---------------------------------------------------------------- sentence-level readings

_RESCHEDULED = re.compile(
    r"(?:\b(?:moved|moving|postponed|pushed(?:\s+back)?|rescheduled|delayed|shifted|bumped|"
    r"changed)\s+(?:back\s+|out\s+)?(?:to|until|till|for)\s+(?:the\s+)?"
    r"|改到|改成|改为|推迟到|延期到|提前到|挪到|推到)$",
    re.IGNORECASE,
)
_DURATION = re.compile(
    rf"^[^.;!?。；！？]{{0,60}}?\b(?:for|lasting|lasts)\s+(?:about\s+|around\s+)?{_NUM}\s+"
    r"(?P<unit>day|week)s?\b"
    rf"|^[^.;!?。；！？]{{0,20}}?(?:持续|为期)\s*{_HAN_NUM.replace('?P<n>', '?P<hn>')}\s*"
    r"(?P<han>天|周|个星期|星期)",
    re.IGNORECASE,
)
_HAN_DURATION_DAYS = {"天": 1, "周": 7, "个星期": 7, "星期": 7}


_UNTIL = re.compile(r"\b(?:until|till|by)\s+$", re.IGNORECASE)


def _local_tense(text: str, start: int, tense: Tense | None) -> Tense | None:
    """A date right after "moved to" / 改到 lies ahead whatever the sentence's tense; one after
    "until" / "by" does unless the sentence is in the past."""
    before = text[max(0, start - 40) : start]
    if _RESCHEDULED.search(before) or (tense != "past" and _UNTIL.search(before)):
        return "future"
    return tense


def _with_duration(
    text: str, found: TimeResolution, others: list[TimeResolution]
) -> TimeResolution:
    """A single day followed in its clause by "for two weeks" / 为期两周 becomes that range."""
    if found.precision != "day":
        return found
    m = _DURATION.search(text[found.span[1] :])
    if m is None:
        return found
    end = found.span[1] + m.end()
    if any(found.span[1] <= other.span[0] < end for other in others):
        return found
    amount = _number(m["n"] or m["hn"])
    if not amount:
        return found
    days = amount * (
        _HAN_DURATION_DAYS[m["han"]] if m["han"] else (7 if m["unit"].lower() == "week" else 1)
    )
    first = date.fromisoformat(found.happened_start)
    last = first + timedelta(days=days - 1)
    if days <= 1:
        return found
    return TimeResolution(
        original_text=text[found.span[0] : end],
        happened_start=found.happened_start,
        happened_end=last.isoformat(),
        precision="range",
        basis=found.basis,
        span=(found.span[0], end),
    )


# ---------------------------------------------------------------- public functions


def _iso(value: date, grain: Granularity) -> str:
    if grain == "year":
        return f"{value.year:04d}"
    if grain == "month":
        return f"{value.year:04d}-{value.month:02d}"
    return value.isoformat()


def _resolution(text: str, span: tuple[int, int], found: _Range) -> TimeResolution:
    same = found.start == found.end and found.start_grain == found.end_grain
    precision = found.start_grain if same else "range"
    return TimeResolution(
        original_text=text[span[0] : span[1]],
        happened_start=_iso(found.start, found.start_grain),
        happened_end=_iso(found.end, found.end_grain),
        precision=precision,
        basis=found.basis,
        span=span,
    )


def find_time_expressions(
    text: str, reference: datetime | date, *, tense: Tense | None = None
) -> list[TimeResolution]:
    """Every resolvable time expression in ``text``, left to right, longest match first.

    ``reference`` is the message timestamp (aware datetimes are read in UTC); ``tense`` tells
    bare forms ("on Friday", "in May") which way to look (default: back).
    """
    ref = ensure_utc(reference).date() if isinstance(reference, datetime) else reference
    candidates: list[tuple[int, int, TimeResolution]] = []
    for pattern, handler in _RULES:
        for match in pattern.finditer(text):
            try:
                found = handler(match, ref, _local_tense(text, match.start(), tense))
            except (ValueError, OverflowError):  # a date outside the calendar resolves to nothing
                found = None
            if found is not None:
                span = match.span()
                candidates.append((span[0], -(span[1] - span[0]), _resolution(text, span, found)))
    candidates.sort(key=lambda item: (item[0], item[1]))
    chosen: list[TimeResolution] = []
    taken_until = -1
    for start, _, resolution in candidates:
        if start >= taken_until:
            chosen.append(resolution)
            taken_until = resolution.span[1]
    return [_with_duration(text, found, chosen) for found in chosen]


def resolve_time(
    text: str, reference: datetime | date, *, tense: Tense | None = None
) -> TimeResolution | None:
    """The first resolvable time expression in ``text``, or ``None`` when there is none."""
    found = find_time_expressions(text, reference, tense=tense)
    return found[0] if found else None


__all__ = ["Tense", "TimeResolution", "find_time_expressions", "resolve_time"]
