"""The subcommands of ``stratagate`` (except ``demo``): each takes the parsed arguments, prints
a table or one JSON document on stdout, and returns the exit status.

Commands that only look (everything but ``ingest`` and ``expand block``) refuse a database or
namespace that does not exist rather than create it, and open the memory with
``recover_on_open=False`` so that a concurrent ingest's running jobs are left alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagate.cli.app import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.cli.formatting import json_text
from stratagate.cli.ingest_job import ingest_turns, model_options
from stratagate.cli.progress import Progress
from stratagate.cli.render import WIDTH, clip, table
from stratagate.cli.views import (
    block_entry_lines,
    element_hit_lines,
    element_lines,
    event_hit_lines,
    expanded_event_lines,
    history_lines,
    raw_hit_lines,
    stats_lines,
)
from stratagate.errors import InvalidInputError, StorageError, UnknownIdError
from stratagate.formats.turn_files import read_turn_file
from stratagate.memory import StrataGate, verify_namespace
from stratagate.results import VerifyReport
from stratagate.store.sql import open_event_store


class NothingThereError(UnknownIdError):
    """A looking command named a database or namespace that holds nothing."""


def emit(lines: list[str]) -> None:
    for line in lines:
        print(line)


def emit_json(value: Any) -> None:
    print(json_text(value))


def _show(args: argparse.Namespace, value: Any, lines: list[str]) -> None:
    """``value`` as JSON under ``--json``, else the readable ``lines``."""
    if args.json:
        emit_json(value)
    else:
        emit(lines)


# -- opening ---------------------------------------------------------------------------------


def require_database(database: str) -> None:
    """A SQLite path must name an existing file (a looking command never creates one)."""
    if "://" not in database and not Path(database).is_file():
        raise NothingThereError(f"no database at {database} (nothing has been ingested there)")


def log_head(database: str, namespace: str) -> int:
    """The log's last global position; ``NothingThereError`` unless the namespace exists."""
    require_database(database)
    with open_event_store(database, create=False) as store:
        known = store.namespaces()
        if namespace not in known:
            listed = ", ".join(known) or "none"
            raise NothingThereError(
                f"unknown namespace {namespace!r} in {database} (namespaces: {listed})"
            )
        return store.global_head()


@contextmanager
def existing_memory(args: argparse.Namespace) -> Iterator[StrataGate]:
    """The memory of an existing namespace, opened without recovering anyone's running jobs."""
    log_head(args.database, args.namespace)
    with StrataGate.open(args.database, args.namespace, recover_on_open=False) as memory:
        yield memory


# -- ingest ----------------------------------------------------------------------------------


def ingest(args: argparse.Namespace) -> int:
    """Append a JSONL or LoCoMo file's turns not yet in the namespace."""
    turn_file = read_turn_file(args.file, thread_id=args.thread, limit=args.limit)
    options = model_options(args.models)
    if args.block_turn_size is not None:
        options["block_turn_size"] = args.block_turn_size
    with StrataGate.open(args.database, args.namespace, **options) as memory:
        progress = Progress(len(turn_file.turns), sys.stderr)
        report = ingest_turns(memory, turn_file.turns, progress)
    if args.json:
        emit_json(
            {
                "file": str(args.file),
                "kind": turn_file.kind,
                "database": args.database,
                "namespace": args.namespace,
                **report.as_dict(),
            }
        )
        return EXIT_OK
    print(f"ingested {args.file} ({turn_file.kind}, {report.total} turns) into {args.namespace}")
    emit(report.summary_lines())
    return EXIT_OK


# -- retrieval -------------------------------------------------------------------------------


def search(args: argparse.Namespace) -> int:
    """Ranked events, element facts or raw messages for a query (the batch is logged)."""
    with existing_memory(args) as memory:
        if args.kind == "events":
            hits: Any = memory.search_events(args.query, limit=args.limit)
            lines = event_hit_lines(hits)
        elif args.kind == "elements":
            hits = memory.search_elements(args.query, limit=args.limit)
            lines = element_hit_lines(hits)
        else:
            hits = memory.search_raw_memory(args.query, limit=args.limit, thread_id=args.thread)
            lines = raw_hit_lines(hits)
    if args.json:
        emit_json(
            {"query": args.query, "kind": args.kind, "batch_id": hits.batch_id, "hits": list(hits)}
        )
        return EXIT_OK
    if not hits:
        print(f"no {args.kind} match {args.query!r}")
        return EXIT_OK
    emit(lines)
    print(f"{len(hits)} hit(s) · logged as retrieval batch {hits.batch_id}")
    return EXIT_OK


def context(args: argparse.Namespace) -> int:
    """What ``recall_context`` packs for a model call."""
    with existing_memory(args) as memory:
        recalled = memory.recall_context(
            args.query,
            thread_id=args.thread,
            max_events=args.max_events,
            max_elements=args.max_elements,
            token_budget=args.budget,
        )
    if args.json:
        emit_json(recalled)
        return EXIT_OK
    print(recalled.text)
    print(f"\n({recalled.tokens} of {recalled.token_budget} tokens · batch {recalled.batch_id})")
    return EXIT_OK


def expand(args: argparse.Namespace) -> int:
    """A block lifted to a more detailed level, an event with its sources, or an element."""
    if args.kind != "block" and args.level is not None:
        raise InvalidInputError("--level applies to blocks only")
    if args.kind != "element" and args.at is not None:
        raise InvalidInputError("--at applies to elements only")
    with existing_memory(args) as memory:
        if args.kind == "block":
            return _expand_block(memory, args)
        if args.kind == "event":
            expanded = memory.expand_event(args.id)
            _show(args, expanded, expanded_event_lines(expanded))
            return EXIT_OK
        card = memory.expand_element(args.id, args.at)
    _show(args, card, element_lines(card, as_of=args.at))
    return EXIT_OK


def _expand_block(memory: StrataGate, args: argparse.Namespace) -> int:
    level = args.level if args.level is not None else "next"
    target: int | str = int(level) if level.isdigit() else level
    entry = memory.expand_block(args.id, target, source="user")
    block = memory.get_block(entry.id)
    if args.json:
        emit_json({"block": block, "context": entry})
        return EXIT_OK
    thread = block.thread_id or "(none)"
    print(clip(f"block {block.id} · thread {thread} · block #{block.position}", WIDTH))
    emit(block_entry_lines(entry))
    return EXIT_OK


# -- audit -----------------------------------------------------------------------------------


def history(args: argparse.Namespace) -> int:
    """The namespace's log after a position, optionally of one event type."""
    with existing_memory(args) as memory:
        records = memory.history(since=args.since)
    if args.type is not None:
        records = [r for r in records if r.type == args.type]
    if args.limit is not None:
        records = records[: args.limit]
    if args.json:
        emit_json(records)
    elif records:
        emit(history_lines(records))
    else:
        print("no logged events match")
    return EXIT_OK


def verify(args: argparse.Namespace) -> int:
    """The hash chain and a full replay against the live read models; 1 when either fails."""
    log_head(args.database, args.namespace)
    report = _verify_report(args.database, args.namespace)
    if args.json:
        emit_json(report)
    elif report.ok:
        print(f"ok ({report.events_checked} events, chain and replay verified)")
    elif report.first_bad_position is not None:
        print(f"FAILED at global position {report.first_bad_position}: {report.detail}")
    else:
        print(f"FAILED: {report.detail}")
    return EXIT_OK if report.ok else EXIT_VERIFY_FAILED


def _verify_report(database: str, namespace: str) -> VerifyReport:
    """``StrataGate.verify()``; when a damaged log cannot even be opened, the chain check alone."""
    try:
        with StrataGate.open(database, namespace, recover_on_open=False) as memory:
            return memory.verify()
    except StorageError:
        with open_event_store(database, create=False) as store:
            report = verify_namespace(store, namespace, [])
        if report.ok:
            raise
        return report


def replay(args: argparse.Namespace) -> int:
    """What the memory knew as of a global position."""
    head = log_head(args.database, args.namespace)
    if args.until > head:
        raise InvalidInputError(f"position {args.until} is past the end of the log ({head})")
    with existing_memory(args) as memory:
        revision = sum(1 for record in memory.history() if record.position <= args.until)
        view = memory.state_at(args.until)
    stats = view.stats(revision)
    blocks, events, elements = view.blocks(), view.events(), view.elements()
    if args.json:
        emit_json(
            {"position": args.until, "stats": stats, "blocks": blocks, "events": events,
             "elements": elements}
        )  # fmt: skip
        return EXIT_OK
    print(f"as of global position {args.until} ({revision} of the namespace's events):")
    print(
        f"  {stats.turns} turns · {stats.blocks} blocks · {stats.events} events · "
        f"{stats.elements} elements · {stats.open_tail_turns} turns in the open tail"
    )
    block_rows = [
        [b.id, b.thread_id or "(none)", f"{b.start_turn}-{b.end_turn}", b.l0_title] for b in blocks
    ]
    event_rows = [[e.id, e.status, e.title] for e in events]
    element_rows = [[e.id, e.type, e.name] for e in elements]
    for title, headers, rows in (
        ("blocks", ["BLOCK", "THREAD", "TURNS", "TITLE"], block_rows),
        ("events", ["EVENT", "STATUS", "TITLE"], event_rows),
        ("elements", ["ELEMENT", "TYPE", "NAME"], element_rows),
    ):
        print(f"\n{title} ({len(rows)})")
        if rows:
            emit(table(headers, rows))
    return EXIT_OK


def stats(args: argparse.Namespace) -> int:
    """Counts of everything in the namespace."""
    with existing_memory(args) as memory:
        counts = memory.stats()
    _show(args, counts, stats_lines(counts))
    return EXIT_OK


def namespaces(args: argparse.Namespace) -> int:
    """Every namespace in the database with its revision."""
    require_database(args.database)
    with open_event_store(args.database, create=False) as store:
        found = [(name, store.count(name), store.head(name)) for name in store.namespaces()]
    if args.json:
        emit_json(
            [{"namespace": n, "revision": count, "last_position": head} for n, count, head in found]
        )
    elif found:
        emit(
            table(
                ["NAMESPACE", "REVISION", "LAST POSITION"],
                [[n, str(c), str(h)] for n, c, h in found],
            )
        )
    else:
        print("no namespaces")
    return EXIT_OK


__all__ = [
    "NothingThereError",
    "context",
    "existing_memory",
    "expand",
    "history",
    "ingest",
    "log_head",
    "namespaces",
    "replay",
    "require_database",
    "search",
    "stats",
    "verify",
]
