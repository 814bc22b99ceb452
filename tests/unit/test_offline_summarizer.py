"""The offline summarizer: deterministic, bounded, conservative about extraction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from ray import cloudpickle

from stratagate.models import RawMessage
from stratagate.offline import OfflineSummarizer, offline_summarizer
from stratagate.offline.summarizer import EMPTY_TITLE, summarize

SAID = datetime(2023, 5, 25, 13, 14, tzinfo=UTC)


def _messages(*texts: str) -> list[RawMessage]:
    return [
        RawMessage(
            id=f"m{i}", role="user" if i % 2 == 0 else "assistant", content=text,
            name="Alice" if i % 2 == 0 else "Bob", created_at=SAID + timedelta(seconds=i),
        )  # type: ignore[arg-type]
        for i, text in enumerate(texts)
    ]  # fmt: skip


def test_signals_become_key_points_and_mark_the_block_for_extraction() -> None:
    summary = summarize(
        _messages(
            "Hey Bob! How are you?",
            "Good! We decided to use Postgres for the event store.",
            "Great. I'm going to Berlin next month for the conference.",
            "Nice, enjoy the trip!",
        )
    )
    assert summary.should_extract
    assert summary.l2_keypoints == [
        "Bob: We decided to use Postgres for the event store.",
        "Alice: I'm going to Berlin next month for the conference.",
    ]
    assert summary.l0_title == "I'm going to Berlin next month for the conference"
    assert "Alice:" in summary.l1_summary and "Bob:" in summary.l1_summary


def test_key_points_keep_conversation_order_and_their_bound() -> None:
    texts = [f"On day {n} we went hiking." for n in range(1, 13)]
    texts[5] = "We decided to use Postgres for the event store after the Berlin trip last week."
    summary = summarize(_messages(*texts))
    assert len(summary.l2_keypoints) == 8
    assert summary.l2_keypoints[0] == "Alice: On day 1 we went hiking."
    assert summary.l2_keypoints[5].startswith("Bob: We decided to use Postgres")


def test_plain_statements_without_signals_are_not_marked_for_extraction() -> None:
    summary = summarize(_messages("The garden looks lovely and green.", "The weather is mild."))
    assert not summary.should_extract
    assert summary.l2_keypoints == []


def test_small_talk_is_not_marked_for_extraction() -> None:
    summary = summarize(_messages("Hey! How are you?", "Fine, thanks! And you?", "Good!"))
    assert not summary.should_extract
    assert summary.l2_keypoints == []
    assert summary.l0_title


def test_an_empty_block_still_has_a_title() -> None:
    summary = summarize(_messages("", ""))
    assert summary.l0_title == EMPTY_TITLE and not summary.should_extract


def test_chinese_text_is_segmented_into_tags() -> None:
    summary = summarize(_messages("我们决定改用pnpm，因为pnpm安装更快。", "好的，明天开始迁移。"))
    assert "pnpm" in summary.l0_tags
    assert "决定" in summary.l0_tags and "改用" in summary.l0_tags
    assert summary.should_extract


def test_the_callback_pickles_and_accepts_plain_dicts() -> None:
    messages = _messages("We decided to use Postgres.", "OK!")
    restored = cloudpickle.loads(cloudpickle.dumps(offline_summarizer))
    assert restored([m.model_dump() for m in messages]) == summarize(messages)
    assert len(OfflineSummarizer(max_tags=2)(messages).l0_tags) <= 2


_VOCABULARY = (
    "I we you went decided use love going next month yesterday Postgres Berlin party 42 "
    "昨天 决定 改用 hiking trip the a and . ! ? 2023-05-07 cancelled switched to from"
)
_WORDS = st.sampled_from(_VOCABULARY.split())


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(
        st.lists(_WORDS, max_size=40).map(" ".join) | st.text(max_size=200),
        min_size=1,
        max_size=24,
    )
)
def test_summaries_are_deterministic_and_bounded(texts: list[str]) -> None:
    messages = _messages(*texts)
    summary = summarize(messages)
    assert summary == summarize([m.model_copy() for m in messages])
    assert 0 < len(summary.l0_title) <= 60
    assert len(summary.l0_tags) <= 8 and len(set(summary.l0_tags)) == len(summary.l0_tags)
    assert len(summary.l1_summary) <= 2 * (140 + 20)
    assert len(summary.l2_keypoints) <= 8
    assert all(len(point) <= 180 + len("Alice: ") for point in summary.l2_keypoints)
    if summary.l2_keypoints:
        assert summary.should_extract
