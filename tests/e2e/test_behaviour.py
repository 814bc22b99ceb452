"""The docs/API.md behaviour suite: every row, run once inline and once on a real local Ray.

Each test is a scenario over one namespace (a Ray namespace costs four actor processes), and
asserts what a caller observes through the public API only.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stratagate import (
    AsyncStrataGate,
    InvalidInputError,
    ModelResponseError,
    StaleHandleError,
    StorageConflictError,
    StrataGate,
    StrataGateError,
    UnknownIdError,
)
from tests.support.fakes import (
    CountingIds,
    EmptyHanded,
    Failing,
    KeywordExtractor,
    TitleSummarizer,
    UsesProjector,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def feed(
    memory: Any, n: int, *, start: int = 0, thread_id: str | None = None, text: str = "note"
) -> list[Any]:
    return [
        memory.append_turn(f"{text} {i}", f"reply {i}", created_at=at(i), thread_id=thread_id)
        for i in range(start, start + n)
    ]


def test_construction_is_explicit() -> None:
    with pytest.raises(TypeError):
        StrataGate()


def test_ingest_blocks_threads_and_decay(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2)
    assert (memory.namespace, memory.turn, memory.revision) == ("test", 0, 1)  # the settings
    results = feed(memory, 3)
    assert [r.turn for r in results] == [1, 2, 3]
    assert results[0].sealed_block is None and results[1].sealed_block is not None
    block = results[1].sealed_block
    assert (block.position, block.sequence, block.start_turn, block.end_turn) == (1, 1, 1, 2)
    assert [m.content for m in block.l5_raw] == ["note 0", "reply 0", "note 1", "reply 1"]
    assert "User: note 0" in block.l4_readable and block.pointer_current_level == 5
    assert [m.content for m in memory.list_open_tail()] == ["note 2", "reply 2"]
    assert memory.turn == 3 and memory.revision > 3

    # receipts: a duplicate is a no-op with an empty result
    first = memory.append_turn("hello", "hi", receipt_id="r-1", created_at=at(10))
    again = memory.append_turn("hello", "hi", receipt_id="r-1", created_at=at(11))
    assert first.turn == 4 and again.duplicate and again.turn is None
    assert memory.has_ingestion_receipt("r-1") and not memory.has_ingestion_receipt("r-2")
    revision = memory.revision
    memory.append_turn("hello", "hi", receipt_id="r-1")
    assert memory.revision == revision

    # threads are isolated: their own tails, positions and turn ranges
    memory.append_turn("side a", "ok", thread_id="side", created_at=at(20))
    side = memory.append_turn("side b", "ok", thread_id="side", created_at=at(21))
    assert side.sealed_block is not None and side.sealed_block.thread_id == "side"
    assert side.sealed_block.position == 1 and side.sealed_block.start_turn == 1
    assert [b.thread_id for b in memory.list_blocks("side")] == ["side"]
    assert memory.list_open_tail("side") == []

    # empty strings are content; None is not
    memory.append_turn("", "", created_at=at(30))
    with pytest.raises(InvalidInputError):
        memory.append_turn(None, "x")
    revision = memory.revision
    with pytest.raises(InvalidInputError):
        memory.append_turn("x", "y", created_at="not a time")
    assert memory.revision == revision

    # decay: ten more blocks push the first block to L0; expanding re-anchors it
    feed(memory, 20, start=100)
    first_block = memory.get_block(block.id)
    assert first_block.pointer_current_level == 0
    entry = memory.expand_block(block.id, "L3", source="user")
    assert (entry.id, entry.level, entry.label) == (block.id, 3, "L3 condensed")
    assert entry.content == first_block.l3_condensed and entry.thread_id == block.thread_id
    assert entry.turn_range == (block.start_turn, block.end_turn)
    lifted = memory.get_block(block.id)
    assert lifted.pointer_current_level == 3 and lifted.last_lift_source == "user"
    assert lifted.pointer_anchor_position == max(
        b.position for b in memory.list_blocks(None) if b.thread_id is None
    )
    assert memory.expand_block(block.id).level == 4
    assert memory.expand_block(block.id, None).level == 5
    assert memory.expand_block(block.id, "L4").level == 4
    assert memory.expand_block(block.id, "raw").label == "L5 raw"
    memory.expand_block(block.id, "L4")
    context = memory.get_block_context()
    assert next(entry.id for entry in context) == block.id
    assert context[0].level == 4 and context[0].content == first_block.l4_readable
    with pytest.raises(UnknownIdError):
        memory.get_block("blk_missing")
    with pytest.raises(InvalidInputError):
        memory.expand_block(block.id, "L9")


def test_extraction_projection_and_manual_state_machine(open_memory: Any) -> None:
    memory = open_memory(
        block_turn_size=2,
        summarizer=TitleSummarizer(),
        extractor=KeywordExtractor(),
        element_projector=UsesProjector(),
    )
    memory.append_turn("we decided the app uses npm", "noted", created_at=at(0))
    memory.append_turn("more talk", "sure", created_at=at(1))
    assert memory.list_events() == []  # block 1 waits for block 2
    memory.append_turn("then we decided the app uses pnpm", "noted", created_at=at(2))
    result = memory.append_turn("and more", "yes", created_at=at(3))
    assert [e.summary for e in result.extracted_events] == ["we decided the app uses npm"]
    event = result.extracted_events[0]
    block_one = memory.list_blocks()[0]
    assert event.source_block_id == block_one.id
    assert event.source_message_ids == [block_one.l5_raw[0].id]
    assert event.temporal.mentioned_at.startswith("2026-03-02T09:00")
    assert [j.status for j in memory.list_extraction_jobs()] == ["succeeded"]
    assert [e.name for e in result.projected_elements] == ["app"]
    assert memory.list_elements()[0].current_state == {"uses": "npm"}

    feed(memory, 2, start=10)  # seals block 3, so block 2 is extracted: app switches to pnpm
    app = memory.list_elements()[0]
    assert app.current_state == {"uses": "pnpm"}
    old, new = sorted(app.facts, key=lambda f: f.created_at)
    assert old.status == "superseded" and old.valid_to is not None and new.status == "active"
    assert memory.expand_element(app.id, at=old.valid_from).current_state == {"uses": "npm"}
    assert all(j.status == "completed" for j in memory.list_element_projection_jobs())

    # expand_event returns the exact cited messages
    expanded = memory.expand_event(event.id)
    assert [m.content for m in expanded.source_messages] == ["we decided the app uses npm"]

    # add_event: provenance must stay inside its block
    added = memory.add_event(
        {"title": "manual", "summary": "the tool uses sqlite", "source_block_id": block_one.id}
    )
    assert added.source_message_ids == [m.id for m in block_one.l5_raw]
    with pytest.raises(InvalidInputError):
        memory.add_event(
            {
                "title": "bad",
                "summary": "x",
                "source_block_id": block_one.id,
                "source_message_ids": ["msg_elsewhere"],
            }
        )
    with pytest.raises(UnknownIdError):
        memory.add_event({"title": "bad", "summary": "x", "source_block_id": "blk_missing"})


def test_manual_projection_without_projector(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=1)
    memory.append_turn("hello", "hi", created_at=at(0))
    block = memory.list_blocks()[0]
    card = memory.add_event(
        {"title": "stack", "summary": "the app uses pnpm", "source_block_id": block.id}
    )
    jobs = memory.list_element_projection_jobs()
    assert [(j.status, j.source_event_ids) for j in jobs] == [("pending", [card.id])]
    claim = memory.claim_next_element_projection()
    assert claim is not None and [e.id for e in claim.events] == [card.id]
    assert memory.claim_next_element_projection() is None
    change = {
        "element": {"name": "app", "type": "project"},
        "operation": "set_state",
        "key": "uses",
        "value": "pnpm",
        "source_event_ids": [card.id],
    }
    outside = {**change, "key": "owner", "value": "x", "source_event_ids": [card.id, "evt_other"]}
    applied = memory.complete_element_projection(
        claim.job_id, {"reason": "r", "changes": [change, outside]}
    )
    assert [type(card).__name__ for card in applied] == ["ElementCard"]  # as the reference
    [element] = applied
    assert element == memory.list_elements()[0]
    assert element.current_state == {"uses": "pnpm"}  # the fact citing an outside event was dropped
    [job] = [j for j in memory.list_element_projection_jobs() if j.id == claim.job_id]
    assert job.status == "completed" and job.element_ids == [element.id]
    with pytest.raises(InvalidInputError):
        memory.complete_element_projection(claim.job_id, {"changes": []})  # not running any more

    second = memory.add_event(
        {"title": "n", "summary": "nothing to project", "source_block_id": block.id}
    )
    claim = memory.claim_next_element_projection()
    failed = memory.fail_element_projection(claim.job_id, "model timed out")
    assert failed.status == "failed" and failed.last_error == "model timed out"
    retry = memory.claim_next_element_projection()  # a manual loop retries a failed job
    assert retry is not None and retry.job_id == claim.job_id
    [job] = [j for j in memory.list_element_projection_jobs() if j.id == claim.job_id]
    assert (job.status, job.attempts) == ("running", 2)
    memory.fail_element_projection(claim.job_id, RuntimeError("still down"))
    again = memory.resume_pending_work()
    assert again.projected_elements == []
    assert second.id in memory.list_element_projection_jobs()[-1].source_event_ids


def test_failures_are_durable_and_resumable(open_memory: Any, tmp_path: Any) -> None:
    database = str(tmp_path / "fail.db")
    memory = open_memory(
        database=database, block_turn_size=1, extractor=Failing("extractor offline")
    )
    memory.append_turn("we decided to ship", "ok", created_at=at(0))
    with pytest.raises(RuntimeError, match="extractor offline"):
        memory.append_turn("second", "ok", created_at=at(1))
    assert memory.turn == 2  # the turn was durable before the model call
    jobs = memory.list_extraction_jobs()
    assert [(j.status, j.attempts) for j in jobs] == [("failed", 1)]
    assert "extractor offline" in jobs[0].last_error
    memory.close()

    memory = open_memory(database=database, block_turn_size=1, extractor=KeywordExtractor())
    resumed = memory.resume_pending_work()
    assert [e.summary for e in resumed.extracted_events] == ["we decided to ship"]
    assert [(j.status, j.attempts) for j in memory.list_extraction_jobs()] == [("succeeded", 2)]

    # a skipped job is retried once, on request, however often resume is called
    memory.append_turn("nothing here", "ok", created_at=at(2))
    memory.append_turn("later", "ok", created_at=at(3))
    before = {
        j.block_id: j.attempts for j in memory.list_extraction_jobs() if j.status == "skipped"
    }
    assert before
    memory.resume_pending_work()
    assert {
        j.block_id: j.attempts for j in memory.list_extraction_jobs() if j.block_id in before
    } == before
    memory.resume_pending_work(retry_skipped=True)
    memory.resume_pending_work(retry_skipped=True)
    after = {j.block_id: j.attempts for j in memory.list_extraction_jobs() if j.block_id in before}
    assert after == {block_id: attempts + 1 for block_id, attempts in before.items()}


def test_append_turns_is_one_commit_of_checked_idempotent_turns(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2, extractor=KeywordExtractor())
    turns = [
        {
            "user": f"we decided step {i}",
            "assistant": "ok",
            "receipt_id": f"r{i}",
            "created_at": at(i),
        }
        for i in range(5)
    ]
    revision = memory.revision
    with pytest.raises(InvalidInputError, match=r"turns\[2\]"):
        memory.append_turns([*turns[:2], {"user": None, "assistant": "x"}])
    assert memory.revision == revision  # a bad turn anywhere: nothing is appended
    done = memory.append_turns(turns)
    assert done.turns == [1, 2, 3, 4, 5] and done.duplicates == 0
    assert len(done.sealed_blocks) == 2 and done.extracted_events
    ingest = [r for r in memory.history() if r.type == "TurnAppended"]
    assert len(ingest) == 5 and len({r.recorded_at for r in ingest}) == 1  # one append
    again = memory.append_turns(
        [*turns[3:], {"user": "new", "assistant": "ok", "receipt_id": "r9"}]
    )
    assert again.turns == [None, None, 6] and again.duplicates == 2
    assert memory.turn == 6 and memory.verify().ok
    cards = memory.add_events(
        [
            {
                "title": f"note {i}",
                "summary": f"note {i}",
                "source_block_id": done.sealed_blocks[0].id,
            }
            for i in range(3)
        ]
    )
    assert [c.title for c in cards] == ["note 0", "note 1", "note 2"]
    with pytest.raises(UnknownIdError):
        memory.add_events([{"title": "x", "summary": "x", "source_block_id": "blk_nope"}])


def test_an_extractor_without_events_is_a_failure_the_caller_sees(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=1, extractor=EmptyHanded())
    memory.append_turn("we decided to ship", "ok", created_at=at(0))
    with pytest.raises(ModelResponseError, match="returned no valid events: looked important"):
        memory.append_turn("second", "ok", created_at=at(1))
    [job] = memory.list_extraction_jobs()
    assert job.status == "failed" and "no valid events" in (job.last_error or "")
    memory.append_turn("third", "ok", created_at=at(2), wait=False)
    with pytest.raises(ModelResponseError, match="no valid events"):
        memory.drain(timeout=60)


def test_a_deterministic_id_factory_keeps_ids_unique(open_memory: Any) -> None:
    memory = open_memory(
        block_turn_size=1,
        id_factory=CountingIds(),
        extractor=KeywordExtractor(),
        element_projector=UsesProjector(),
    )
    for minute in range(4):
        memory.append_turn(f"we decided to use tool{minute}", "ok", created_at=at(minute))
    hits = memory.search_events("decided")
    memory.record_memory_use(event_ids=[hits[0].id], receipt_id="r1")
    ids = [b.id for b in memory.list_blocks()] + [e.id for e in memory.list_events()]
    ids += [m.id for b in memory.list_blocks() for m in b.l5_raw]
    ids += [e.id for e in memory.list_elements()] + [
        j.id for j in memory.list_element_projection_jobs()
    ]
    assert len(ids) == len(set(ids)) and all(i.split("_")[1].isdigit() for i in ids)
    assert memory.verify().ok


def test_retrieval_gate_adoption_and_governance(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2, extractor=KeywordExtractor())
    memory.append_turn("we decided to use pnpm because installs were slow", "ok", created_at=at(0))
    memory.append_turn("we decided the demo is on friday", "ok", created_at=at(1))
    feed(memory, 2, start=10)
    hits = memory.search_events("pnpm installs")
    assert hits and hits[0].event.summary.startswith("we decided to use pnpm")
    assert hits.batch_id
    event_id = hits[0].id
    assert memory.get_event(event_id).weight.mention_count == 1  # search never reinforces
    assert memory.get_event(event_id).weight.last_retrieved_at is not None
    assert memory.search_events("zebra xylophone") == []

    raw = memory.search_raw_memory("demo friday")
    assert raw[0].message.content == "we decided the demo is on friday" and raw.batch_id
    assert raw[0].block_id == memory.list_blocks()[0].id

    verdict = memory.assess_retrieval(
        {
            "verdict": "sufficient",
            "evidence_refs": [event_id, "evt_x", event_id],
            "fit": "f",
            "missing": "",
            "next_strategy": "answer",
        },
        hits.batch_id,
    )
    assert verdict.verdict == "sufficient" and verdict.evidence_refs == [event_id]
    assert [r.reason for r in verdict.rejected_evidence_refs] == ["not_in_batch", "duplicate"]
    stale = memory.assess_retrieval(
        {"verdict": "sufficient", "evidence_refs": [raw[0].id], "next_strategy": "answer"},
        hits.batch_id,
    )
    assert stale.verdict == "partial" and stale.next_strategy != "answer"
    with pytest.raises(UnknownIdError):
        memory.assess_retrieval({"verdict": "partial"}, "batch_missing")

    receipt = memory.record_memory_use(
        event_ids=[event_id], receipt_id="answer-1", audit={"batch_id": hits.batch_id, "turn": 4}
    )
    assert receipt.reinforced_event_ids == [event_id]
    assert memory.get_event(event_id).weight.mention_count == 2
    assert (
        memory.record_memory_use(
            event_ids=[event_id],
            receipt_id="answer-1",
            audit={"batch_id": hits.batch_id, "turn": 4},
        )
        == receipt
    )
    assert memory.get_event(event_id).weight.mention_count == 2  # idempotent per receipt id
    with pytest.raises(StrataGateError):
        memory.record_memory_use(event_ids=[], receipt_id="answer-1")
    with pytest.raises(InvalidInputError):
        memory.record_memory_use(event_ids=[event_id])  # persistent mode needs a receipt id
    other = memory.search_events("demo friday")
    unassessed = memory.record_memory_use(
        event_ids=[other[0].id], receipt_id="answer-2", audit={"batch_id": other.batch_id}
    )
    assert unassessed.reinforced_event_ids == []  # no sufficient assessment of that batch
    assert [r.id for r in memory.list_usage_receipts()] == ["answer-1", "answer-2"]

    weight = memory.event_weight(event_id)
    assert 0 < weight <= 1
    memory.pin_event(event_id)
    assert memory.event_weight(event_id) == 1.0
    memory.pin_event(event_id, pinned=False)
    memory.forget_event(event_id)
    assert memory.event_weight(event_id) == 0.0 and memory.get_event(event_id).status == "forgotten"
    assert event_id not in [h.id for h in memory.search_events("pnpm installs")]
    memory.restore_event(event_id)
    assert memory.get_event(event_id).status == "active"
    assert event_id in [h.id for h in memory.search_events("pnpm installs")]
    memory.archive_event(event_id)
    assert memory.get_event(event_id).status == "archived"

    context = memory.recall_context("demo friday", max_events=1)
    assert len(context.events) == 1 and context.tokens <= context.token_budget
    assert context.blocks and context.batch_id
    assert (
        memory.get_event(context.events[0].id).weight.mention_count == 1
    )  # recall never reinforces


def _card(block: Any, title: str, **temporal: Any) -> dict[str, Any]:
    """An event card citing the first message of ``block``."""
    return {
        "title": title,
        "summary": f"{title}.",
        "source_block_id": block.id,
        "source_message_ids": [block.l5_raw[0].id],
        "temporal": temporal,
    }


def test_recall_labels_superseded_cards_and_shows_the_current_one_first(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2)
    feed(memory, 2)
    block = memory.list_blocks()[0]
    npm = memory.add_event(_card(block, "We'll use npm for packages", event_type="decision"))
    offsite = memory.add_event(
        _card(block, "Team offsite in Hangzhou on March 27", status="planned")
    )
    pnpm = memory.add_event(_card(block, "Switch to pnpm", supersedes_event_ids=[npm.id]))
    off = memory.add_event(
        _card(block, "Trip called off", status="cancelled", supersedes_event_ids=[offsite.id])
    )

    context = memory.recall_context("which package manager for our packages?")
    shown = {entry.id: entry for entry in context.events}
    assert [entry.id for entry in context.events][:2] == [pnpm.id, npm.id]
    assert (shown[npm.id].status, shown[npm.id].superseded_by) == ("superseded", pnpm.id)
    assert (shown[pnpm.id].status, shown[pnpm.id].replaces) == ("active", [npm.id])
    assert f"superseded, replaced by {pnpm.id}" in shown[npm.id].text
    assert context.text.index(pnpm.id) < context.text.index(f"[event {npm.id}]")

    context = memory.recall_context("when is the offsite in Hangzhou?")
    assert [entry.id for entry in context.events][:2] == [off.id, offsite.id]
    assert context.events[1].status == "superseded" and "cancelled" in context.events[0].text
    assert memory.get_event(npm.id).weight.mention_count == 1  # recall never reinforces


def test_recall_keeps_the_best_match_however_much_it_decayed(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2)
    feed(memory, 2)
    block = memory.list_blocks()[0]
    best = memory.add_event(
        _card(block, "Caroline went to a support group", participants=["Caroline"])
    )
    feed(memory, 8, start=2)  # the best match ages; the weaker ones below are fresh
    memory.add_event(_card(block, "Group dinner on Friday"))
    memory.add_event(_card(block, "The reading group meets again"))
    assert memory.event_weight(best.id) < 0.5

    context = memory.recall_context("When did Caroline go to the support group?", max_events=1)
    assert [entry.id for entry in context.events] == [best.id]
    assert context.events[0].weight < 0.5 and context.events[0].status == "active"


def test_wait_false_then_drain(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2, extractor=KeywordExtractor())
    for i in range(6):
        result = memory.append_turn(f"we decided item {i}", "ok", created_at=at(i), wait=False)
        assert result.turn == i + 1 and result.sealed_block is None
    memory.drain(timeout=120)
    assert len(memory.list_blocks()) == 3
    assert len(memory.list_events()) == 4  # blocks 1 and 2 extracted; block 3 waits


def test_drain_reports_a_background_failure(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=1, extractor=Failing("boom in background"))
    memory.append_turn("a", "b", created_at=at(0), wait=False)
    memory.append_turn("c", "d", created_at=at(1), wait=False)
    with pytest.raises(RuntimeError, match="boom in background"):
        memory.drain(timeout=120)
    assert [j.status for j in memory.list_extraction_jobs()] == ["failed"]


def test_audit_history_verify_and_time_travel(open_memory: Any) -> None:
    memory = open_memory(block_turn_size=2)
    feed(memory, 2)
    middle = memory.history()[-1].position
    feed(memory, 2, start=5)
    records = memory.history()
    assert [r.position for r in records] == sorted(r.position for r in records)
    assert {r.type for r in records} >= {
        "SettingsChanged",
        "TurnAppended",
        "SealStarted",
        "BlockSealed",
    }
    assert all(r.namespace == "test" for r in records)
    assert memory.history(since=middle)[0].position > middle
    report = memory.verify()
    assert report.ok and report.first_bad_position is None
    past = memory.state_at(middle)
    assert len(past.list_blocks()) == 1 and len(memory.list_blocks()) == 2
    assert past.turn == 2


def test_two_handles_write_one_namespace_and_see_each_other(tmp_path: Any) -> None:
    database = str(tmp_path / "two.db")
    with (
        StrataGate.open(database, "shared", block_turn_size=2) as first,
        StrataGate.open(database, "shared") as second,
    ):
        first.append_turn("from first about pnpm", "ok", thread_id="a")
        second.append_turn("from second about yarn", "ok", thread_id="b")
        # reads catch up by themselves: each handle finds the other's turn
        hits = first.search_raw_memory("yarn")
        assert hits[0].message.content == "from second about yarn"
        second.append_turn("second again", "ok", thread_id="b")  # seals b's first block
        assert [b.thread_id for b in first.list_blocks()] == ["b"]
        first.append_turn("first again", "ok", thread_id="a")
        assert second.turn == first.turn == 4
        assert sorted(b.thread_id for b in second.list_blocks()) == ["a", "b"]
        assert first.verify().ok and second.verify().ok
        assert first.refresh() == 0  # nothing new since its last read
    with StrataGate.open(database, "shared", read_only=True) as audit:
        assert [r.type for r in audit.history()].count("TurnAppended") == 4
        assert [r.type for r in audit.history()].count("BlockSealed") == 2


def _meddling_clock(armed: list[Any]) -> Any:
    """A clock that first runs what ``armed`` holds: another handle writes while this one is
    deciding (the clock is read between a role's catch-up and its append)."""

    def clock() -> datetime:
        while armed:
            armed.pop()()
        return datetime.now(UTC)

    return clock


def test_a_stale_handle_appends_nothing_and_decides_again_when_asked(tmp_path: Any) -> None:
    database = str(tmp_path / "stale.db")
    armed: list[Any] = []
    with StrataGate.open(database, "ns", block_turn_size=1) as other:
        with StrataGate.open(database, "ns", clock=_meddling_clock(armed)) as stale:
            stale.append_turn("we picked pnpm", "ok", thread_id="a")
            block = stale.list_blocks()[0]
            armed.append(lambda: other.append_turn("meanwhile", "ok", thread_id="b"))
            with pytest.raises(StaleHandleError) as caught:
                stale.expand_block(block.id, "raw")
            error = caught.value
            assert isinstance(error, StorageConflictError)
            assert (error.namespace, error.stream) == ("ns", "ingest")
            assert error.actual_version is not None and error.expected_version is not None
            assert error.actual_version > error.expected_version
            types = [r.type for r in other.history()]
            assert "BlockLifted" not in types and types.count("TurnAppended") == 2
            stale.expand_block(block.id, "raw")  # looked again: lands
        with StrataGate.open(
            database, "ns", clock=_meddling_clock(armed), on_conflict="retry"
        ) as retrying:
            armed.append(lambda: other.append_turn("meanwhile again", "ok", thread_id="b"))
            retrying.expand_block(block.id, "raw")  # lost the race once, decided again
        assert [r.type for r in other.history()].count("BlockLifted") == 2
        assert other.verify().ok


def test_a_model_seal_lands_after_another_handle_appended_meanwhile(tmp_path: Any) -> None:
    """The claim makes the seal this handle's: a turn another handle appends to the same
    stream while the summarizer runs does not throw the summary away."""
    database = str(tmp_path / "claimed.db")
    with StrataGate.open(database, "ns") as other:
        calls: list[int] = []

        def summarizer(messages: list[Any]) -> dict[str, Any]:
            calls.append(len(messages))
            other.append_turn(f"meanwhile {len(calls)}", "ok", thread_id="b")
            return {
                "l0_title": "Seal",
                "l0_tags": ["seal"],
                "l1_summary": "A sealed block.",
                "l2_keypoints": ["sealed"],
                "should_extract": False,
            }

        with StrataGate.open(database, "ns", block_turn_size=1, summarizer=summarizer) as mine:
            result = mine.append_turn("hello", "world", thread_id="a")
            assert result.sealed_block is not None and result.sealed_block.l0_title == "Seal"
            assert calls == [2]
            types = [r.type for r in mine.history()]  # thread b seals without a model
            assert types.count("SealStarted") == types.count("BlockSealed") == 2
            assert "SealFailed" not in types
            assert [b.l0_title for b in mine.list_blocks() if b.thread_id == "a"] == ["Seal"]
            assert mine.verify().ok


def test_namespaces_are_isolated(open_memory: Any, tmp_path: Any) -> None:
    database = str(tmp_path / "iso.db")
    a = open_memory("alpha", database=database, block_turn_size=1)
    b = open_memory("beta", database=database, block_turn_size=1)
    a.append_turn("alpha secret pnpm", "ok")
    b.append_turn("beta other", "ok")
    assert [h.message.content for h in b.search_raw_memory("pnpm")] == []
    assert all(r.namespace == "beta" for r in b.history())
    assert len(a.list_blocks()) == len(b.list_blocks()) == 1


def test_async_api_mirrors_the_sync_one() -> None:
    import asyncio
    import inspect

    public = {
        name
        for name, value in vars(StrataGate).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }
    assert public <= set(dir(AsyncStrataGate))

    async def scenario() -> list[str]:
        async with await AsyncStrataGate.in_memory(block_turn_size=1) as memory:
            await memory.append_turn("we decided async works", "yes")
            hits = await memory.search_raw_memory("async")
            return [h.message.content for h in hits]

    assert asyncio.run(scenario()) == ["we decided async works", "yes"]


def test_async_callbacks_are_awaited() -> None:
    import asyncio

    async def summarizer(messages: list[Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {
            "l0_title": "async title",
            "l1_summary": "s",
            "l2_keypoints": [],
            "should_extract": True,
        }

    async def extractor(ctx: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return await asyncio.to_thread(KeywordExtractor(), ctx)

    with StrataGate.in_memory(
        block_turn_size=1, summarizer=summarizer, extractor=extractor
    ) as memory:
        memory.append_turn("we decided async callbacks work", "yes")
        memory.append_turn("next", "ok")
        assert memory.list_blocks()[0].l0_title == "async title"
        assert [e.summary for e in memory.list_events()] == ["we decided async callbacks work"]

    async def from_async_code() -> str:
        async with await AsyncStrataGate.in_memory(
            block_turn_size=1, summarizer=summarizer
        ) as memory:
            await memory.append_turn("inside a running loop", "fine")
            return (await memory.list_blocks())[0].l0_title

    assert asyncio.run(from_async_code()) == "async title"


def test_another_handles_erasure_is_never_written_back(tmp_path: Any) -> None:
    """b holds a thread's turn in its read models when a erases the thread: b's next seal of
    that thread carries the redaction, not the text it held."""
    database = str(tmp_path / "erase.db")
    with (
        StrataGate.open(database, "ns", block_turn_size=2) as a,
        StrataGate.open(database, "ns") as b,
    ):
        b.append_turn("my locker code is 4417", "noted", thread_id="t")
        assert b.list_open_tail("t")[0].content == "my locker code is 4417"
        a.erase_thread("t", reason="user asked")
        b.append_turn("a later turn", "ok", thread_id="t")  # seals the thread's block
        sealed = b.list_blocks("t")
        assert len(sealed) == 1
        assert all("4417" not in m.content for m in sealed[0].l5_raw)
        assert "4417" not in sealed[0].l4_readable and "4417" not in sealed[0].l3_condensed
        assert [h.message.content for h in a.search_raw_memory("locker")] == []
        assert a.verify().ok and b.verify().ok
