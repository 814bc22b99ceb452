"""The offline extractor: sources, status, supersession, participants, determinism."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
from stratagate.offline.extractor import NO_EVENTS_REASON, extract_events

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
    assert event.summary == "I gave a talk at my school last week. It inspired the students."
    assert event.quotes == ["I gave a talk at my school last week.", "It inspired the students."]


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
