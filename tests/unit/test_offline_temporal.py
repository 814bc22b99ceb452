"""Temporal resolution of the offline heuristics: every supported expression, pinned dates."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.offline.temporal import find_time_expressions, resolve_time
from stratagate.timeutil import partial_bounds

THU = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)  # a Thursday


def _resolved(text: str, ref: datetime = THU, tense: str | None = None) -> tuple:
    found = resolve_time(text, ref, tense=tense)  # type: ignore[arg-type]
    assert found is not None, text
    return found.happened_start, found.happened_end, found.precision, found.basis


@pytest.mark.parametrize(
    ("text", "start", "end", "precision"),
    [
        ("I went there yesterday", "2023-05-24", "2023-05-24", "day"),
        ("It happened last night", "2023-05-24", "2023-05-24", "day"),
        ("the day before yesterday", "2023-05-23", "2023-05-23", "day"),
        ("today is busy", "2023-05-25", "2023-05-25", "day"),
        ("see you tomorrow", "2023-05-26", "2023-05-26", "day"),
        ("the day after tomorrow", "2023-05-27", "2023-05-27", "day"),
        ("last week was wild", "2023-05-15", "2023-05-21", "range"),
        ("this week is calm", "2023-05-22", "2023-05-28", "range"),
        ("next week then", "2023-05-29", "2023-06-04", "range"),
        ("last month", "2023-04", "2023-04", "month"),
        ("this month", "2023-05", "2023-05", "month"),
        ("next month", "2023-06", "2023-06", "month"),
        ("last year", "2022", "2022", "year"),
        ("next year", "2024", "2024", "year"),
        ("3 days ago", "2023-05-22", "2023-05-22", "day"),
        ("two days ago", "2023-05-23", "2023-05-23", "day"),
        ("a week ago", "2023-05-15", "2023-05-21", "range"),
        ("two weeks ago", "2023-05-08", "2023-05-14", "range"),
        ("three months ago", "2023-02", "2023-02", "month"),
        ("ten years ago", "2013", "2013", "year"),
        ("in 3 days", "2023-05-28", "2023-05-28", "day"),
        ("in two weeks", "2023-06-05", "2023-06-11", "range"),
        ("in a month", "2023-06", "2023-06", "month"),
        ("this weekend", "2023-05-27", "2023-05-28", "range"),
        ("last weekend", "2023-05-20", "2023-05-21", "range"),
        ("this past weekend", "2023-05-20", "2023-05-21", "range"),
        ("two weekends ago", "2023-05-13", "2023-05-14", "range"),
        ("next weekend", "2023-06-03", "2023-06-04", "range"),
        ("last summer", "2022-06", "2022-08", "range"),
        ("the summer of 2022", "2022-06", "2022-08", "range"),
        ("since 2016", "2016", "2023-05-25", "range"),
    ],
)
def test_english_relative_expressions(text: str, start: str, end: str, precision: str) -> None:
    assert _resolved(text)[:3] == (start, end, precision)


@pytest.mark.parametrize(
    ("text", "start", "precision", "basis"),
    [
        ("May 7, 2023", "2023-05-07", "day", "explicit"),
        ("on 7 May 2023", "2023-05-07", "day", "explicit"),
        ("the 7th of May, 2023", "2023-05-07", "day", "explicit"),
        ("2023-05-07", "2023-05-07", "day", "explicit"),
        ("2023/5/7", "2023-05-07", "day", "explicit"),
        ("May 2023", "2023-05", "month", "explicit"),
        ("in 2022", "2022", "year", "explicit"),
        ("on May 7", "2023-05-07", "day", "inferred"),
        ("in May", "2023-05", "month", "relative"),
        ("last May", "2022-05", "month", "relative"),
        ("in March", "2023-03", "month", "relative"),
        ("on the 15th", "2023-05-15", "day", "relative"),
    ],
)
def test_dates_and_month_names(text: str, start: str, precision: str, basis: str) -> None:
    found_start, _, found_precision, found_basis = _resolved(text)
    assert (found_start, found_precision, found_basis) == (start, precision, basis)


@pytest.mark.parametrize(
    ("weekday", "last", "next_"),
    [
        ("Monday", "2023-05-22", "2023-05-29"),
        ("Tuesday", "2023-05-23", "2023-05-30"),
        ("Wednesday", "2023-05-24", "2023-05-31"),
        ("Thursday", "2023-05-18", "2023-06-01"),
        ("Friday", "2023-05-19", "2023-06-02"),
        ("Saturday", "2023-05-20", "2023-06-03"),
        ("Sunday", "2023-05-21", "2023-06-04"),
    ],
)
def test_last_and_next_weekday_from_a_thursday(weekday: str, last: str, next_: str) -> None:
    assert _resolved(f"last {weekday}")[:2] == (last, last)
    assert _resolved(f"next {weekday}")[:2] == (next_, next_)


def test_weekday_abbreviations_and_bare_forms_follow_the_tense() -> None:
    assert _resolved("last Tues")[0] == "2023-05-23"
    assert _resolved("last Fri")[0] == "2023-05-19"
    assert _resolved("on Sunday")[0] == "2023-05-21"
    assert _resolved("on Sunday", tense="future")[0] == "2023-05-28"
    assert _resolved("Friday was great")[0] == "2023-05-19"
    assert _resolved("this Friday")[0] == "2023-05-26"
    assert _resolved("in May", tense="future")[0] == "2023-05"
    assert _resolved("in April", tense="future")[0] == "2024-04"


@pytest.mark.parametrize(
    ("text", "start", "end", "precision"),
    [
        ("昨天", "2023-05-24", "2023-05-24", "day"),
        ("前天", "2023-05-23", "2023-05-23", "day"),
        ("今天", "2023-05-25", "2023-05-25", "day"),
        ("明天", "2023-05-26", "2023-05-26", "day"),
        ("后天", "2023-05-27", "2023-05-27", "day"),
        ("上周我们开会了", "2023-05-15", "2023-05-21", "range"),
        ("上个星期", "2023-05-15", "2023-05-21", "range"),
        ("本周", "2023-05-22", "2023-05-28", "range"),
        ("这周", "2023-05-22", "2023-05-28", "range"),
        ("下周", "2023-05-29", "2023-06-04", "range"),
        ("下个星期", "2023-05-29", "2023-06-04", "range"),
        ("上个月", "2023-04", "2023-04", "month"),
        ("下个月", "2023-06", "2023-06", "month"),
        ("去年", "2022", "2022", "year"),
        ("明年", "2024", "2024", "year"),
        ("3天前", "2023-05-22", "2023-05-22", "day"),
        ("三天前", "2023-05-22", "2023-05-22", "day"),
        ("十二天前", "2023-05-13", "2023-05-13", "day"),
        ("两个月前", "2023-03", "2023-03", "month"),
        ("上周五", "2023-05-19", "2023-05-19", "day"),
        ("上星期一", "2023-05-15", "2023-05-15", "day"),
        ("下周日", "2023-06-04", "2023-06-04", "day"),
        ("这周末", "2023-05-27", "2023-05-28", "range"),
        ("上周末", "2023-05-20", "2023-05-21", "range"),
        ("2023年5月7日", "2023-05-07", "2023-05-07", "day"),
        ("2022年", "2022", "2022", "year"),
        ("5月7日", "2023-05-07", "2023-05-07", "day"),
    ],
)
def test_chinese_expressions(text: str, start: str, end: str, precision: str) -> None:
    assert _resolved(text)[:3] == (start, end, precision)


def test_chinese_weekday_forms_are_week_based_unlike_english_last_weekday() -> None:
    saturday = datetime(2023, 5, 27, 9, 0, tzinfo=UTC)
    assert _resolved("上周五", saturday)[0] == "2023-05-19"  # Friday of the previous week
    assert _resolved("last Friday", saturday)[0] == "2023-05-26"  # the most recent Friday
    assert _resolved("星期五", saturday)[0] == "2023-05-26"
    assert _resolved("周五", saturday, tense="future")[0] == "2023-06-02"


@pytest.mark.parametrize(
    ("ref", "text", "start", "end"),
    [
        (datetime(2024, 3, 1, tzinfo=UTC), "yesterday", "2024-02-29", "2024-02-29"),
        (datetime(2024, 3, 1, tzinfo=UTC), "3 days ago", "2024-02-27", "2024-02-27"),
        (datetime(2024, 3, 1, tzinfo=UTC), "last month", "2024-02", "2024-02"),
        (datetime(2023, 1, 15, tzinfo=UTC), "last month", "2022-12", "2022-12"),
        (datetime(2023, 1, 15, tzinfo=UTC), "上个月", "2022-12", "2022-12"),
        (datetime(2023, 1, 15, tzinfo=UTC), "in March", "2022-03", "2022-03"),
        (datetime(2023, 1, 15, tzinfo=UTC), "last December", "2022-12", "2022-12"),
        (datetime(2023, 12, 31, tzinfo=UTC), "tomorrow", "2024-01-01", "2024-01-01"),
        (datetime(2023, 12, 31, tzinfo=UTC), "next month", "2024-01", "2024-01"),
        (datetime(2023, 12, 31, tzinfo=UTC), "下个月", "2024-01", "2024-01"),
        (datetime(2023, 12, 31, tzinfo=UTC), "next week", "2024-01-01", "2024-01-07"),
        (datetime(2023, 12, 31, tzinfo=UTC), "this weekend", "2023-12-30", "2023-12-31"),
        (datetime(2024, 1, 3, tzinfo=UTC), "last week", "2023-12-25", "2023-12-31"),
        (datetime(2024, 1, 3, tzinfo=UTC), "last Friday", "2023-12-29", "2023-12-29"),
        (datetime(2024, 1, 3, tzinfo=UTC), "去年", "2023", "2023"),
        (datetime(2024, 1, 3, tzinfo=UTC), "last winter", "2022-12", "2023-02"),
        (datetime(2023, 12, 26, tzinfo=UTC), "last summer", "2023-06", "2023-08"),
    ],
)
def test_month_and_year_boundaries(ref: datetime, text: str, start: str, end: str) -> None:
    assert _resolved(text, ref)[:2] == (start, end)


def test_original_text_is_the_exact_wording_and_the_span_points_at_it() -> None:
    sentence = "Oh, I ran a charity race Last Saturday – it was great"
    found = resolve_time(sentence, THU)
    assert found is not None
    assert found.original_text == "Last Saturday"
    assert sentence[found.span[0] : found.span[1]] == found.original_text
    assert found.basis == "relative"


def test_just_with_a_past_verb_is_an_inferred_week_and_never_future() -> None:
    found = resolve_time("I just signed up for a class", THU, tense="past")
    assert found is not None
    assert (found.happened_start, found.happened_end) == ("2023-05-19", "2023-05-25")
    assert (found.precision, found.basis) == ("range", "inferred")
    assert resolve_time("I just signed up for a class", THU, tense="future") is None
    assert resolve_time("I just wanted to say hi", THU, tense="past") is None


def test_several_expressions_are_found_left_to_right_without_overlap() -> None:
    found = find_time_expressions("Last week I went out, and yesterday I came back", THU)
    assert [f.original_text for f in found] == ["Last week", "yesterday"]


@pytest.mark.parametrize(
    "text",
    [
        "I went there recently",
        "a few days ago we met",
        "the other day it rained",
        "I may go there",
        "I sat on the couch in the sun",
        "the last day of school was fun",
        "a couple of weeks ago",
        "几天前",
        "马上周末了",
        "",
    ],
)
def test_unknown_stays_unknown(text: str) -> None:
    assert find_time_expressions(text, THU) == []


_FRAGMENTS = [
    "yesterday", "today", "tomorrow", "last week", "this week", "next week", "last month",
    "next month", "last year", "next year", "3 days ago", "in 2 weeks", "two weeks ago",
    "last Friday", "next Sunday", "on Monday", "this weekend", "last weekend", "in May",
    "last May", "in 2022", "since 2016", "May 7, 2023", "last summer", "this winter",
    "on the 31st", "on Feb 29", "I just finished", "two weekends ago", "昨天", "上周五",
    "下个月", "去年", "3天前", "这周末", "2月30日", "5月7日", "上上周", "since 2030",
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=4),
    noise=st.text(max_size=20),
    day=st.dates(min_value=date(1995, 1, 1), max_value=date(2035, 12, 31)),
    tense=st.sampled_from([None, "past", "future"]),
)
def test_happened_end_is_never_before_happened_start(
    parts: list[str], noise: str, day: date, tense: str | None
) -> None:
    ref = datetime(day.year, day.month, day.day, 12, tzinfo=UTC) + timedelta(minutes=7)
    for found in find_time_expressions(noise + " " + " and ".join(parts), ref, tense=tense):  # type: ignore[arg-type]
        start = partial_bounds(found.happened_start)
        end = partial_bounds(found.happened_end)
        assert start[0] <= end[0] and start[1] <= end[1]
        assert found.precision in {"day", "month", "year", "range"}


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_arbitrary_text_never_raises(text: str) -> None:
    for found in find_time_expressions(text, THU):
        assert text[found.span[0] : found.span[1]] == found.original_text


def test_a_yearless_date_without_tense_takes_the_nearest_year() -> None:
    reference = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
    (soon,) = find_time_expressions("They want the demo on March 13.", reference)
    assert (soon.happened_start, soon.basis) == ("2026-03-13", "inferred")
    (winter,) = find_time_expressions("The party is on December 28.", reference)
    assert winter.happened_start == "2025-12-28"
    (past,) = find_time_expressions("They want the demo on March 13.", reference, tense="past")
    assert past.happened_start == "2025-03-13"


@pytest.mark.parametrize(
    ("text", "tense", "start", "end", "wording"),
    [
        ("an offsite in Hangzhou on March 27-28 to plan", None, "2023-03-27", "2023-03-28",
         "March 27-28"),
        ("an offsite in Hangzhou on March 27-28 to plan", "future", "2024-03-27", "2024-03-28",
         "March 27-28"),
        ("on leave from April 6 to April 10", None, "2023-04-06", "2023-04-10",
         "from April 6 to April 10"),
        ("away May 30 – June 2", None, "2023-05-30", "2023-06-02", "May 30 – June 2"),
        ("between May 1 and May 5, 2022", None, "2022-05-01", "2022-05-05",
         "between May 1 and May 5, 2022"),
        ("Dec 30 to Jan 2", "future", "2023-12-30", "2024-01-02", "Dec 30 to Jan 2"),
        ("团建定在3月27日到28日", None, "2023-03-27", "2023-03-28", "3月27日到28日"),
        ("4月6日至4月10日休假", None, "2023-04-06", "2023-04-10", "4月6日至4月10日"),
    ],
)  # fmt: skip
def test_date_ranges_are_one_range(
    text: str, tense: str | None, start: str, end: str, wording: str
) -> None:
    (found,) = find_time_expressions(text, THU, tense=tense)  # type: ignore[arg-type]
    assert (found.happened_start, found.happened_end, found.precision) == (start, end, "range")
    assert found.original_text == wording


def test_a_range_that_ends_before_it_starts_is_not_a_range() -> None:
    found = find_time_expressions("from May 10 to May 3", THU)
    assert all(f.precision != "range" for f in found)


@pytest.mark.parametrize(
    ("text", "start", "end", "precision"),
    [
        ("目标是四月二十号", "2023-04-20", "2023-04-20", "day"),
        ("四月二十七号上线", "2023-04-27", "2023-04-27", "day"),
        ("十二月三十一日", "2022-12-31", "2022-12-31", "day"),
        ("面试安排在四月中旬", "2023-04-11", "2023-04-20", "range"),
        ("6月上旬", "2023-06-01", "2023-06-10", "range"),
        ("二月下旬", "2023-02-21", "2023-02-28", "range"),
        ("5月底", "2023-05-21", "2023-05-31", "range"),
    ],
)
def test_chinese_dates_in_han_numerals_and_parts_of_a_month(
    text: str, start: str, end: str, precision: str
) -> None:
    assert _resolved(text)[:3] == (start, end, precision)


def test_a_part_of_a_month_follows_the_tense_else_the_nearest_occurrence() -> None:
    december = datetime(2023, 12, 20, tzinfo=UTC)
    assert _resolved("一月中旬", december)[:2] == ("2024-01-11", "2024-01-20")
    assert _resolved("一月中旬", december, tense="past")[:2] == ("2023-01-11", "2023-01-20")


def test_a_date_after_a_rescheduling_verb_or_until_lies_ahead() -> None:
    said = datetime(2026, 4, 3, tzinfo=UTC)
    sentence = "Helen called: the board wants the launch moved to April 27, so it lines up."
    assert _resolved(sentence, said, tense="past")[0] == "2026-04-27"
    assert _resolved("We called and it got pushed back to March 2.", said, tense="past")[0] == (
        "2027-03-02"
    )
    assert _resolved("上线推迟到3月2日了", said, tense="past")[0] == "2027-03-02"
    assert _resolved("The game was on March 2.", said, tense="past")[0] == "2026-03-02"
    tuesday = datetime(2026, 4, 7, tzinfo=UTC)
    assert _resolved("Tomás is working from Kunming until Friday.", tuesday)[0] == "2026-04-10"
    assert _resolved("I stayed there until Friday.", tuesday, tense="past")[0] == "2026-04-03"


@pytest.mark.parametrize(
    ("text", "end", "wording"),
    [
        ("It starts at the field station on June 10 and runs for two weeks.", "2023-06-23",
         "June 10 and runs for two weeks"),
        ("on June 1 for 3 days", "2023-06-03", "June 1 for 3 days"),
        ("从6月10日开始，为期两周", "2023-06-23", "6月10日开始，为期两周"),
    ],
)  # fmt: skip
def test_a_day_followed_by_a_duration_becomes_that_range(text: str, end: str, wording: str) -> None:
    (found,) = find_time_expressions(text, THU, tense="future")
    assert (found.happened_end, found.precision, found.original_text) == (end, "range", wording)


def test_a_duration_in_another_sentence_or_after_another_date_does_not_stretch_a_day() -> None:
    assert _resolved("on June 1. We stay for 3 days.", tense="future")[:3] == (
        "2023-06-01", "2023-06-01", "day",
    )  # fmt: skip
    first, second = find_time_expressions("on June 1 and June 5 for two weeks", THU, tense="future")
    assert first.precision == "day" and second.precision == "range"


def test_currently_is_the_message_day_as_an_inference() -> None:
    found = resolve_time("I'm currently reading a book", THU)
    assert found is not None
    assert (found.happened_start, found.precision, found.basis) == ("2023-05-25", "day", "inferred")
