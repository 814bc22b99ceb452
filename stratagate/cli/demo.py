"""``stratagate demo``: ingest the bundled sample conversation with the offline models and show
what the memory learned — decayed blocks, dated events with provenance, elements with their fact
history — then one retrieval traced back to its source message, and a verification."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from stratagate.cli.commands import emit
from stratagate.cli.constants import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.cli.ingest_job import IngestReport, ingest_turns, model_options
from stratagate.cli.progress import Progress
from stratagate.cli.render import WIDTH, clip
from stratagate.cli.sample import SAMPLE, sample_bytes
from stratagate.cli.views import (
    block_entry_lines,
    element_lines,
    event_hit_lines,
    event_lines,
    expanded_event_lines,
)
from stratagate.errors import InvalidInputError
from stratagate.formats.turn_files import FileTurn, jsonl_turns
from stratagate.memory import StrataGate
from stratagate.models import ElementCard, EventCard, MemoryBlock

DEFAULT_DATABASE = "stratagate-demo.db"
SEARCH_QUERY = "pnpm"
EVENTS_PER_BLOCK = 2
ELEMENTS_SHOWN = 6
FACTS_PER_ELEMENT = 4
BLOCK_LINES = 2


def sample_turns() -> list[FileTurn]:
    """The bundled sample conversation (each line carries its receipt id)."""
    return jsonl_turns(sample_bytes(), name=Path(SAMPLE).name)


def remove_database(database: str) -> None:
    """Delete a SQLite database file with its WAL and shared-memory companions and its
    snapshot files."""
    if "://" in database:
        raise InvalidInputError("--fresh deletes a SQLite file; it cannot reset a database URL")
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(database + suffix).unlink(missing_ok=True)
    shutil.rmtree(database + ".snapshots", ignore_errors=True)


def demo(args: argparse.Namespace) -> int:
    """Run the demo; the exit status is that of the closing verification."""
    started = time.monotonic()
    if args.fresh:
        remove_database(args.database)
    turns = sample_turns()
    threads = sorted({turn.thread_id or "(none)" for turn in turns})
    print("stratagate demo: long-term memory of a sample project conversation")
    print(f"database {args.database} · namespace {args.namespace} · offline models (no LLM)")
    with StrataGate.open(args.database, args.namespace, **model_options("offline")) as memory:
        with Progress(len(turns), sys.stderr) as progress:
            report = ingest_turns(memory, turns, progress)
        _ingest_section(report, threads)
        _blocks_section(memory, threads)
        _events_section(memory)
        _elements_section(memory)
        ok = _retrieval_section(memory)
    print(f"\ndemo finished in {time.monotonic() - started:.1f} s. Explore further, e.g.:")
    print(f'  stratagate context "when is the launch?" --database {args.database}')
    return EXIT_OK if ok else EXIT_VERIFY_FAILED


def _heading(title: str, *notes: str) -> None:
    print(f"\n== {title} ==")
    for note in notes:
        print(clip(note, WIDTH))


def _ingest_section(report: IngestReport, threads: Sequence[str]) -> None:
    _heading(
        "Ingest",
        f"{report.total} turns from the bundled sample (threads {', '.join(threads)}); "
        "receipt ids make a re-run skip them.",
    )
    emit(report.summary_lines())


def _blocks_section(memory: StrataGate, threads: Sequence[str]) -> None:
    _heading(
        "1. Blocks at their decayed levels",
        "Every 12 turns of a thread seal a block with six views (L0 title … L5 raw); older",
        "blocks decay towards L0, newer ones stay detailed. Extraction of a block waits for",
        "the next block of its thread, so each thread's last block is not extracted yet.",
    )
    extracted = {job.block_id: job.status for job in memory.list_extraction_jobs()}
    for thread in threads:
        entries = memory.get_block_context(None if thread == "(none)" else thread)
        blocks = [e for e in entries if not e.id.startswith("tail:")]
        print(f"thread {thread}: {len(blocks)} block(s)")
        for entry in entries:
            lines = block_entry_lines(entry, max_lines=BLOCK_LINES)
            status = extracted.get(entry.id)
            if entry.id.startswith("tail:"):
                note = "not sealed yet"
            elif status is None:
                note = "not extracted yet"
            else:
                note = "extracted" if status == "succeeded" else f"extraction {status}"
            print(clip(f"  {lines[0]}  {note}", WIDTH))
            emit([clip("  " + line, WIDTH) for line in lines[1:]])


def _events_section(memory: StrataGate) -> None:
    events = memory.list_events()
    blocks = {block.id: block for block in memory.list_blocks()}
    superseded = [card for card in events if card.status == "superseded"]
    by_block: dict[str, list[EventCard]] = {}
    for card in events:
        by_block.setdefault(card.source_block_id, []).append(card)
    _heading(
        "2. Events: when it happened, when it was said, where it came from",
        f"{len(events)} events from {len(by_block)} blocks ({len(superseded)} superseded). "
        f"Per block, up to {EVENTS_PER_BLOCK}, dated ones first;",
        "each cites its source block and the exact messages it came from.",
    )
    for block_id, cards in by_block.items():
        print(clip(f"{_block_label(blocks.get(block_id), block_id)}: {len(cards)} event(s)", WIDTH))
        chosen = sorted(cards, key=lambda card: not _is_dated(card))[:EVENTS_PER_BLOCK]
        for card in chosen:
            emit(event_lines(card, indent="  "))
        if len(cards) > len(chosen):
            print(f"  … and {len(cards) - len(chosen)} more")
    if superseded:
        print("superseded events (kept, out of the current picture):")
        for card in superseded:
            emit(event_lines(card, indent="  "))


def _block_label(block: MemoryBlock | None, block_id: str) -> str:
    if block is None:
        return f"block {block_id}"
    thread = block.thread_id or "(none)"
    return f"block #{block.position} of {thread} (turns {block.start_turn}-{block.end_turn})"


def _is_dated(card: EventCard) -> bool:
    return card.temporal is not None and card.temporal.happened_start is not None


def _elements_section(memory: StrataGate) -> None:
    elements = memory.list_elements()
    facts = sum(len(element.facts) for element in elements)
    _heading(
        "3. Elements: current state and fact history",
        f"{len(elements)} elements with {facts} facts. A newer fact closes the one it replaces;",
        "the old one stays, superseded, with the interval it was valid in.",
    )
    ranked = sorted(elements, key=_element_rank)
    titles = {event.id: event.title for event in memory.list_events()}
    for element in ranked[:ELEMENTS_SHOWN]:
        emit(element_lines(element, max_facts=FACTS_PER_ELEMENT, event_titles=titles))
    if len(ranked) > ELEMENTS_SHOWN:
        names = ", ".join(element.name for element in ranked[ELEMENTS_SHOWN:])
        print(clip(f"… and {len(ranked) - ELEMENTS_SHOWN} more: {names}", WIDTH))


def _element_rank(element: ElementCard) -> tuple[int, int]:
    """Elements with history first, then those with the most facts."""
    closed = sum(1 for fact in element.facts if fact.status != "active" or fact.valid_to)
    return (-closed, -len(element.facts))


def _retrieval_section(memory: StrataGate) -> bool:
    _heading(
        "4. One retrieval, end to end",
        f"A search for {SEARCH_QUERY!r} (logged as a retrieval batch), the top hit expanded back "
        "to its source message,",
        "and a verification of the whole log.",
    )
    print(f"$ stratagate search {SEARCH_QUERY}")
    hits = memory.search_events(SEARCH_QUERY, limit=3)
    emit(event_hit_lines(hits, turn=memory.turn) if hits else [f"no events match {SEARCH_QUERY!r}"])
    if hits:
        print(f"\n$ stratagate expand event {hits[0].id}")
        emit(expanded_event_lines(memory.expand_event(hits[0].id)))
    print("\n$ stratagate verify")
    report = memory.verify()
    if report.ok:
        print(f"ok ({report.events_checked} events, chain and replay verified)")
    else:
        print(f"FAILED: {report.detail}")
    return report.ok


__all__ = ["DEFAULT_DATABASE", "demo", "remove_database", "sample_turns"]
