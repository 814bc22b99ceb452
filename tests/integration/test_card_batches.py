"""Cards added together get one projection job, whoever queues it and however it is folded.

``add_events`` and an external import append their cards in one commit; the jobs model groups
them (``JobsModel``), so the projector queues one job for the batch, in the live process and
after a replay alike. Folding stays linear in the events: the work of a fold is counted here
(lines run in ``projections/jobs.py``), not timed.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import projections.jobs
from projections.jobs import JobsModel
from stratagate import StrataGate
from stratagate.events import ELEMENTS, EXTRACTION, EventAdded, ProjectionQueued, Recorded
from stratagate.events.payloads import CardData, convert
from stratagate.messages import AddEvents
from stratagate.models import EventCardInput

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def cards(block_id: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"title": f"note {i}", "summary": f"decision {i}", "source_block_id": block_id}
        for i in range(start, start + count)
    ]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[StrataGate]:
    with StrataGate.open(str(tmp_path / "memory.db"), "test", block_turn_size=2) as opened:
        opened.append_turn("we compare options", "noted")
        opened.append_turn("and record each decision", "ok")
        yield opened


def block(memory: StrataGate) -> str:
    return memory.list_blocks()[0].id


def test_add_events_queues_one_job_for_the_batch(memory: StrataGate) -> None:
    batch = memory.add_events(cards(block(memory), 40))
    one = memory.add_event(cards(block(memory), 1, start=40)[0])
    jobs = memory.list_element_projection_jobs()
    assert [job.source_event_ids for job in jobs] == [[c.id for c in batch], [one.id]]
    assert all(job.status == "pending" for job in jobs)
    assert memory.verify().ok  # the folded log gives the live state back


def test_the_cards_and_their_job_are_one_commit(memory: StrataGate, tmp_path: Path) -> None:
    """The extractor's answer to ``AddEvents`` alone (no flow after it) already holds the
    batch's job: a handle gone right after the append leaves no card unqueued."""
    inputs = [EventCardInput.model_validate(c) for c in cards(block(memory), 7)]
    added = memory._runtime.deliver(AddEvents(events=inputs))
    [job] = memory.list_element_projection_jobs()
    assert job.source_event_ids == [c.id for c in added] and job.status == "pending"
    with StrataGate.open(str(tmp_path / "memory.db"), "test") as again:
        assert again.list_element_projection_jobs() == [job]
        assert again.verify().ok


def test_a_batch_of_an_older_log_gets_one_job_after_a_reopen(
    memory: StrataGate, tmp_path: Path
) -> None:
    """Cards an older version appended without their job: the next handle queues one job."""
    template = convert(CardData, memory.add_event(cards(block(memory), 1)[0]))
    old = [template.model_copy(update={"id": f"evt_old_{i}"}) for i in range(7)]
    memory._runtime.live.append(  # type: ignore[attr-defined]
        EXTRACTION,
        [EventAdded(event=card, origin="manual", at=T0) for card in old],
        command_id="older-add-events",
    )
    with StrataGate.open(str(tmp_path / "memory.db"), "test") as again:
        again.add_event(cards(block(again), 1, start=7)[0])
        jobs = again.list_element_projection_jobs()
        assert sorted(len(job.source_event_ids) for job in jobs) == [1, 1, 7]
        assert [c.id for c in old] in [job.source_event_ids for job in jobs]
        assert again.verify().ok


def test_the_look_for_unqueued_cards_is_skipped_only_when_none_is_left(
    memory: StrataGate,
) -> None:
    """After an ``add_event`` the flow's look for cards without a job finds none and is not
    delivered (the inline runtime skips it); cards this same handle appended without a job
    are still queued by the next call's look."""
    runtime = memory._runtime
    first = memory.add_event(cards(block(memory), 1)[0])
    skipped = runtime.skipped_stages  # type: ignore[attr-defined]
    memory.add_event(cards(block(memory), 1, start=1)[0])
    assert runtime.skipped_stages == skipped + 1  # type: ignore[attr-defined]
    template = convert(CardData, first)
    old = [template.model_copy(update={"id": f"evt_unqueued_{i}"}) for i in range(3)]
    runtime.live.append(  # type: ignore[attr-defined]
        EXTRACTION,
        [EventAdded(event=card, origin="manual", at=T0) for card in old],
        command_id="cards-without-a-job",
    )
    memory.add_event(cards(block(memory), 1, start=2)[0])
    jobs = memory.list_element_projection_jobs()
    assert [c.id for c in old] in [job.source_event_ids for job in jobs]
    assert memory.verify().ok


def test_the_rows_of_cards_and_jobs_hold_no_list_the_collector_watches(
    memory: StrataGate,
) -> None:
    """A card's merged sources and a job's event and element ids are tuples of texts: a
    collection leaves them untracked, so a namespace of many cards and jobs (one per
    ``add_event``) gives each full collection of the process less to walk."""
    memory.add_event(cards(block(memory), 1)[0])
    gc.collect()
    state = memory._runtime.live.state  # type: ignore[attr-defined]
    [record] = state.events.records.values()
    [job] = state.jobs.projection.values()
    held = [record.merged_sources, job.source_event_ids, job.element_ids]
    assert [gc.is_tracked(value) for value in held] == [False, False, False]


def test_an_import_is_one_job(memory: StrataGate) -> None:
    items = [{"text": f"fact number {i} about the project"} for i in range(6)]
    document = {"format": "stratagate.external-memory.v2", "source": "export", "items": items}
    result = memory.import_external_memory(document)
    assert len(result.added) == 6
    [job] = memory.list_element_projection_jobs()
    assert job.source_event_ids == result.added
    assert memory.verify().ok


# -- fold work ------------------------------------------------------------------------------


def count_lines(module_file: str, run: Callable[[], None]) -> int:
    """Lines run inside ``module_file`` (comprehensions included) while ``run`` runs."""
    lines = 0

    def local(frame: FrameType, event: str, _: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return local

    def tracer(frame: FrameType, event: str, _: Any) -> Any:
        return local if frame.f_code.co_filename == module_file else None

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return lines


def one_job_per_card_log(template: CardData, count: int, *, one_batch: bool) -> list[Recorded]:
    """``count`` cards, then one job per card: the log ``add_events`` used to write (the cards
    of one append: ``one_batch``), or many ``add_event`` calls left unqueued (each card its own
    group). Folding it used to rescan every group per job."""
    added = [
        EventAdded(
            event=template.model_copy(update={"id": f"evt_{i}"}),
            at=T0 if one_batch else T0 + timedelta(seconds=i),
        )
        for i in range(count)
    ]
    queued = [
        ProjectionQueued(job_id=f"proj_{i}", source_event_ids=[f"evt_{i}"], at=T0)
        for i in range(count)
    ]
    return [
        Recorded(position, "test", EXTRACTION if position <= count else ELEMENTS, position, event)
        for position, event in enumerate([*added, *queued], start=1)
    ]


@pytest.mark.parametrize("one_batch", [True, False], ids=["one batch", "many groups"])
def test_folding_jobs_is_linear_in_the_events(memory: StrataGate, one_batch: bool) -> None:
    template = convert(CardData, memory.add_event(cards(block(memory), 1)[0]))

    def fold_work(count: int) -> int:
        log = one_job_per_card_log(template, count, one_batch=one_batch)
        model = JobsModel()

        def fold() -> None:
            for recorded in log:
                model.apply(recorded)

        work = count_lines(projections.jobs.__file__, fold)
        assert model.unqueued == {} and len(model.projection) == count
        return work

    small, large = fold_work(100), fold_work(400)
    assert large <= 4.5 * small  # linear: 4x; the rescan made it about 16x


def test_a_snapshot_taken_inside_a_batch_folds_on_like_the_log(memory: StrataGate) -> None:
    """The group the batch's next card joins is part of the snapshot: restored mid-batch,
    the model ends where folding the whole log ends."""
    template = convert(CardData, memory.add_event(cards(block(memory), 1)[0]))
    log = [
        Recorded(
            position,
            "test",
            EXTRACTION,
            position,
            EventAdded(event=template.model_copy(update={"id": f"evt_{position}"}), at=T0),
        )
        for position in range(1, 7)
    ]
    whole, head = JobsModel(), JobsModel()
    for recorded in log:
        whole.apply(recorded)
    for recorded in log[:3]:
        head.apply(recorded)
    resumed = JobsModel.restore(head.snapshot())
    for recorded in log[3:]:
        resumed.apply(recorded)
    assert [list(ids) for ids in whole.unqueued.values()] == [[f"evt_{p}" for p in range(1, 7)]]
    assert resumed.digest() == whole.digest()


def test_cards_sharing_a_weight_change_one_at_a_time(memory: StrataGate) -> None:
    """Cards of one turn hold their initial weight as one (frozen) instance: changing one
    card's weight replaces it for that card only."""
    first, second, third = memory.add_events(cards(block(memory), 3))
    memory.pin_event(first.id)
    memory.record_memory_use(event_ids=[second.id], receipt_id="r1")
    weights = {card.id: memory.get_event(card.id).weight for card in (first, second, third)}
    assert weights[first.id].pinned and not weights[second.id].pinned
    assert weights[second.id].mention_count == 2 and weights[first.id].mention_count == 1
    assert weights[third.id] == third.weight
    assert memory.verify().ok
