"""Agent-facing memory: logged batches and the gate, expansion, adoption receipts, recall
context, and external-memory import with undo."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stratagate import InvalidInputError, StrataGate, StrataGateError, UnknownIdError
from stratagate.formats.external_memory import item_data
from tests.support.fakes import KeywordExtractor, UsesProjector

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FORMAT = "stratagate.external-memory.v2"


@pytest.fixture
def memory() -> Any:
    memory = StrataGate.in_memory(
        block_turn_size=2, extractor=KeywordExtractor(), element_projector=UsesProjector()
    )
    talk = [
        ("we decided the app uses pnpm because npm installs took four minutes", "noted"),
        ("we decided the demo is on friday", "ok"),
        ("random chatter about lunch", "sure"),
        ("more chatter", "yes"),
        ("we decided the site uses postgres", "good"),
        ("tail", "end"),
    ]
    for i, (user, assistant) in enumerate(talk):
        memory.append_turn(user, assistant, created_at=T0 + timedelta(hours=i))
    yield memory
    memory.close()


def batch_refs(memory: Any, batch_id: str) -> list[str]:
    (record,) = [
        r
        for r in memory.history()
        if r.type == "RetrievalBatchRecorded" and r.data["batch_id"] == batch_id
    ]
    return record.data["refs"]


def test_every_search_logs_a_batch_of_its_hit_refs(memory: Any) -> None:
    events = memory.search_events("pnpm")
    assert batch_refs(memory, events.batch_id) == [hit.id for hit in events]
    facts = memory.search_elements("pnpm")
    assert facts and batch_refs(memory, facts.batch_id) == [
        r for h in facts for r in (h.id, h.element_id)
    ]
    raw = memory.search_raw_memory("lunch")
    assert batch_refs(memory, raw.batch_id)[:2] == [raw[0].id, raw[0].block_id]
    empty = memory.search_events("zebra")
    assert empty == [] and batch_refs(memory, empty.batch_id) == []


def test_the_gate_validates_against_the_named_batch(memory: Any) -> None:
    first = memory.search_events("pnpm")
    second = memory.search_events("demo friday")
    stale = memory.assess_retrieval(
        {"verdict": "sufficient", "evidence_refs": [first[0].id], "next_strategy": "answer"},
        second.batch_id,
    )
    assert stale.verdict == "partial" and stale.next_strategy != "answer"
    assert [(r.ref, r.reason) for r in stale.rejected_evidence_refs] == [
        (first[0].id, "not_in_batch")
    ]
    ok = memory.assess_retrieval(
        {
            "verdict": "Sufficient",
            "evidenceRefs": [second[0].id],
            "fit": "x" * 500,
            "nextStrategy": "answer",
        },
        second.batch_id,
    )
    assert ok.verdict == "sufficient" and len(ok.fit) <= 160 and ok.batch_id == second.batch_id
    by_refs = memory.assess_retrieval(
        {"verdict": "sufficient", "evidence_refs": ["a"], "next_strategy": "answer"}, ["a", "b"]
    )
    assert by_refs.verdict == "sufficient" and by_refs.batch_id is None
    logged = [r for r in memory.history() if r.type == "AssessmentRecorded"]
    assert [r.data["batch_id"] for r in logged] == [second.batch_id, second.batch_id, None]
    with pytest.raises(UnknownIdError):
        memory.assess_retrieval({"verdict": "partial"}, "batch_nope")
    with pytest.raises(InvalidInputError):
        memory.assess_retrieval(["not", "a", "mapping"], second.batch_id)  # type: ignore[arg-type]


def test_expansion_steps(memory: Any) -> None:
    hit = memory.search_events("pnpm")[0]
    expanded = memory.expand_event(hit.id)
    assert [m.content for m in expanded.source_messages] == [hit.event.summary]
    assert expanded.source_block.id == hit.event.source_block_id
    element = memory.search_elements("app")[0]
    card = memory.expand_element(element.element_id)
    assert card.current_state["uses"] == "pnpm"
    with pytest.raises(InvalidInputError):
        memory.expand_element(element.element_id, at="yesterday-ish")
    entry = memory.expand_block(expanded.source_block.id, 2)
    assert (entry.id, entry.level, entry.label) == (expanded.source_block.id, 2, "L2 key points")
    assert memory.get_block(entry.id).pointer_current_level == 2


def test_adoption_reinforces_only_sufficiently_assessed_refs(memory: Any) -> None:
    hits = memory.search_events("we decided")
    assert len(hits) >= 2
    chosen, other = hits[0].id, hits[1].id
    memory.assess_retrieval(
        {"verdict": "sufficient", "evidence_refs": [chosen], "next_strategy": "answer"},
        hits.batch_id,
    )
    receipt = memory.record_memory_use(
        event_ids=[chosen, other],
        receipt_id="a1",
        audit={"batch_id": hits.batch_id, "session_id": "s", "turn": 6},
    )
    assert receipt.reinforced_event_ids == [chosen]
    assert memory.get_event(chosen).weight.mention_count == 2
    assert memory.get_event(other).weight.mention_count == 1
    assert memory.get_event(chosen).weight.last_adopted_turn == memory.turn

    # a raw message accepted by a sufficient assessment vouches for the events citing it
    raw = memory.search_raw_memory("demo friday")
    message = raw[0].id
    memory.assess_retrieval(
        {"verdict": "sufficient", "evidence_refs": [message], "next_strategy": "answer"},
        raw.batch_id,
    )
    demo = next(e for e in memory.list_events() if "demo" in e.summary)
    vouched = memory.record_memory_use(
        event_ids=[demo.id], receipt_id="a2", audit={"batch_id": raw.batch_id}
    )
    assert vouched.reinforced_event_ids == [demo.id]

    # without an audited batch every requested (retrievable) id is reinforced
    plain = memory.record_memory_use(event_ids=[other], receipt_id="a3")
    assert plain.reinforced_event_ids == [other]
    assert memory.record_memory_use(event_ids=[other], receipt_id="a3") == plain
    assert memory.get_event(other).weight.mention_count == 2
    with pytest.raises(StrataGateError, match="already used"):
        memory.record_memory_use(event_ids=[chosen], receipt_id="a3")
    with pytest.raises(UnknownIdError):
        memory.record_memory_use(event_ids=["evt_missing"], receipt_id="a4")
    with pytest.raises(UnknownIdError):
        memory.record_memory_use(
            event_ids=[other], receipt_id="a5", audit={"batch_id": "batch_missing"}
        )
    memory.forget_event(other)
    forgotten = memory.record_memory_use(event_ids=[other], receipt_id="a6")
    assert forgotten.reinforced_event_ids == []
    # in-memory mode may omit the receipt id
    assert memory.record_memory_use(event_ids=[chosen]).id


def test_receipts_are_required_in_persistent_mode(tmp_path: Any) -> None:
    with (
        StrataGate.open(tmp_path / "m.db", "ns") as durable,
        pytest.raises(InvalidInputError, match="receipt_id"),
    ):
        durable.record_memory_use(event_ids=[])


def test_recall_context_packs_within_budget_and_never_reinforces(memory: Any) -> None:
    before = {e.id: e.weight for e in memory.list_events()}
    context = memory.recall_context("we decided pnpm demo postgres", max_events=2, max_elements=1)
    assert 1 <= len(context.events) <= 2 and len(context.elements) <= 1
    assert context.tokens <= context.token_budget == 900
    assert context.blocks and all(b.level in range(6) for b in context.blocks)
    assert "Relevant events:" in context.text and context.batch_id
    tiny = memory.recall_context("we decided pnpm demo postgres", token_budget=5)
    assert tiny.events == [] and tiny.tokens == 0
    after = {e.id: e.weight for e in memory.list_events()}
    assert {k: (v.mention_count, v.last_adopted_turn) for k, v in before.items()} == {
        k: (v.mention_count, v.last_adopted_turn) for k, v in after.items()
    }
    with pytest.raises(InvalidInputError):
        memory.recall_context("x", max_events=-1)


def doc(*items: dict[str, Any]) -> dict[str, Any]:
    return {"format": FORMAT, "source": "assistant export", "items": list(items)}


def test_import_actions_duplicates_and_undo(memory: Any) -> None:
    pnpm = memory.search_events("pnpm")[0].event
    calls: list[str] = []

    def decide(candidate: Any, matches: list[Any]) -> dict[str, Any]:
        calls.append(candidate.summary)
        text = candidate.summary
        target = matches[0].id if matches else None
        if text.startswith("merge"):
            return {"action": "merge", "target_event_id": target}
        if text.startswith("supersede"):
            return {"action": "supersede", "target_event_id": target}
        if text.startswith("conflict"):
            return {"action": "conflict", "target_event_id": target}
        if text.startswith("ignore"):
            return {"action": "ignore"}
        return {"action": "add"}

    document = doc(
        {"text": "Likes green tea.", "kind": "preference", "time": {"original_text": "for years"}},
        {"text": "merge: the app uses pnpm since installs were slow"},
        {
            "text": "supersede: the site uses mysql now instead of postgres",
            "time": {"start": "2026-04"},
        },
        {"text": "conflict: the demo is on monday not friday"},
        {"text": "ignore: small talk"},
        {"text": "Likes green tea.", "kind": "preference", "time": {"original_text": "for years"}},
    )
    revision = memory.revision
    result = memory.import_external_memory(document, decide=decide, top_k=3)
    assert memory.revision > revision
    assert len(calls) == 5 and result.skipped_duplicates == 1
    assert len(result.added) == 3 and len(result.conflicts) == 1 and result.merged == [pnpm.id]
    assert len(result.superseded) == 1 and len(result.ignored) == 1
    tea = memory.get_event(result.added[0])
    assert tea.source_block_id == result.source_block_id
    assert tea.temporal.happened_start is None and tea.temporal.original_text == "for years"
    assert memory.get_block(result.source_block_id).l5_raw[0].content == "Likes green tea."
    old_site = memory.get_event(result.superseded[0])
    assert old_site.status == "superseded"
    assert memory.get_event(result.conflicts[0]).temporal.conflicts_with_event_ids

    # exact duplicates of imported items are skipped without calling decide
    calls.clear()
    again = memory.import_external_memory(document, decide=decide)
    assert calls == [] and again.batch_id is None and again.skipped_duplicates == 6

    # undo: the batch's events leave retrieval, supersessions revert; nothing is deleted
    assert memory.undo_import(result.batch_id) is True
    assert memory.undo_import(result.batch_id) is False
    assert memory.get_event(result.added[0]).status == "archived"
    assert memory.get_event(result.superseded[0]).status == "active"
    assert result.added[0] not in [h.id for h in memory.search_events("green tea")]
    with pytest.raises(UnknownIdError):
        memory.undo_import("import_missing")
    assert memory.verify().ok


def test_items_carry_data_and_supersede_named_events(memory: Any) -> None:
    pnpm = memory.search_events("pnpm")[0].event
    first = memory.import_external_memory(
        doc({"text": "Theme: dark.", "data": {"theme": "dark", "size": [1, 2]}})
    )
    [card_id] = first.added
    [message] = memory.expand_event(card_id).source_messages
    assert item_data(message) == {"theme": "dark", "size": [1, 2]}
    second = memory.import_external_memory(
        doc(
            {"text": "Theme: light.", "data": {"theme": "light"}, "supersedes": [card_id]},
            {"text": "The app uses yarn now.", "supersedes": [pnpm.id]},
        )
    )
    assert sorted(second.superseded) == sorted([card_id, pnpm.id])
    assert memory.get_event(card_id).status == "superseded"
    assert memory.get_event(pnpm.id).superseded_by == second.added[1]
    # the same text and data again is new when it supersedes another event (a new revision)
    again = memory.import_external_memory(
        doc(
            {
                "text": "Theme: dark.",
                "data": {"theme": "dark", "size": [1, 2]},
                "supersedes": [second.added[0]],
            }
        )
    )
    assert len(again.added) == 1 and again.skipped_duplicates == 0
    revision = memory.revision
    for wrong, error in (
        ([card_id], InvalidInputError),  # superseded already: not active
        (["evt_missing"], UnknownIdError),
    ):
        with pytest.raises(error):
            memory.import_external_memory(doc({"text": "x", "supersedes": wrong}))
    twice = [again.added[0]]
    with pytest.raises(InvalidInputError, match="another item"):
        memory.import_external_memory(
            doc({"text": "a", "supersedes": twice}, {"text": "b", "supersedes": twice})
        )
    assert memory.revision == revision
    assert memory.undo_import(second.batch_id)
    assert memory.get_event(pnpm.id).status == "active"
    assert memory.verify().ok


def test_failed_imports_append_nothing(memory: Any) -> None:
    revision = memory.revision
    for bad in ('{"format": "x"}', doc(), "not json"):
        with pytest.raises(InvalidInputError):
            memory.import_external_memory(bad)
    with pytest.raises(InvalidInputError, match="top_k"):
        memory.import_external_memory(doc({"text": "a"}), top_k=0)

    def broken(candidate: Any, matches: list[Any]) -> Any:
        raise RuntimeError("decider crashed")

    with pytest.raises(RuntimeError, match="decider crashed"):
        memory.import_external_memory(doc({"text": "a"}, {"text": "b"}), decide=broken)
    with pytest.raises(InvalidInputError):
        memory.import_external_memory(
            doc({"text": "a"}), decide=lambda c, m: {"action": "merge", "target_event_id": "evt_x"}
        )
    assert memory.revision == revision
