"""The pure deciders of taking things in (``core/ingest.py``): turns and import items, decided
from what the log holds, with no store and no role."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.core.ingest import (
    DecidedItem,
    TurnRequest,
    decide_import,
    decide_turns,
)
from stratagate.errors import InvalidInputError, ReceiptConflictError, UnknownIdError
from stratagate.models import EventCardInput, EventTemporal


def request(n: int, *, thread: str | None = None, receipt: str | None = None) -> TurnRequest:
    return TurnRequest(
        receipt_id=receipt,
        command_id=f"c{n}",
        thread_id=thread,
        message_ids=(f"u{n}", f"a{n}"),
        digest=f"d{n}",
    )


@dataclass
class Seen:
    """What a log holds of turns (``core.ingest.TurnsSoFar``), as plain values."""

    receipts: dict[str, str] = field(default_factory=dict)
    commands: dict[str, int] = field(default_factory=dict)
    messages: set[str] = field(default_factory=set)
    turn: int = 0
    threads: dict[str | None, int] = field(default_factory=dict)

    def thread_turns(self, thread_id: str | None) -> int:
        return self.threads.get(thread_id, 0)


def empty(turn: int = 0, threads: dict[str | None, int] | None = None) -> Seen:
    return Seen(turn=turn, threads=threads or {})


@given(st.lists(st.sampled_from([None, "a", "b"]), max_size=12), st.integers(0, 50))
def test_new_turns_number_on_from_the_log_and_per_thread(
    threads: list[str | None], turn: int
) -> None:
    verdicts = decide_turns(
        [request(i, thread=t) for i, t in enumerate(threads)], empty(turn, {"a": 3})
    )
    assert [v.turn for v in verdicts] == list(range(turn + 1, turn + 1 + len(threads)))
    for thread in set(threads):
        numbers = [v.thread_turn for v, t in zip(verdicts, threads, strict=True) if t == thread]
        start = 3 if thread == "a" else 0
        assert numbers == list(range(start + 1, start + 1 + len(numbers)))


def test_a_receipt_repeated_in_the_batch_or_the_log_is_a_duplicate_unless_it_differs() -> None:
    seen = Seen({"r0": "d0"}, {"c9": 7}, set(), 7, {None: 7})
    same = TurnRequest("r0", "cx", None, ("x",), "d0")
    verdicts = decide_turns([same, request(1, receipt="r1"), request(9)], seen)
    assert [(v.duplicate, v.new, v.turn) for v in verdicts] == [
        (True, False, None),
        (False, True, 8),
        (False, False, 7),
    ]
    with pytest.raises(ReceiptConflictError, match=r"turns\[1\]: receipt id 'r1'"):
        decide_turns(
            [request(1, receipt="r1"), TurnRequest("r1", "c2", None, ("y",), "other")], empty()
        )


def test_a_message_id_used_before_or_twice_refuses_the_batch() -> None:
    with pytest.raises(InvalidInputError, match="u1"):
        decide_turns([request(1)], Seen(messages={"u1"}))
    with pytest.raises(InvalidInputError, match="repeated"):
        decide_turns([TurnRequest(None, "c", None, ("m", "m"), "d")], empty())


def item(n: int, action: str, target: str | None = None) -> DecidedItem:
    card = EventCardInput(
        title=f"t{n}",
        summary="s",
        source_block_id="blk",
        source_message_ids=[f"m{n}"],
        temporal=EventTemporal(mentioned_at="2024-01-01"),
    )
    return DecidedItem(f"h{n}", f"m{n}", card, action, target)  # type: ignore[arg-type]


def test_an_import_skips_what_came_in_meanwhile_and_notes_conflicts_on_the_card() -> None:
    items = [item(0, "add"), item(1, "conflict", "evt"), item(2, "merge", "evt"), item(3, "ignore")]
    decision = decide_import(items, imported={"h0"}, events={"evt"}, skipped_before=2)
    assert decision.skipped_duplicates == 3
    assert [step.item.message_id for step in decision.steps] == ["m1", "m2", "m3"]
    conflict, merge, ignore = decision.steps
    assert conflict.card is not None and conflict.card.temporal is not None
    assert conflict.card.temporal.conflicts_with_event_ids == ["evt"]
    assert merge.card is None and ignore.card is None


def test_an_import_naming_a_missing_event_appends_nothing() -> None:
    with pytest.raises(UnknownIdError, match="'gone'"):
        decide_import([item(0, "supersede", "gone")], imported=set(), events={"evt"})
