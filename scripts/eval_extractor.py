"""Evaluate the offline extractor on LoCoMo: annotated-event recall and temporal evidence.

Blocks of ``--block-turns`` turns are built per conversation straight from the models (L3/L4
are plain joins, L0-L2 come from the offline summarizer). Block N is extracted with N-1 as
previous and N+1 as next context, as the product does once N+1 is sealed; the last block,
which the product would hold until another block arrives, is extracted here with an empty
next block so that every message is scored. Blocks the summarizer marks ``should_extract=False``
are skipped, as in the product. Event ids are ``<block id>-e<k>``; the timeline handed to the
extractor holds every earlier event.

(a) Event recall: an annotated event (``events_session_N``) is recalled when an extracted event
citing a message of session N covers at least half of the annotation's content tokens
(lower-cased words minus stop words, lightly stemmed) with its title, summary, tags and
participants.
(b) Temporal evidence: for each category-2 question and each of its evidence messages, is the
message cited by some extracted event, and (when the answer names an interval) does some
citing event carry a happened interval that overlaps the answer interval and is no wider than
max(answer width, 31 days) ("correct"), or no wider than the answer ("tight")?

(c) Elements: each conversation (and the bundled sample) is ingested through the public API
(``StrataGate.in_memory`` with the offline summarizer, extractor and element projector, blocks
of ``--block-turns`` turns; the sample at the library's default block size) and the elements
it ends with are scored against ``tests/fixtures/labels/elements.json`` (rule and scoring in
the README beside it): precision, recall, and both again requiring the labelled type.

(d) Event titles: the messages of one session per conversation are labelled in
``tests/fixtures/labels/event_titles.json`` (rule in the README beside it) with the title of
the event they report, or none. "title recall" = labelled event messages cited by an
extracted event whose title covers at least half of the label's content tokens; "on event" =
extracted events citing a labelled message that cite an event message; "title prec" = of
those events, the ones whose title covers at least half of such a message's label.

``--compare-with TREE`` also runs this script against another source tree's code (its
modules first on the path, in a subprocess) and prints before → after of the totals.

Usage: PYTHONPATH=. python scripts/eval_extractor.py [--data DIR] [--out PATH] [--labels PATH]
                                                    [--title-labels PATH] [--compare-with TREE]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

import stratagate
from stratagate import StrataGate
from stratagate.formats.locomo import (
    LocomoConversation,
    conversation_turns,
    default_data_dir,
    load_conversation,
    parse_answer_interval,
)
from stratagate.formats.turn_files import jsonl_turns
from stratagate.models import (
    EventCardInput,
    ExtractionContext,
    MemoryBlock,
    RawMessage,
    TimelineEntry,
)
from stratagate.offline import offline_extractor, offline_summarizer
from stratagate.timeutil import partial_bounds

MATCH_THRESHOLD = 0.5
LABELS = Path(__file__).parents[1] / "tests" / "fixtures" / "labels" / "elements.json"
TITLE_LABELS = LABELS.with_name("event_titles.json")
SAMPLE = Path(stratagate.__file__).parent / "sample" / "project_conversation.jsonl"
MONTH = timedelta(days=31)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me|mine|myself)\b|\bMy\b")
"""A first-person word in a title: every LoCoMo speaker is named, so a title should read in
the third person ("Caroline went …", not "Caroline will do my best …")."""
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP_WORDS = """a an the and or but of to in on at for with from by as is are was were be been
being his her their its my our your he she they it we i you him them this that these those who
whom which what when where how has have had do does did not no so up out about into over after
before than then there here some any all also just very more most one"""
_STOP = frozenset(_STOP_WORDS.split())


def overlap_tokens(text: str) -> set[str]:
    """Content tokens for the recall criterion: lower-case, stop words out, light stemming."""
    found = set()
    for raw in _TOKEN.findall(text.lower()):
        word = raw.removesuffix("'s")
        if word in _STOP or len(word) < 2:
            continue
        found.add(_stem(word))
    return found


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    return word.removesuffix("e") if len(word) > 3 else word


@dataclass
class Extracted:
    """One extracted event with its id, the sessions it cites and its scoring tokens."""

    id: str
    card: EventCardInput
    sessions: set[int]
    tokens: set[str]


@dataclass
class ConversationReport:
    """Every figure for one conversation."""

    sample_id: str
    blocks: int = 0
    blocks_extracted: int = 0
    events: int = 0
    annotated: int = 0
    recalled: int = 0
    supported_events: int = 0
    messages: int = 0
    messages_cited: int = 0
    evidence: int = 0
    evidence_cited: int = 0
    evidence_dated: int = 0
    evidence_with_interval: int = 0
    cited_with_interval: int = 0
    correct: int = 0
    tight: int = 0
    first_person_titles: int = 0
    misses: list[dict[str, object]] = field(default_factory=list)


def _messages(conv: LocomoConversation) -> list[list[RawMessage]]:
    turns = conversation_turns(conv, id_prefix=f"{conv.sample_id}:")
    return [[RawMessage(**turn["user"]), RawMessage(**turn["assistant"])] for turn in turns]


def _block(sample: str, number: int, turns: list[list[RawMessage]], first_turn: int) -> MemoryBlock:
    messages = [message for turn in turns for message in turn]
    summary = offline_summarizer(messages)
    readable = "\n".join(f"{m.name or m.role}: {m.content}" for m in messages if m.content)
    created = messages[-1].created_at if messages else datetime(2000, 1, 1)
    return MemoryBlock(
        id=f"{sample}-b{number}",
        thread_id=None,
        sequence=number,
        position=number,
        start_turn=first_turn,
        end_turn=max(first_turn, first_turn + len(turns) - 1),
        created_at=created,
        should_extract=summary.should_extract,
        l0_title=summary.l0_title,
        l0_tags=summary.l0_tags,
        l1_summary=summary.l1_summary,
        l2_keypoints=summary.l2_keypoints,
        l3_condensed=readable,
        l4_readable=readable,
        l5_raw=messages,
        pointer_current_level=5,
        pointer_anchor_level=5,
        pointer_anchor_position=number,
    )


def _session_of(message_id: str) -> int | None:
    match = re.search(r":D(\d+):\d+$", message_id)
    return int(match.group(1)) if match else None


def _extract(
    conv: LocomoConversation, block_turns: int, report: ConversationReport
) -> list[Extracted]:
    turns = _messages(conv)
    blocks = [
        _block(
            conv.sample_id, index // block_turns + 1, turns[index : index + block_turns], index + 1
        )
        for index in range(0, len(turns), block_turns)
    ]
    report.blocks = len(blocks)
    timeline: list[TimelineEntry] = []
    extracted: list[Extracted] = []
    for index, target in enumerate(blocks):
        if not target.should_extract:
            continue
        following = (
            blocks[index + 1]
            if index + 1 < len(blocks)
            else _block(conv.sample_id, len(blocks) + 1, [], target.end_turn + 1)
        )
        ctx = ExtractionContext(
            previous=blocks[index - 1] if index else None,
            target=target,
            next=following,
            timeline=timeline,
        )
        result = offline_extractor(ctx)
        report.blocks_extracted += 1
        for number, card in enumerate(result.events, start=1):
            event_id = f"{target.id}-e{number}"
            timeline.append(TimelineEntry(id=event_id, title=card.title, temporal=card.temporal))
            participants = card.temporal.participants if card.temporal else []
            text = " ".join([card.title, card.summary, *card.tags, *participants])
            sessions = {s for s in map(_session_of, card.source_message_ids) if s is not None}
            extracted.append(Extracted(event_id, card, sessions, overlap_tokens(text)))
    report.events = len(extracted)
    report.first_person_titles = sum(
        bool(_FIRST_PERSON_WORD.search(e.card.title)) for e in extracted
    )
    report.messages = sum(len(session.messages) for session in conv.sessions)
    report.messages_cited = len({m for e in extracted for m in e.card.source_message_ids})
    return extracted


def _coverage(annotation: set[str], event: Extracted) -> float:
    return len(annotation & event.tokens) / len(annotation) if annotation else 0.0


def _score_recall(
    conv: LocomoConversation, events: list[Extracted], report: ConversationReport
) -> None:
    supported: set[str] = set()
    for session in conv.events:
        candidates = [e for e in events if session.session_index in e.sessions]
        for speaker, texts in session.by_speaker.items():
            for text in texts:
                tokens = overlap_tokens(text)
                report.annotated += 1
                hits = [e for e in candidates if _coverage(tokens, e) >= MATCH_THRESHOLD]
                supported.update(e.id for e in hits)
                if hits:
                    report.recalled += 1
                elif len(report.misses) < 400:
                    report.misses.append(
                        {"kind": "event", "session": session.session_index, "speaker": speaker,
                         "annotation": text}
                    )  # fmt: skip
    report.supported_events = len(supported)


def _interval(card: EventCardInput) -> tuple[datetime, datetime] | None:
    temporal = card.temporal
    if temporal is None or not temporal.happened_start:
        return None
    start = partial_bounds(temporal.happened_start)[0]
    end = partial_bounds(temporal.happened_end or temporal.happened_start)[1]
    return start, end


def _score_temporal(
    conv: LocomoConversation, events: list[Extracted], report: ConversationReport
) -> None:
    citing: dict[str, list[Extracted]] = {}
    for event in events:
        for message_id in event.card.source_message_ids:
            citing.setdefault(message_id, []).append(event)
    known_ids = {m.dia_id for s in conv.sessions for m in s.messages}
    for question in conv.qa:
        if question.category != 2:
            continue
        answer = parse_answer_interval(question.answer)
        for dia_id in question.evidence:
            if dia_id not in known_ids:
                continue
            report.evidence += 1
            report.evidence_with_interval += answer is not None
            cards = citing.get(f"{conv.sample_id}:{dia_id}", [])
            if not cards:
                report.misses.append(
                    {"kind": "evidence", "dia_id": dia_id, "answer": question.answer}
                )
                continue
            report.evidence_cited += 1
            intervals = [i for i in (_interval(e.card) for e in cards) if i is not None]
            report.evidence_dated += bool(intervals)
            if answer is None:
                continue
            report.cited_with_interval += 1
            width = answer[1] - answer[0]
            overlapping = [i for i in intervals if i[0] < answer[1] and answer[0] < i[1]]
            report.correct += any(i[1] - i[0] <= max(width, MONTH) for i in overlapping)
            report.tight += any(i[1] - i[0] <= width for i in overlapping)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _summary(report: ConversationReport) -> dict[str, object]:
    return {
        "sample_id": report.sample_id,
        "blocks": report.blocks,
        "blocks_extracted": report.blocks_extracted,
        "events": report.events,
        "events_per_block": _share(report.events, report.blocks_extracted),
        "annotated_events": report.annotated,
        "recalled": report.recalled,
        "event_recall": _share(report.recalled, report.annotated),
        "messages": report.messages,
        "messages_cited": report.messages_cited,
        "messages_cited_share": _share(report.messages_cited, report.messages),
        "events_matching_an_annotation": report.supported_events,
        "first_person_titles": report.first_person_titles,
        "first_person_title_share": _share(report.first_person_titles, report.events),
        "matching_share": _share(report.supported_events, report.events),
        "cat2_evidence": report.evidence,
        "cat2_evidence_cited": report.evidence_cited,
        "cited_share": _share(report.evidence_cited, report.evidence),
        "cited_dated": report.evidence_dated,
        "cat2_evidence_with_date_answer": report.evidence_with_interval,
        "cited_with_date_answer": report.cited_with_interval,
        "date_correct": report.correct,
        "date_correct_share_of_cited": _share(report.correct, report.cited_with_interval),
        "date_correct_share_of_all": _share(report.correct, report.evidence_with_interval),
        "date_tight": report.tight,
        "date_tight_share_of_cited": _share(report.tight, report.cited_with_interval),
    }


def _total(reports: Iterable[ConversationReport]) -> ConversationReport:
    total = ConversationReport(sample_id="total")
    for report in reports:
        for name in (
            "blocks", "blocks_extracted", "events", "annotated", "recalled", "supported_events",
            "first_person_titles",
            "messages", "messages_cited",
            "evidence", "evidence_cited", "evidence_dated", "evidence_with_interval",
            "cited_with_interval", "correct", "tight",
        ):  # fmt: skip
            setattr(total, name, getattr(total, name) + getattr(report, name))
    return total


@dataclass
class TitleReport:
    """Extracted event titles against the labelled ones, for one conversation's session."""

    sample_id: str
    labelled: int = 0
    cited: int = 0
    titled: int = 0
    events: int = 0
    on_event: int = 0
    title_ok: int = 0


def score_titles(
    sample_id: str, events: list[Extracted], titles: dict[str, str | None]
) -> TitleReport:
    """Counts of labelled event messages cited and well titled, and of the extracted events
    citing labelled messages that cite an event message and carry its title."""
    report = TitleReport(sample_id=sample_id)
    label = {f"{sample_id}:{dia_id}": overlap_tokens(t) for dia_id, t in titles.items() if t}
    labelled = {f"{sample_id}:{dia_id}" for dia_id in titles}
    report.labelled = len(label)
    for message_id, tokens in label.items():
        citing = [e for e in events if message_id in e.card.source_message_ids]
        report.cited += bool(citing)
        report.titled += any(_covers(tokens, e.card.title) for e in citing)
    for event in events:
        cited = set(event.card.source_message_ids)
        if not cited & labelled:
            continue
        report.events += 1
        reported = [label[m] for m in cited if m in label]
        report.on_event += bool(reported)
        report.title_ok += any(_covers(tokens, event.card.title) for tokens in reported)
    return report


def _covers(label: set[str], title: str) -> bool:
    return bool(label) and len(label & overlap_tokens(title)) / len(label) >= MATCH_THRESHOLD


def _title_row(report: TitleReport) -> dict[str, object]:
    return {
        "sample_id": report.sample_id,
        "labelled": report.labelled,
        "cited": _share(report.cited, report.labelled),
        "title_recall": _share(report.titled, report.labelled),
        "events": report.events,
        "on_event": _share(report.on_event, report.events),
        "title_precision": _share(report.title_ok, report.events),
    }


def _title_total(reports: Iterable[TitleReport]) -> TitleReport:
    total = TitleReport(sample_id="total")
    for report in reports:
        for name in ("labelled", "cited", "titled", "events", "on_event", "title_ok"):
            setattr(total, name, getattr(total, name) + getattr(report, name))
    return total


def _name_key(name: str) -> str:
    key = " ".join(name.casefold().split())
    return key.removeprefix("the ")


@dataclass
class ElementReport:
    """Projected elements against the labelled ones, for one conversation."""

    sample_id: str
    projected: int = 0
    counted: int = 0
    matched: int = 0
    matched_typed: int = 0
    labelled: int = 0
    found: int = 0
    found_typed: int = 0
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


def score_elements(
    sample_id: str, projected: list[tuple[str, str, list[str]]], labels: dict[str, Any]
) -> ElementReport:
    """Precision and recall counts of ``(name, type, aliases)`` elements against ``labels``."""
    report = ElementReport(sample_id=sample_id, projected=len(projected))
    gold = [
        (entry["type"], {_name_key(n) for n in [entry["name"], *entry.get("aliases", [])]})
        for entry in labels["elements"]
    ]
    ignored = {_name_key(n) for n in labels.get("ignore", [])}
    report.labelled = len(gold)
    hit: dict[int, bool] = {}
    for name, type_, aliases in projected:
        keys = {_name_key(n) for n in [name, *aliases]}
        if keys & ignored:
            continue
        report.counted += 1
        matches = [i for i, (_, names) in enumerate(gold) if keys & names]
        if not matches:
            report.wrong.append(f"{name} ({type_})")
            continue
        report.matched += 1
        typed = [i for i in matches if gold[i][0] == type_]
        report.matched_typed += bool(typed)
        for i in matches:
            hit[i] = hit.get(i, False) or i in typed
    report.found = len(hit)
    report.found_typed = sum(hit.values())
    report.missed = [labels["elements"][i]["name"] for i in range(len(gold)) if i not in hit]
    return report


def _elements_of(memory: StrataGate) -> list[tuple[str, str, list[str]]]:
    return [(e.name, e.type, list(e.aliases)) for e in memory.list_elements()]


def _offline_memory(namespace: str, **options: Any) -> StrataGate:
    return StrataGate.in_memory(
        namespace=namespace,
        summarizer="offline",
        extractor="offline",
        element_projector="offline",
        **options,
    )


def project_conversation(
    conv: LocomoConversation, block_turns: int
) -> list[tuple[str, str, list[str]]]:
    """The elements the offline models end with for one LoCoMo conversation."""
    with _offline_memory(conv.sample_id, block_turn_size=block_turns) as memory:
        for turn in conversation_turns(conv):
            memory.append_turn(turn["user"], turn["assistant"], created_at=turn["created_at"])
        return _elements_of(memory)


def project_sample() -> list[tuple[str, str, list[str]]]:
    """The elements the offline models end with for the bundled sample conversation."""
    with _offline_memory("sample") as memory:
        for turn in jsonl_turns(SAMPLE.read_bytes(), name=SAMPLE.name):
            memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
        return _elements_of(memory)


def _element_row(report: ElementReport) -> dict[str, object]:
    return {
        "sample_id": report.sample_id,
        "projected": report.projected,
        "labelled": report.labelled,
        "precision": _share(report.matched, report.counted),
        "recall": _share(report.found, report.labelled),
        "precision_typed": _share(report.matched_typed, report.counted),
        "recall_typed": _share(report.found_typed, report.labelled),
    }


def _element_total(reports: Iterable[ElementReport]) -> ElementReport:
    total = ElementReport(sample_id="total")
    for report in reports:
        for name in (
            "projected", "counted", "matched", "matched_typed", "labelled", "found", "found_typed"
        ):  # fmt: skip
            setattr(total, name, getattr(total, name) + getattr(report, name))
    return total


def _element_table(rows: list[dict[str, object]]) -> str:
    columns = ["sample_id", "projected", "labelled", "precision", "recall",
               "precision_typed", "recall_typed"]  # fmt: skip
    titles = ["sample", "projected", "labelled", "precision", "recall", "prec typed", "rec typed"]
    lines = [" ".join(f"{title:>10}" for title in titles)]
    for row in rows:
        lines.append(" ".join(f"{row[key]!s:>10}" for key in columns))
    return "\n".join(lines)


def _plain_table(rows: list[dict[str, object]]) -> str:
    """Every column of ``rows`` under its key."""
    keys = list(rows[0])
    lines = [" ".join(f"{key.replace('_', ' '):>15}" for key in keys)]
    lines.extend(" ".join(f"{row[key]!s:>15}" for key in keys) for row in rows)
    return "\n".join(lines)


def _table(rows: list[dict[str, object]]) -> str:
    columns = [
        ("sample_id", "sample"), ("blocks", "blocks"), ("events", "events"),
        ("events_per_block", "ev/blk"), ("event_recall", "recall"),
        ("matching_share", "match%"), ("messages_cited_share", "msgs cited"),
        ("cited_share", "cat2 cited"),
        ("date_correct_share_of_cited", "date ok"), ("date_tight_share_of_cited", "tight"),
        ("date_correct_share_of_all", "ok/all"),
    ]  # fmt: skip
    lines = [" ".join(f"{title:>10}" for _, title in columns)]
    for row in rows:
        lines.append(" ".join(f"{row[key]!s:>10}" for key, _ in columns))
    return "\n".join(lines)


def _other_tree(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """This script's JSON document as produced by the code of another source tree."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "other.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--data", str(args.data),
                   "--block-turns", str(args.block_turns), "--labels", str(args.labels.resolve()),
                   "--out", str(out)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(command, check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL)
        document: dict[str, Any] = orjson.loads(out.read_bytes())
        return document


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation over every ``*.json`` in ``--data``; print a table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--out", type=Path, default=Path("bench-results/eval_extractor.json"))
    parser.add_argument("--block-turns", type=int, default=12)
    parser.add_argument("--labels", type=Path, default=LABELS, help="labelled elements (JSON)")
    parser.add_argument(
        "--title-labels", type=Path, default=TITLE_LABELS, help="labelled event titles (JSON)"
    )
    parser.add_argument(
        "--compare-with", type=Path, default=None, metavar="TREE",
        help="also run another source tree's code and print before (it) → after (this)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    paths = sorted(args.data.glob("*.json"))
    if not paths:
        print(f"no LoCoMo files in {args.data}", file=sys.stderr)
        return 2
    reports = []
    title_labels = orjson.loads(args.title_labels.read_bytes())["conversations"]
    title_reports = []
    for path in paths:
        conv = load_conversation(path)
        report = ConversationReport(sample_id=conv.sample_id)
        events = _extract(conv, args.block_turns, report)
        _score_recall(conv, events, report)
        _score_temporal(conv, events, report)
        reports.append(report)
        if conv.sample_id in title_labels:
            titles = title_labels[conv.sample_id]["titles"]
            title_reports.append(score_titles(conv.sample_id, events, titles))
    rows = [_summary(report) for report in reports] + [_summary(_total(reports))]
    print(_table(rows))
    title_rows = [_title_row(r) for r in title_reports] + [_title_row(_title_total(title_reports))]
    print("\nevent titles against tests/fixtures/labels/event_titles.json")
    print(_plain_table(title_rows))
    labels = orjson.loads(args.labels.read_bytes())["conversations"]
    element_reports = [
        score_elements(path.stem, project_conversation(load_conversation(path), args.block_turns),
                       labels[path.stem])
        for path in paths
        if path.stem in labels
    ]  # fmt: skip
    if "sample" in labels:
        element_reports.append(score_elements("sample", project_sample(), labels["sample"]))
    element_rows = [_element_row(r) for r in element_reports]
    element_rows.append(_element_row(_element_total(element_reports)))
    print("\nelements against tests/fixtures/labels/elements.json")
    print(_element_table(element_rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "block_turns": args.block_turns,
        "match_threshold": MATCH_THRESHOLD,
        "conversations": rows[:-1],
        "total": rows[-1],
        "misses": {report.sample_id: report.misses for report in reports},
        "titles": {"conversations": title_rows[:-1], "total": title_rows[-1]},
        "elements": {
            "conversations": element_rows[:-1],
            "total": element_rows[-1],
            "wrong": {r.sample_id: r.wrong for r in element_reports},
            "missed": {r.sample_id: r.missed for r in element_reports},
        },
    }
    if args.compare_with is not None:
        before = _other_tree(args.compare_with.resolve(), args)
        print(f"\nbefore ({args.compare_with}) → after (this tree), totals")
        pairs = [("events", before["total"], document["total"]),
                 ("elements", before["elements"]["total"], document["elements"]["total"]),  # type: ignore[index]
                 ("titles", before.get("titles", {}).get("total", {}), title_rows[-1])]  # fmt: skip
        for label, old, new in pairs:
            for key, value in new.items():  # type: ignore[attr-defined]
                if key != "sample_id" and isinstance(value, int | float):
                    print(f"  {label:<9}{key:<32}{old.get(key, 0)!s:>10} → {value}")  # type: ignore[attr-defined]
        document["before"] = {"total": before["total"], "elements": before["elements"]["total"]}  # type: ignore[index]
    args.out.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
