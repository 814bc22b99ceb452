"""Random command sequences through the API: live == full replay == snapshot + tail at every
step, and ``state_at(p)`` equals what the live system held right after position ``p``."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from projections.replay import catch_up, load_snapshot, replay, save_snapshot
from stratagate import StrataGate
from tests.support.fakes import KeywordExtractor, TitleSummarizer, UsesProjector

pytestmark = pytest.mark.slow  # seconds each: real processes or long property searches

WORDS = [
    "we decided",
    "we decided",
    "the app uses",
    "pnpm",
    "npm",
    "postgres",
    "demo",
    "friday",
    "决定",
    "使用",
    "上线",
]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join)


class Clock:
    """A deterministic clock: one minute per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class Ids:
    """Deterministic ids."""

    def __init__(self) -> None:
        self.counter = itertools.count(1)

    def __call__(self, prefix: str) -> str:
        return f"{prefix}_{next(self.counter)}"


class MemoryMachine(RuleBasedStateMachine):
    @initialize()
    def open(self) -> None:
        self.memory = StrataGate.in_memory(
            block_turn_size=1,
            summarizer=TitleSummarizer(),
            extractor=KeywordExtractor(),
            element_projector=UsesProjector(),
            clock=Clock(),
            id_factory=Ids(),
        )
        self.store = self.memory._runtime.store
        self.live = self.memory._runtime.live
        self.seen: dict[int, str] = {self.live.state.position: self.live.state.digest()}
        self.receipts = 0
        self.snapshotted = False

    def teardown(self) -> None:
        self.memory.close()

    def _events(self) -> list[str]:
        return [e.id for e in self.memory.list_events()]

    @rule(user=texts, assistant=texts, thread=st.sampled_from([None, None, "side"]))
    def append_turn(self, user: str, assistant: str, thread: str | None) -> None:
        self.memory.append_turn(user, assistant, thread_id=thread)

    @rule(query=texts, kind=st.sampled_from(["events", "raw", "elements", "context"]))
    def search(self, query: str, kind: str) -> None:
        if kind == "events":
            self.memory.search_events(query)
        elif kind == "raw":
            self.memory.search_raw_memory(query)
        elif kind == "elements":
            self.memory.search_elements(query)
        else:
            self.memory.recall_context(query)

    @precondition(lambda self: self.memory.list_events())
    @rule(
        data=st.data(),
        action=st.sampled_from(["pin", "unpin", "forget", "restore", "archive", "use", "assess"]),
    )
    def govern(self, data: st.DataObject, action: str) -> None:
        event_id = data.draw(st.sampled_from(self._events()))
        if action == "pin":
            self.memory.pin_event(event_id)
        elif action == "unpin":
            self.memory.pin_event(event_id, pinned=False)
        elif action == "forget":
            self.memory.forget_event(event_id)
        elif action == "restore":
            self.memory.restore_event(event_id)
        elif action == "archive":
            self.memory.archive_event(event_id)
        elif action == "use":
            self.receipts += 1
            self.memory.record_memory_use(event_ids=[event_id], receipt_id=f"r{self.receipts}")
        else:
            hits = self.memory.search_events(self.memory.get_event(event_id).title)
            self.memory.assess_retrieval(
                {
                    "verdict": "sufficient",
                    "evidence_refs": [h.id for h in hits][:2],
                    "next_strategy": "answer",
                },
                hits.batch_id,
            )

    @precondition(lambda self: self.memory.list_blocks())
    @rule(data=st.data(), level=st.sampled_from(["next", "previous", "L0", "L3", 5]))
    def expand(self, data: st.DataObject, level: object) -> None:
        block = data.draw(st.sampled_from(self.memory.list_blocks()))
        self.memory.expand_block(
            block.id, level, source=data.draw(st.sampled_from(["user", "agent"]))
        )

    @precondition(lambda self: self.memory.list_blocks())
    @rule(data=st.data(), summary=texts)
    def add_event(self, data: st.DataObject, summary: str) -> None:
        block = data.draw(st.sampled_from(self.memory.list_blocks()))
        self.memory.add_event(
            {"title": "manual", "summary": summary or "x", "source_block_id": block.id}
        )

    @rule(items=st.lists(texts.filter(str.strip), min_size=1, max_size=3), undo=st.booleans())
    def import_memory(self, items: list[str], undo: bool) -> None:
        document = {
            "format": "stratagate.external-memory.v2",
            "source": "other ai",
            "items": [
                {
                    "text": text,
                    "kind": "fact",
                    "time": {"start": f"2025-0{i + 1}"} if i % 2 else None,
                }
                for i, text in enumerate(items)
            ],
        }
        result = self.memory.import_external_memory(document)
        if undo and result.batch_id:
            self.memory.undo_import(result.batch_id)

    @rule()
    def snapshot(self) -> None:
        save_snapshot(self.store, self.live.state, "machine")
        self.snapshotted = True

    @invariant()
    def live_equals_replay_and_snapshot_tail(self) -> None:
        self.live.refresh()
        state = self.live.state
        live = state.digest()
        self.seen[state.position] = live
        assert replay(self.store, state.namespace).digest() == live
        restored = load_snapshot(self.store, state.namespace, "machine")
        assert (restored is not None) == self.snapshotted, (
            "a saved snapshot must restore to its digest"
        )
        if restored is not None:
            catch_up(restored, self.store)
            assert restored.digest() == live

    @invariant()
    def state_at_matches_what_was_live(self) -> None:
        for position in sorted(self.seen)[-3:]:
            assert self.memory.state_at(position).state.digest() == self.seen[position]


MemoryMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
TestMemoryMachine = MemoryMachine.TestCase
