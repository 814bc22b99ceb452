"""The offline extractor: sources, status, supersession, participants, determinism."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ray import cloudpickle

from stratagate.models import (
    EventTemporal,
    ExtractionContext,
    MemoryBlock,
    RawMessage,
    TimelineEntry,
)
from stratagate.offline import OfflineExtractor, offline_extractor
from stratagate.offline.event_extractor import NO_EVENTS_REASON, extract_events

SAID = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)  # a Thursday


def _message(
    mid: str, content: str, *, role: str = "user", name: str | None = "Alice", minutes: int = 0
) -> RawMessage:
    return RawMessage(
        id=mid, role=role, content=content, name=name, created_at=SAID + timedelta(minutes=minutes)
    )  # type: ignore[arg-type]


def _block(bid: str, messages: list[RawMessage], sequence: int = 2) -> MemoryBlock:
    return MemoryBlock(
        id=bid, thread_id=None, sequence=sequence, position=sequence, start_turn=1, end_turn=1,
        created_at=SAID, should_extract=True, l0_title="t", l0_tags=[], l1_summary="s",
        l2_keypoints=[], l3_condensed="", l4_readable="", l5_raw=messages,
        pointer_current_level=5, pointer_anchor_level=5, pointer_anchor_position=sequence,
    )  # fmt: skip


def _ctx(
    target: list[RawMessage],
    *,
    previous: list[RawMessage] | None = None,
    following: list[RawMessage] | None = None,
    timeline: list[TimelineEntry] | None = None,
) -> ExtractionContext:
    return ExtractionContext(
        previous=_block("blk-1", previous, 1) if previous is not None else None,
        target=_block("blk-2", target, 2),
        next=_block("blk-3", following or [], 3),
        timeline=timeline or [],
    )


def _only(ctx: ExtractionContext):
    result = extract_events(ctx)
    assert result.should_extract, result.reason
    assert len(result.events) == 1, [e.summary for e in result.events]
    return result.events[0]


def test_only_target_messages_are_sources_neighbours_are_context() -> None:
    ctx = _ctx(
        [_message("t1", "We decided to use Postgres for the event store.")],
        previous=[_message("p1", "I switched from Vim to Emacs last week.", name="Bob")],
        following=[_message("n1", "I'm going to Paris next month for a conference.", name="Bob")],
    )
    result = extract_events(ctx)
    assert [e.source_message_ids for e in result.events] == [["t1"]]
    assert all(e.source_block_id == "blk-2" for e in result.events)
    assert "Paris" not in " ".join(e.summary + e.title for e in result.events)


def test_a_dated_happening_occurred_with_its_resolved_day_and_wording() -> None:
    event = _only(_ctx([_message("t1", "I went to a LGBTQ support group yesterday.")]))
    temporal = event.temporal
    assert temporal is not None
    assert (temporal.happened_start, temporal.happened_end) == ("2023-05-24", "2023-05-24")
    assert (temporal.status, temporal.precision, temporal.basis) == ("occurred", "day", "relative")
    assert temporal.original_text == "yesterday"
    assert temporal.mentioned_at is not None
    assert temporal.mentioned_at.startswith("2023-05-25T13:14")
    assert event.quotes == ["I went to a LGBTQ support group yesterday."]
    assert event.title.startswith("Alice went to a LGBTQ support group")


def test_plans_are_planned_and_point_forward() -> None:
    event = _only(_ctx([_message("t1", "I'm going to a transgender conference next month.")]))
    assert event.temporal is not None
    assert event.temporal.status == "planned"
    assert event.temporal.happened_start == "2023-06"
    assert event.temporal.event_type == "plan"


def test_cancelled_wins_over_the_tense() -> None:
    event = _only(_ctx([_message("t1", "The band trip next week was cancelled by the school.")]))
    assert event.temporal is not None
    assert event.temporal.status == "cancelled"


def test_a_switch_supersedes_the_latest_timeline_event_about_the_old_tool() -> None:
    timeline = [
        TimelineEntry(id="evt-old", title="We decided to use npm", temporal=EventTemporal()),
        TimelineEntry(id="evt-other", title="Alice likes hiking"),
        TimelineEntry(id="evt-newer", title="Team keeps npm for the monorepo"),
    ]
    event = _only(
        _ctx([_message("t1", "We switched from npm to pnpm last week.")], timeline=timeline)
    )
    assert event.temporal is not None
    assert event.temporal.event_type == "change"
    assert event.temporal.supersedes_event_ids == ["evt-newer"]


def test_a_switch_supersedes_nothing_when_the_timeline_never_named_the_old_tool() -> None:
    timeline = [TimelineEntry(id="evt-1", title="Alice likes hiking")]
    event = _only(_ctx([_message("t1", "We switched from npm to pnpm.")], timeline=timeline))
    assert event.temporal is not None
    assert event.temporal.supersedes_event_ids == []


def test_nothing_found_means_should_extract_false_with_a_reason() -> None:
    greeting = _message("t1", "Hey! How are you?")
    reply = _message("t2", "Good, thanks!", role="assistant", name="Bob")
    result = extract_events(_ctx([greeting, reply]))
    assert (result.should_extract, result.events) == (False, [])
    assert result.reason == NO_EVENTS_REASON


def test_participants_are_the_speaker_and_known_speakers_mentioned() -> None:
    ctx = _ctx(
        [_message("t1", "Melanie and I went to the museum yesterday with Anthony.")],
        following=[_message("n1", "That sounds lovely!", role="assistant", name="Melanie")],
    )
    event = _only(ctx)
    assert event.temporal is not None
    assert event.temporal.participants == ["Alice", "Melanie"]


def test_role_names_stand_in_for_missing_speaker_names() -> None:
    event = _only(_ctx([_message("t1", "We decided to use Postgres.", name=None)]))
    assert event.temporal is not None
    assert event.temporal.participants == ["user"]


def test_criticality_follows_preferences_and_identity() -> None:
    preference = _only(_ctx([_message("t1", "I prefer dark roast coffee in the morning.")]))
    identity = _only(_ctx([_message("t1", "I'm a counselor at the youth center.")]))
    assert preference.criticality == "preference"
    assert identity.criticality == "identity"
    assert preference.temporal is not None and preference.temporal.event_type == "preference"


def test_chinese_decisions_and_dates_are_extracted() -> None:
    event = _only(_ctx([_message("t1", "我们上周五决定改用pnpm。")]))
    assert event.temporal is not None
    assert event.temporal.happened_start == "2023-05-19"
    assert event.temporal.original_text == "上周五"


def test_an_unnamed_assistant_is_not_a_source_of_plans_or_preferences() -> None:
    result = extract_events(
        _ctx([_message("a1", "I'll help you plan the trip to Rome next week.", role="assistant",
                       name=None)])
    )  # fmt: skip
    assert result.events == []


def test_near_identical_sentences_become_one_event_citing_both_messages() -> None:
    result = extract_events(
        _ctx([
            _message("t1", "We decided to use Postgres for the store."),
            _message("t2", "We decided to use Postgres for the store!", role="assistant",
                     name="Bob"),
        ])
    )  # fmt: skip
    assert [e.source_message_ids for e in result.events] == [["t1", "t2"]]


def test_a_following_sentence_of_the_same_message_extends_the_summary() -> None:
    event = _only(
        _ctx([_message("t1", "I gave a talk at my school last week. It inspired the students.")])
    )
    # the summary reads in the third person (the quotes keep the words as said)
    assert event.summary == (
        "Alice gave a talk at Alice's school last week. It inspired the students."
    )
    assert event.title == "Alice gave a talk at Alice's school last week"
    assert event.quotes == ["I gave a talk at my school last week.", "It inspired the students."]


def test_titles_and_summaries_name_the_speaker_for_every_first_person_word() -> None:
    event = _only(
        _ctx([_message("t1", "Last week I decided that my kids and I will move to Lisbon.")])
    )
    assert event.title == "Last week Alice decided that Alice's kids and Alice will move to Lisbon"
    assert (
        event.summary == "Last week Alice decided that Alice's kids and Alice will move to Lisbon."
    )


def test_the_callback_pickles_and_accepts_plain_dicts() -> None:
    ctx = _ctx([_message("t1", "We decided to use Postgres for the store.")])
    restored = cloudpickle.loads(cloudpickle.dumps(offline_extractor))
    assert restored(ctx.model_dump()) == offline_extractor(ctx)
    assert len(OfflineExtractor(max_events=1)(ctx).events) == 1


_SENTENCES = [
    "I went hiking yesterday.", "We decided to use Rust.", "I'm going to Rome next month.",
    "I love painting sunsets.", "Hey there!", "The trip was cancelled last week.",
    "We switched from npm to pnpm.", "昨天我们决定改用Go。", "I'm a teacher.", "Nice!",
    "Last Friday I joined a running club.", "What did you do?", "I just adopted a puppy.",
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=3), min_size=1, max_size=6
    )
)
def test_extraction_is_deterministic_and_cites_only_target_messages(
    texts: list[list[str]],
) -> None:
    messages = [
        _message(f"m{i}", " ".join(parts), role="user" if i % 2 == 0 else "assistant",
                 name="Alice" if i % 2 == 0 else "Bob", minutes=i)
        for i, parts in enumerate(texts)
    ]  # fmt: skip
    ctx = _ctx(messages, previous=[_message("p1", "We decided to use Java.")])
    first, second = extract_events(ctx), extract_events(ctx.model_copy(deep=True))
    assert first == second
    target_ids = {m.id for m in messages}
    for event in first.events:
        assert event.source_message_ids and set(event.source_message_ids) <= target_ids
        assert event.temporal is not None
        if event.temporal.happened_start:
            assert event.temporal.happened_end is not None
            assert event.temporal.happened_start[:4] <= event.temporal.happened_end[:4]


def _said(mid: str, content: str, when: datetime, *, role: str = "user") -> RawMessage:
    return RawMessage(id=mid, role=role, content=content, created_at=when)  # type: ignore[arg-type]


def _entry(
    eid: str,
    title: str,
    *,
    status: str = "planned",
    start: str | None = None,
    end: str | None = None,
    event_type: str = "plan",
) -> TimelineEntry:
    return TimelineEntry(
        id=eid, title=title,
        temporal=EventTemporal(happened_start=start, happened_end=end or start, status=status,
                               event_type=event_type, precision="day" if start else None),
    )  # type: ignore[arg-type]  # fmt: skip


def _types(ctx: ExtractionContext) -> list[tuple[str, str | None]]:
    return [(e.title, e.temporal.event_type if e.temporal else None)
            for e in extract_events(ctx).events]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("Team: Priya Raman is our designer and Tomás Ortega does the backend.", "introduction"),
        ("Our client contact at Northridge is Dr. Helen Okafor.", "introduction"),
        ("Team: Ana Souza and Wang Lei from the studio.", "introduction"),
        ("同步的问题交给 Tomás 处理。", "assignment"),
        ("Stack: React Native with Expo for the app.", "decision"),
        ("We'll use npm for packages since everyone has it.", "decision"),
        ("Good point. Let's keep PostgreSQL for the server.", "decision"),
        ("决定了：服务器改用阿里云。", "change"),
        ("Let's switch to pnpm then.", "change"),
        ("Then no hosted Sentry: we send crash logs to our own endpoint.", "change"),
        ("Plan: finish the prototype next week.", "plan"),
        ("我们下个月上线，目标是四月二十号。", "plan"),
        ("She also wants a green accent colour on the dark theme.", "preference"),
        ("我还是想保留深色主题作为默认。", "preference"),
        ("I'm Lin Wei, product lead at a small studio.", "identity"),
        ("The offline queue is about half done.", "activity"),
        ("The prototype is done!", "happening"),
        ("Took a trip to a new place, it was amazing.", "happening"),
        ("I was in Chicago, the locals were friendly.", "happening"),
        ("I'm currently reading a book about startups.", "activity"),
    ],
)
def test_new_signals_give_their_event_types(text: str, event_type: str) -> None:
    found = _types(_ctx([_message("t1", text, name=None)]))
    assert found and found[-1][1] == event_type, found


def test_an_unnamed_assistant_still_contributes_no_introductions_or_preferences() -> None:
    ctx = _ctx([_message("a1", "Priya Raman is our designer. She also wants a green theme.",
                         role="assistant", name=None)])  # fmt: skip
    assert extract_events(ctx).events == []


def test_participants_are_named_people_with_first_names_resolved_from_context() -> None:
    ctx = _ctx(
        [_message("t1", "Priya will share the first Figma mockups on Friday.", name=None),
         _message("t2", "I'm Lin Wei, product lead at a small studio.", name=None, minutes=1)],
        previous=[_message("p1", "Team: Priya Raman is our designer.", name=None)],
    )  # fmt: skip
    first, second = extract_events(ctx).events
    assert first.temporal is not None and second.temporal is not None
    assert first.temporal.participants == ["user", "Priya Raman"]
    assert second.temporal.participants == ["user"]  # the speaker's own name is no mention


def test_timeline_participants_make_names_known_and_titles_do_not_split_sentences() -> None:
    timeline = [
        TimelineEntry(
            id="e0",
            title="Demo it to Helen",
            temporal=EventTemporal(participants=["user", "Helen Okafor"]),
        )
    ]
    ctx = _ctx(
        [_message("t1", "Helen introduced another contact: Dr. Marco Bianchi, who runs the "
                        "Kunming field station.", name=None)],
        timeline=timeline,
    )  # fmt: skip
    event = _only(ctx)
    assert event.temporal is not None
    assert event.temporal.participants == ["user", "Helen Okafor", "Marco Bianchi"]
    assert "Dr. Marco Bianchi" in event.title


def test_a_following_sentence_that_only_dates_it_lends_its_time() -> None:
    said = datetime(2026, 3, 11, 6, 52, tzinfo=UTC)
    event = _only(
        _ctx([_said("t1", "The prototype is done! Finished it this afternoon, early.", said)])
    )
    assert event.title == "The prototype is done"
    assert event.temporal is not None
    assert (event.temporal.happened_start, event.temporal.status) == ("2026-03-11", "occurred")
    assert event.quotes == ["The prototype is done!", "Finished it this afternoon, early."]


def test_a_following_happening_of_its_own_is_not_merged() -> None:
    result = extract_events(
        _ctx([_message("t1", "We had a wild few days. I met my teammates on the 15th after it.")])
    )
    assert len(result.events) == 2


def test_a_month_is_narrowed_by_a_day_inside_it() -> None:
    said = datetime(2026, 3, 18, 3, 50, tzinfo=UTC)
    event = _only(_ctx([_said("t1", "我们下个月上线，目标是四月二十号。", said)]))
    assert event.temporal is not None
    assert (event.temporal.happened_start, event.temporal.original_text) == (
        "2026-04-20", "四月二十号",
    )  # fmt: skip


def test_a_cancelled_plan_keeps_this_years_date() -> None:
    said = datetime(2026, 3, 25, 5, 10, tzinfo=UTC)
    event = _only(
        _ctx([_said("a1", "Understood, the March 27-28 Hangzhou offsite is cancelled.", said,
                    role="assistant")])
    )  # fmt: skip
    assert event.temporal is not None
    assert (event.temporal.happened_start, event.temporal.happened_end) == (
        "2026-03-27", "2026-03-28",
    )  # fmt: skip
    assert event.temporal.status == "cancelled"


def test_a_cancellation_supersedes_the_planned_event_on_its_topic_and_takes_its_dates() -> None:
    said = datetime(2026, 3, 25, 5, 10, tzinfo=UTC)
    timeline = [
        _entry("plan-offsite", "The team offsite in Hangzhou on March 27-28", start="2026-03-27",
               end="2026-03-28"),
        _entry("plan-pilot", "Plan for the pilot in Kunming", start="2026-03-30"),
        _entry("done-offsite", "The offsite budget was approved", status="occurred"),
    ]  # fmt: skip
    result = extract_events(
        _ctx([_said("t1", "Bad news: the Hangzhou offsite is called off. 团建取消了。", said)],
             timeline=timeline)
    )  # fmt: skip
    english, chinese = result.events
    assert english.title == "The Hangzhou offsite is called off"
    assert english.temporal is not None and chinese.temporal is not None
    assert english.temporal.supersedes_event_ids == ["plan-offsite"]
    assert (english.temporal.happened_start, english.temporal.basis) == ("2026-03-27", "inferred")
    assert chinese.temporal.supersedes_event_ids == []  # superseded once per block
    assert (chinese.temporal.status, chinese.temporal.happened_end) == ("cancelled", "2026-03-28")


def test_a_chinese_cancellation_matches_an_english_plan_through_topic_groups() -> None:
    timeline = [_entry("plan-offsite", "The team offsite in Hangzhou", start="2026-03-27")]
    event = _only(
        _ctx([_said("t1", "团建取消了，大家都很忙。", datetime(2026, 3, 25, tzinfo=UTC))],
             timeline=timeline)
    )  # fmt: skip
    assert event.temporal is not None
    assert event.temporal.supersedes_event_ids == ["plan-offsite"]


def test_a_switch_without_a_named_old_tool_supersedes_the_same_category_choice() -> None:
    timeline = [
        _entry("npm", "We'll use npm for packages", status="planned", event_type="decision"),
        _entry("pg", "We decided to use PostgreSQL", status="unknown", event_type="decision"),
    ]
    event = _only(_ctx([_message("t1", "Let's switch to pnpm then.", name=None)],
                       timeline=timeline))  # fmt: skip
    assert event.temporal is not None
    assert event.temporal.supersedes_event_ids == ["npm"]


def test_chinese_no_longer_using_names_the_old_tool_in_any_spelling() -> None:
    timeline = [
        _entry("fly", "For hosting the API, let's go with Fly.io", status="unknown",
               event_type="decision"),
        _entry("other", "Priya will share mockups", start="2026-03-06"),
    ]  # fmt: skip
    event = _only(_ctx([_message("t1", "决定了：服务器改用阿里云上海区域，不用 Fly.io 了。",
                                 name=None)], timeline=timeline))  # fmt: skip
    assert event.temporal is not None
    assert event.temporal.supersedes_event_ids == ["fly"]


def test_a_moved_date_supersedes_the_plan_on_the_same_topic_across_languages() -> None:
    said = datetime(2026, 4, 3, 2, 30, tzinfo=UTC)
    timeline = [
        _entry("launch", "我们下个月上线，目标是四月二十号", start="2026-04-20"),
        _entry("demo", "Demo it to Helen on March 13", start="2026-03-13"),
    ]
    ctx = _ctx(
        [_said("t1", "Helen called: the board wants the launch moved to April 27, so it fits.",
               said)],
        timeline=timeline,
    )  # fmt: skip
    event = _only(ctx)
    assert event.temporal is not None
    assert event.temporal.happened_start == "2026-04-27"
    assert event.temporal.supersedes_event_ids == ["launch"]


def test_a_switch_inside_one_block_names_its_sibling_by_an_assigned_id() -> None:
    ctx = _ctx([
        _message("t1", "We'll use Sentry for crash reports.", name=None),
        _message("t2", "Then no hosted Sentry: we'll send crash logs to our own endpoint.",
                 name=None, minutes=1),
        _message("a2", "Noted: crash logs go to an in-house endpoint instead of hosted Sentry.",
                 role="assistant", name=None, minutes=2),
    ])  # fmt: skip
    first, second, third = extract_events(ctx).events
    assert first.id == "blk-2-e1" and second.id is None and third.id is None
    assert second.temporal is not None and third.temporal is not None
    assert second.temporal.supersedes_event_ids == ["blk-2-e1"]
    assert third.temporal.supersedes_event_ids == []  # a restatement replaces nothing new


def test_a_sentence_naming_someone_or_somewhere_is_an_event_of_its_own() -> None:
    book = _only(_ctx([_message("t1", "That novel by Amy Ellis Nutt really moved me.")]))
    assert book.title == "That novel by Amy Ellis Nutt really moved Alice"
    assert book.temporal is not None and "Amy Ellis Nutt" in book.temporal.participants
    trip = _only(_ctx([_message("t1", "The sunsets over the Grand Canyon were unreal.")]))
    assert trip.summary == "The sunsets over the Grand Canyon were unreal."
    result = extract_events(_ctx([_message("t1", "Fly.io in Tokyo is out.")]))
    assert result.events == []  # tool talk counts through decisions and changes only
