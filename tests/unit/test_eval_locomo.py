"""The scoring rules of ``scripts/eval_locomo.py`` (the LoCoMo retrieval harness)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load_script() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "eval_locomo.py"
    spec = importlib.util.spec_from_file_location("eval_locomo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("eval_locomo", module)
    spec.loader.exec_module(module)
    return module


ev = _load_script()


def test_evidence_entries_are_read_as_known_dia_ids() -> None:
    known = {"D1:3", "D8:6", "D9:17", "D11:26"}
    ids, dropped = ev.evidence_ids(["D1:3", "D8:6; D9:17", "D:11:26", "D1:3"], known)
    assert ids == ["D1:3", "D8:6", "D9:17", "D11:26"]
    assert dropped == 0
    ids, dropped = ev.evidence_ids(["D10:19", "D", "D1:3"], known)
    assert ids == ["D1:3"]
    assert dropped == 2


def test_a_padding_hit_covers_nothing() -> None:
    assert ev.raw_coverage("D4:2") == {"D4:2"}
    assert ev.raw_coverage("D4:2#pad") == set()


def test_ranks_and_recall_at_k() -> None:
    ranked = [{"D1:1"}, set(), {"D2:2", "D3:3"}, {"D1:1"}]
    ranks = ev.first_ranks(["D3:3", "D1:1", "D9:9"], ranked)
    assert ranks == [3, 1, None]
    assert ev.recall_at(ranks, 2) == (pytest.approx(1 / 3), False)
    assert ev.recall_at(ranks, 10) == (pytest.approx(2 / 3), False)
    assert ev.recall_at([1, 4], 5) == (1.0, True)


def test_baseline_ranks_only_matching_messages_shorter_first() -> None:
    baseline = ev.Baseline(
        [
            ("D1:1", "I love pottery classes so much, every single week"),
            ("D1:2", "Nice!"),
            ("D1:3", "Pottery is fun"),
            ("D1:4", "We went camping"),
            ("D1:5", "The kids loved it"),
        ]
    )
    assert baseline.search("Who likes POTTERY?", 10) == ["D1:3", "D1:1"]
    assert baseline.search("Who likes POTTERY?", 1) == ["D1:3"]
    assert baseline.search("zebra", 10) == []
    assert ev.baseline_tokens("Caroline's pride-parade!") == ["caroline", "s", "pride", "parade"]


def test_context_coverage_counts_memories_and_transcript_blocks() -> None:
    from stratagate.results import BlockContextEntry, RecallContext, RecallEntry

    sources = ev.ContextSources(
        events={"e1": {"D1:1"}, "e2": {"D2:2"}},
        facts={"f1": {"D3:3"}},
        blocks={"b1": {"D4:4"}, "b2": {"D5:5"}},
        tail={"D6:6"},
    )

    def memory(kind: str, id_: str) -> RecallEntry:
        return RecallEntry(kind=kind, id=id_, text=id_, tokens=1, relevance=1.0, weight=1.0)

    def block(id_: str, level: int) -> BlockContextEntry:
        return BlockContextEntry(
            id=id_, thread_id=None, turn_range=(1, 2), level=level, label="", content=""
        )

    context = RecallContext(
        query="q",
        batch_id=None,
        events=[memory("event", "e1")],
        elements=[memory("fact", "f1")],
        messages=[memory("message", "D7:7")],
        blocks=[block("b1", 2), block("b2", 3), block("tail:", 5)],
        tokens=2,
        token_budget=900,
        text="",
    )
    covered = sources.coverage(context)
    assert covered["context"] == {"D1:1", "D3:3", "D7:7"}
    assert covered["context_blocks"] == {"D1:1", "D3:3", "D7:7", "D5:5", "D6:6"}  # b1 below L3

    figures = ev.question_figures(
        {"raw": [1, None], "events": [4, 5], "baseline": [None, None]},
        {"context": [True, False], "context_blocks": [True, True]},
    )
    assert (figures["context_r"], figures["context_all"], figures["context_hit"]) == (0.5, 0, 1)
    assert (figures["context_blocks_r"], figures["context_blocks_all"]) == (1.0, 1.0)
    assert (figures["events_r@4"], figures["events_all@4"]) == (0.5, 0.0)
    assert "context_r" not in ev.question_figures({"raw": [1], "events": [1], "baseline": [1]})


def test_weight_floor_option_sets_the_recall_blend(tmp_path: Path) -> None:
    import stratagate.read.recall as recall

    with pytest.raises(SystemExit):
        ev.main(["--data", str(tmp_path), "--weight-floor", "2"])
    default = recall.WEIGHT_FLOOR
    try:
        assert ev.main(["--data", str(tmp_path), "--context", "--weight-floor", "0.5"]) == 2
        assert recall.WEIGHT_FLOOR == 0.5
    finally:
        recall.WEIGHT_FLOOR = default
