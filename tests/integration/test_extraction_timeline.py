"""The timeline an extractor gets is compact: bounded by ``timeline_limit``, yet it keeps the old
events the target block is about, so supersession can still reach far back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

from stratagate import StrataGate
from stratagate.models import ExtractionContext
from tests.support.fakes import KeywordExtractor, TitleSummarizer

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class RecordingExtractor(KeywordExtractor):
    """The keyword extractor, remembering the timeline of every call."""

    def __init__(self) -> None:
        self.timelines: list[list[str]] = []

    def __call__(self, ctx: ExtractionContext) -> dict[str, Any]:
        self.timelines.append([entry.title for entry in ctx.timeline])
        return super().__call__(ctx)


def ingest(limit: int) -> tuple[RecordingExtractor, list[str]]:
    extractor = RecordingExtractor()
    talk = ["we decided the build uses gradle", "lunch"]
    talk += [f"we decided topic{i} happens" for i in range(12)]
    talk += ["we decided to move the build from gradle to bazel", "ok", "done", "end"]
    counter = count()
    with StrataGate.in_memory(
        # ids ascend with creation, so "we decided topicN" (equally close to the bazel block)
        # would tie-break to the oldest if ties went by id; they go to the latest
        id_factory=lambda prefix: f"{prefix}_{next(counter):04d}",
        block_turn_size=2,
        summarizer=TitleSummarizer(),
        extractor=extractor,
        timeline_limit=limit,
    ) as memory:
        for i, user in enumerate(talk):
            memory.append_turn(user, "noted", created_at=T0 + timedelta(hours=i))
        titles = [card.title for card in memory.list_events()]
    return extractor, titles


def test_the_timeline_is_bounded_recent_and_related_in_creation_order() -> None:
    extractor, titles = ingest(limit=4)
    assert all(len(timeline) <= 4 for timeline in extractor.timelines)
    last = extractor.timelines[-1]  # the call for the block that moves the build to bazel
    assert last[0] == "we decided the build uses gradle"  # old, but about the same build
    assert last[1:] == [t for t in titles if t in last[1:]]  # latest ones, creation order
    assert "we decided topic0 happens" not in last


def test_a_limit_of_zero_hands_over_every_event() -> None:
    extractor, titles = ingest(limit=0)
    assert len(extractor.timelines[-1]) == len(titles) - 1  # all but the block's own event
