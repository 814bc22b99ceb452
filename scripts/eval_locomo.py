"""Retrieval quality on LoCoMo: evidence recall of raw search, event search and a BM25 baseline.

Each conversation is ingested through the public API (``StrataGate.in_memory``, blocks of
``--block-turns`` turns, the offline summarizer, extractor and element projector; message ids
are the LoCoMo dia ids). Then every question is asked three ways, top 10 each:

- raw: ``search_raw_memory(question, limit=10)``; a hit covers its own message id. A hit on a
  padding message (``<dia id>#pad``, the empty side ``conversation_turns`` adds to an unpaired
  message) covers nothing: the evidence is its partner, which is a separate hit.
- events: ``search_events(question, limit=10)``; a hit covers its ``source_message_ids``.
- baseline: ``rank_bm25.BM25Okapi`` (library defaults) with one document per real message, its
  text lower-cased and split into ``\\w+`` runs; no field weights, no speaker, no neighbours.
  Zero-score documents are not hits.

Evidence recall@k of a question = share of its evidence ids covered by the top k hits; "all@k"
= 1 when every one is covered.

With ``--context`` each question is also put to ``recall_context(question)`` at its defaults
(4 events, 4 facts, 900 tokens, the unthreaded conversation), which is what an agent sees
before it answers. An evidence id is in the context when a message shown is it, an event
shown cites it, or a fact shown cites an event that cites it ("context": the share of the
question's evidence; "ctx hit": 1 when any is in it, "ctx all" when all are); "+blocks" also
counts the messages of the
conversation blocks the context shows as a transcript (L3 condensed to L5 raw, and the open
tail), which depend on recency, not on the question. These are reported beside raw@10 and
events@4 (the first four event hits: relevance alone, no weight, no budget). ``--weight-floor``
sets ``stratagate.read.recall.WEIGHT_FLOOR`` in this process (the harness runs the inline
runtime) to sweep the recall blend; ``--recall-messages`` sets ``RECALL_MESSAGES`` (the raw
hits shown as turns) the same way. Averages are over questions. Evidence entries are read as
``D<session>:<turn>`` ids (``"D8:6; D9:17"`` is two ids, ``"D:11:26"`` is ``D11:26``); ids that
name no message are dropped and questions left with none are skipped (both counted). Category 5
(adversarial: the question presupposes something the conversation does not say) is reported
but excluded from the headline and per-conversation figures. Ranking rules of rounds 1-2 were
tuned on conv-26 and conv-30 only; those of round 3 (issue 25) on conv-26, -30, -41 and -42
("tuning"): conv-43 is held out ("held-out", and its per-conversation row).

``--compare-with TREE`` runs this same script (same arguments) against another source tree
(say ``git worktree add /tmp/main main``) in a subprocess, its modules first on the path, and
prints a before/after table of the headline figures: before and after in one run.

Usage: PYTHONPATH=. python scripts/eval_locomo.py [--data DIR] [--out PATH] [--samples ID ...]
                                                [--context [--weight-floor F] [--recall-messages N]]
                                                [--compare-with TREE]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from rank_bm25 import BM25Okapi

import stratagate.read.recall
from stratagate import RecallContext, StrataGate
from stratagate.formats.locomo import (
    PAD_SUFFIX,
    LocomoConversation,
    conversation_turns,
    default_data_dir,
    load_conversation,
    message_content,
)

SYSTEMS = ("raw", "events", "baseline")
CONTEXT_EVENTS = 4
"""``recall_context``'s default ``max_events``: events@4 is what relevance alone would show."""
KS = (5, 10)
LIMIT = max(KS)
HEADLINE_CATEGORIES = (1, 2, 3, 4)
TUNING_SAMPLES = ("conv-26", "conv-30", "conv-41", "conv-42")
"""The conversations ranking changes were tuned on (rounds 1-2 used conv-26 and conv-30
only); conv-43 is held out."""
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
CONTEXT_SYSTEMS = ("context", "context_blocks")
TRANSCRIPT_LEVEL = 3
"""Blocks shown at this level or above (L3 condensed, L4 readable, L5 raw) show their messages."""
_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_BASELINE_WORD = re.compile(r"\w+")


def evidence_ids(entries: Iterable[str], known: set[str]) -> tuple[list[str], int]:
    """The distinct known dia ids named by ``entries`` (in order) and how many named none."""
    found: list[str] = []
    dropped = 0
    for entry in entries:
        ids = [f"D{session}:{turn}" for session, turn in _EVIDENCE_ID.findall(entry)]
        valid = [i for i in ids if i in known]
        dropped += len(ids) - len(valid) + (not ids)
        found.extend(i for i in valid if i not in found)
    return found, dropped


def raw_coverage(message_id: str) -> set[str]:
    """What a raw hit covers: its message id, or nothing for a padding message."""
    return set() if message_id.endswith(PAD_SUFFIX) else {message_id}


def first_ranks(evidence: Sequence[str], ranked: Sequence[set[str]]) -> list[int | None]:
    """For each evidence id, the 1-based rank of the first hit covering it (None: not found)."""
    ranks: list[int | None] = []
    for dia_id in evidence:
        rank = next((i for i, covered in enumerate(ranked, start=1) if dia_id in covered), None)
        ranks.append(rank)
    return ranks


def recall_at(ranks: Sequence[int | None], k: int) -> tuple[float, bool]:
    """Share of evidence found within the top ``k``, and whether all of it was."""
    found = sum(1 for rank in ranks if rank is not None and rank <= k)
    return found / len(ranks), found == len(ranks)


def baseline_tokens(text: str) -> list[str]:
    """The baseline's tokenisation: lower-case ``\\w+`` runs."""
    return _BASELINE_WORD.findall(text.lower())


class Baseline:
    """Plain BM25Okapi over one document per message."""

    def __init__(self, messages: Sequence[tuple[str, str]]) -> None:
        self.ids = [message_id for message_id, _ in messages]
        self.bm25 = BM25Okapi([baseline_tokens(text) for _, text in messages])

    def search(self, query: str, limit: int) -> list[str]:
        scores = self.bm25.get_scores(baseline_tokens(query))
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], i))
        return [self.ids[i] for i in order[:limit] if scores[i] > 0]


@dataclass
class Tally:
    """Sums of per-question recall figures for each system."""

    questions: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, figures: dict[str, float]) -> None:
        self.questions += 1
        for key, value in figures.items():
            self.sums[key] = self.sums.get(key, 0.0) + value

    def means(self) -> dict[str, float]:
        n = self.questions or 1
        return {key: round(value / n, 4) for key, value in sorted(self.sums.items())}

    def summary(self) -> dict[str, object]:
        return {"questions": self.questions, **self.means()}


def question_figures(
    ranks: dict[str, list[int | None]], context: dict[str, list[bool]] | None = None
) -> dict[str, float]:
    """``<system>_r@k`` and ``<system>_all@k`` of one question; with ``context`` (for each
    context system, whether each evidence id is in the context) also ``<system>_r`` and
    ``<system>_all``, and ``events_r@4`` / ``events_all@4`` to compare with."""
    figures: dict[str, float] = {}
    for system, system_ranks in ranks.items():
        for k in KS:
            share, complete = recall_at(system_ranks, k)
            figures[f"{system}_r@{k}"] = share
            figures[f"{system}_all@{k}"] = float(complete)
    if context is not None:
        share, complete = recall_at(ranks["events"], CONTEXT_EVENTS)
        figures[f"events_r@{CONTEXT_EVENTS}"] = share
        figures[f"events_all@{CONTEXT_EVENTS}"] = float(complete)
        for system, found in context.items():
            figures[f"{system}_r"] = sum(found) / len(found)
            figures[f"{system}_all"] = float(all(found))
            figures[f"{system}_hit"] = float(any(found))
    return figures


@dataclass(frozen=True)
class ContextSources:
    """What each part of a recall context covers: event, fact and block ids → message ids."""

    events: dict[str, set[str]]
    facts: dict[str, set[str]]
    blocks: dict[str, set[str]]
    tail: set[str]

    @classmethod
    def of(cls, memory: StrataGate) -> ContextSources:
        """Read once after ingestion (the harness appends nothing else that changes them)."""
        events = {card.id: set(card.source_message_ids) for card in memory.list_events()}
        facts = {
            fact.id: set().union(*(events.get(e, set()) for e in fact.source_event_ids))
            for element in memory.list_elements()
            for fact in element.facts
        }
        blocks = {block.id: {m.id for m in block.l5_raw} for block in memory.list_blocks()}
        tail = {m.id for m in memory.list_open_tail()}
        return cls(events=events, facts=facts, blocks=blocks, tail=tail)

    def coverage(self, context: RecallContext) -> dict[str, set[str]]:
        """Message ids in the context: by its memories, and by memories plus transcript blocks."""
        memories = set().union(
            *(self.events[e.id] for e in context.events),
            *(self.facts[f.id] for f in context.elements),
            {m.id for m in getattr(context, "messages", ())},  # older trees have none
        )
        shown = set(memories)
        for block in context.blocks:
            if block.id.startswith("tail:"):
                shown |= self.tail
            elif block.level >= TRANSCRIPT_LEVEL:
                shown |= self.blocks[block.id]
        return {"context": memories, "context_blocks": shown}


@dataclass
class ConversationRun:
    """Every question's ranks plus what ingestion produced, for one conversation."""

    sample_id: str
    questions: list[dict[str, object]] = field(default_factory=list)
    skipped_questions: int = 0
    dropped_evidence: int = 0
    padding_hits: int = 0
    stats: dict[str, object] = field(default_factory=dict)


def sequential_ids() -> Callable[[str], str]:
    """An ``id_factory`` counting up (``evt_000042``), so reruns rank ties identically."""
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter):06d}"


def _ingest(conv: LocomoConversation, block_turns: int) -> StrataGate:
    memory = StrataGate.in_memory(
        namespace=conv.sample_id,
        block_turn_size=block_turns,
        summarizer="offline",
        extractor="offline",
        element_projector="offline",
        id_factory=sequential_ids(),
    )
    for turn in conversation_turns(conv):
        memory.append_turn(turn["user"], turn["assistant"], created_at=turn["created_at"])
    return memory


def run_conversation(
    conv: LocomoConversation, block_turns: int, *, context: bool = False
) -> ConversationRun:
    """Ingest one conversation and rank every question with all three systems (and, with
    ``context``, see which evidence ``recall_context`` shows)."""
    run = ConversationRun(sample_id=conv.sample_id)
    messages = [(m.dia_id, message_content(m)) for s in conv.sessions for m in s.messages]
    known = {message_id for message_id, _ in messages}
    baseline = Baseline(messages)
    started = time.perf_counter()
    memory = _ingest(conv, block_turns)
    try:
        ingested = time.perf_counter()
        cited = {m for event in memory.list_events() for m in event.source_message_ids}
        stats = memory.stats()
        sources = ContextSources.of(memory) if context else None
        context_tokens = 0
        searched = 0.0
        for question in conv.qa:
            evidence, dropped = evidence_ids(question.evidence, known)
            run.dropped_evidence += dropped
            if not evidence:
                run.skipped_questions += 1
                continue
            before = time.perf_counter()
            raw = memory.search_raw_memory(question.question, limit=LIMIT)
            events = memory.search_events(question.question, limit=LIMIT)
            shown: dict[str, list[bool]] | None = None
            if sources is not None:
                recalled = memory.recall_context(question.question)
                context_tokens += recalled.tokens
                covered = sources.coverage(recalled)
                shown = {s: [e in covered[s] for e in evidence] for s in CONTEXT_SYSTEMS}
            searched += time.perf_counter() - before
            run.padding_hits += sum(hit.message.id.endswith(PAD_SUFFIX) for hit in raw)
            ranked = {
                "raw": [raw_coverage(hit.message.id) for hit in raw],
                "events": [set(hit.event.source_message_ids) for hit in events],
                "baseline": [{m} for m in baseline.search(question.question, LIMIT)],
            }
            run.questions.append(
                {
                    "question": question.question,
                    "category": question.category,
                    "evidence": evidence,
                    "ranks": {s: first_ranks(evidence, ranked[s]) for s in SYSTEMS},
                    "event_messages_at_10": len(set().union(*ranked["events"])),
                    "evidence_cited_by_any_event": sum(e in cited for e in evidence),
                    **({"context": shown} if shown is not None else {}),
                }
            )
    finally:
        memory.close()
    run.stats = {
        "messages": len(messages),
        "blocks": stats.blocks,
        "open_tail_turns": stats.open_tail_turns,
        "events": stats.events,
        "messages_cited_by_events": len(cited),
        "ingest_seconds": round(ingested - started, 2),
        "search_seconds": round(searched, 2),
        **(
            {"mean_context_tokens": round(context_tokens / (len(run.questions) or 1), 1)}
            if context
            else {}
        ),
    }
    return run


def summarise(runs: Sequence[ConversationRun]) -> dict[str, object]:
    """Per-conversation (categories 1-4), per-category and overall means."""
    overall, everything = Tally(), Tally()
    splits = {"tuning": Tally(), "held_out": Tally()}
    per_conversation: dict[str, Tally] = {}
    per_category: dict[int, Tally] = {}
    ceiling = [0, 0]
    event_messages = 0
    for run in runs:
        tally = per_conversation.setdefault(run.sample_id, Tally())
        for question in run.questions:
            figures = question_figures(
                question["ranks"],  # type: ignore[arg-type]
                question.get("context"),  # type: ignore[arg-type]
            )
            category = int(question["category"])  # type: ignore[arg-type]
            per_category.setdefault(category, Tally()).add(figures)
            everything.add(figures)
            if category in HEADLINE_CATEGORIES:
                overall.add(figures)
                tally.add(figures)
                splits["tuning" if run.sample_id in TUNING_SAMPLES else "held_out"].add(figures)
                ceiling[0] += int(question["evidence_cited_by_any_event"])  # type: ignore[arg-type]
                ceiling[1] += len(question["evidence"])  # type: ignore[arg-type]
                event_messages += int(question["event_messages_at_10"])  # type: ignore[arg-type]
    return {
        "overall": overall.summary(),
        "overall_with_adversarial": everything.summary(),
        "splits": {name: t.summary() for name, t in splits.items() if t.questions},
        "per_conversation": {sample: t.summary() for sample, t in per_conversation.items()},
        "per_category": {
            f"{c} {CATEGORY_NAMES.get(c, '?')}": t.summary()
            for c, t in sorted(per_category.items())
        },
        "evidence_cited_by_any_event": round(ceiling[0] / (ceiling[1] or 1), 4),
        "mean_messages_covered_by_10_events": round(event_messages / (overall.questions or 1), 1),
    }


def table(summary: dict[str, object]) -> str:
    """Recall@5, recall@10 and all@10 of each system: per conversation, category and overall."""
    groups = [("recall@5", "r@5"), ("recall@10", "r@10"), ("all@10", "all@10")]
    names = {"raw": "raw", "events": "events", "baseline": "bm25"}
    top = f"{'':<18}{'':>5} " + " | ".join(f"{title:^22}" for title, _ in groups)
    sub = f"{'':<18}{'n':>5} " + " | ".join(
        " ".join(f"{names[s]:>7}" for s in SYSTEMS) for _ in groups
    )
    lines = [top, sub]

    def row(label: str, figures: dict[str, object]) -> str:
        cells = " | ".join(
            " ".join(f"{figures.get(f'{s}_{metric}', 0.0):>7.3f}" for s in SYSTEMS)
            for _, metric in groups
        )
        return f"{label:<18}{figures['questions']!s:>5} {cells}"

    for sample, figures in summary["per_conversation"].items():  # type: ignore[union-attr]
        lines.append(row(sample, figures))
    for category, figures in summary["per_category"].items():  # type: ignore[union-attr]
        lines.append(row(f"cat {category}", figures))
    for name, figures in summary["splits"].items():  # type: ignore[union-attr]
        lines.append(row(name.replace("_", "-"), figures))
    lines.append(row("overall (cat 1-4)", summary["overall"]))  # type: ignore[arg-type]
    return "\n".join(lines)


def context_table(summary: dict[str, object]) -> str:
    """Evidence in ``recall_context``'s output beside raw@10 and events@4, where measured."""
    columns = [
        ("raw@10", "raw_r@10"),
        (f"events@{CONTEXT_EVENTS}", f"events_r@{CONTEXT_EVENTS}"),
        ("context", "context_r"),
        ("ctx hit", "context_hit"),
        ("ctx all", "context_all"),
        ("+blocks", "context_blocks_r"),
    ]
    lines = [f"{'':<18}{'n':>5} " + " ".join(f"{title:>9}" for title, _ in columns)]

    def row(label: str, figures: dict[str, object]) -> str:
        cells = " ".join(f"{figures.get(key, 0.0):>9.3f}" for _, key in columns)  # type: ignore[str-format]
        return f"{label:<18}{figures['questions']!s:>5} {cells}"

    for sample, figures in summary["per_conversation"].items():  # type: ignore[union-attr]
        lines.append(row(sample, figures))
    for category, figures in summary["per_category"].items():  # type: ignore[union-attr]
        lines.append(row(f"cat {category}", figures))
    for name, figures in summary["splits"].items():  # type: ignore[union-attr]
        lines.append(row(name.replace("_", "-"), figures))
    lines.append(row("overall (cat 1-4)", summary["overall"]))  # type: ignore[arg-type]
    return "\n".join(lines)


COMPARED = (("raw_r@5", "raw r@5"), ("raw_r@10", "raw r@10"), ("events_r@10", "events r@10"),
            ("context_r", "context"), ("context_hit", "ctx hit"),
            ("baseline_r@10", "bm25 r@10"))  # fmt: skip


def run_other_tree(tree: Path, argv: list[str]) -> dict[str, object]:
    """This script's JSON document as produced by the code of another source tree."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "other.json"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *argv, "--out", str(out)],
            check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        document: dict[str, object] = orjson.loads(out.read_bytes())
        return document


def comparison_table(before: dict[str, object], after: dict[str, object]) -> str:
    """Before → after of the headline figures: per conversation, per category, overall."""
    present = [(k, t) for k, t in COMPARED if k in after["overall"]]  # type: ignore[operator]
    lines = [f"{'':<18}" + " ".join(f"{t:>19}" for _, t in present)]

    def row(label: str, old: dict[str, float], new: dict[str, float]) -> str:
        cells = " ".join(f"{old.get(k, 0.0):>8.3f} → {new.get(k, 0.0):<8.3f}" for k, _ in present)
        return f"{label:<18}{cells}"

    for group in ("per_conversation", "per_category"):
        for name, figures in after[group].items():  # type: ignore[attr-defined]
            old = before[group].get(name, {})  # type: ignore[attr-defined]
            label = name if group == "per_conversation" else f"cat {name}"
            lines.append(row(label, old, figures))
    lines.append(row("overall (cat 1-4)", before["overall"], after["overall"]))  # type: ignore[arg-type]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Evaluate every ``*.json`` in ``--data`` (or the ``--samples``); print and write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--out", type=Path, default=Path("bench-results/eval_locomo.json"))
    parser.add_argument("--samples", nargs="*", help="sample ids to run (default: all)")
    parser.add_argument("--block-turns", type=int, default=12)
    parser.add_argument(
        "--context",
        action="store_true",
        help="also measure the evidence inside recall_context's output (default budget)",
    )
    parser.add_argument(
        "--weight-floor",
        type=float,
        default=None,
        help="override the recall blend's WEIGHT_FLOOR (0-1) for a sweep",
    )
    parser.add_argument(
        "--recall-messages",
        type=int,
        default=None,
        help="override recall's RECALL_MESSAGES (raw hits shown as turns) for a sweep",
    )
    parser.add_argument(
        "--compare-with",
        type=Path,
        default=None,
        metavar="TREE",
        help="also run another source tree's code and print before (it) → after (this)",
    )
    args = parser.parse_args(argv)
    if args.weight_floor is not None:
        if not 0.0 <= args.weight_floor <= 1.0:
            parser.error("--weight-floor must be between 0 and 1")
        stratagate.read.recall.WEIGHT_FLOOR = args.weight_floor
    if args.recall_messages is not None:
        if args.recall_messages < 0:
            parser.error("--recall-messages must be >= 0")
        stratagate.read.recall.RECALL_MESSAGES = args.recall_messages
    paths = sorted(args.data.glob("*.json"))
    if args.samples:
        paths = [p for p in paths if p.stem in set(args.samples)]
    if not paths:
        print(f"no LoCoMo files to evaluate in {args.data}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    runs = [
        run_conversation(load_conversation(path), args.block_turns, context=args.context)
        for path in paths
    ]
    summary = summarise(runs)
    print(table(summary))
    print(
        f"evidence cited by any event: {summary['evidence_cited_by_any_event']:.3f}; "
        f"messages covered by the top 10 events: {summary['mean_messages_covered_by_10_events']}"
    )
    if args.context:
        print("\nevidence inside recall_context (defaults: 4 events, 4 facts, 900 tokens)")
        print(context_table(summary))
    document = {
        "block_turns": args.block_turns,
        "context": args.context,
        "weight_floor": stratagate.read.recall.WEIGHT_FLOOR,
        "recall_messages": getattr(stratagate.read.recall, "RECALL_MESSAGES", 0),
        "limit": LIMIT,
        "headline_categories": list(HEADLINE_CATEGORIES),
        **summary,
        "conversations": {
            run.sample_id: {
                **run.stats,
                "skipped_questions": run.skipped_questions,
                "dropped_evidence": run.dropped_evidence,
                "raw_padding_hits": run.padding_hits,
            }
            for run in runs
        },
        "questions": {run.sample_id: run.questions for run in runs},
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.compare_with is not None:
        forwarded = [a for a in (argv if argv is not None else sys.argv[1:])]
        forwarded = _without_option(forwarded, "--compare-with")
        forwarded = _without_option(forwarded, "--out")
        before = run_other_tree(args.compare_with.resolve(), forwarded)
        print(f"\nbefore ({args.compare_with}) → after (this tree)")
        print(comparison_table(before, document))
        document["before"] = {k: before[k] for k in ("overall", "per_conversation", "per_category")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.out} ({document['seconds']} s)")
    return 0


def _without_option(argv: list[str], option: str) -> list[str]:
    """``argv`` minus ``option`` and its value (``--opt V`` or ``--opt=V``)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(f"{option}="):
            kept.append(arg)
    return kept


if __name__ == "__main__":
    raise SystemExit(main())
