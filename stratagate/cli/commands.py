"""The subcommands of ``stratagate`` (except ``demo``): each takes the parsed arguments, prints
a table or one JSON document on stdout, and returns the exit status.

Commands that only look (everything but ``ingest`` and ``expand block``) refuse a database or
namespace that does not exist rather than create it, and open the memory with
``recover_on_open=False`` so that a concurrent ingest's running jobs are left alone.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from stratagate.cli.app import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.cli.formatting import json_text
from stratagate.cli.ingest_job import FileResult, job_files, model_options, run_job
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
from stratagate.core.search_text import search_tokens
from stratagate.errors import InvalidInputError, StorageError, UnknownIdError
from stratagate.events import EVENT_TYPES
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

SQLITE_URL = "sqlite:///"


def require_database(database: str) -> None:
    """A SQLite path or ``sqlite:///`` URL must name an existing file (a looking command never
    creates one)."""
    path = database.removeprefix(SQLITE_URL) if database.startswith(SQLITE_URL) else database
    if "://" not in path and not Path(path).is_file():
        raise NothingThereError(f"no database at {database} (nothing has been ingested there)")


def log_head(database: str, namespace: str) -> int:
    """The log's last global position; ``NothingThereError`` unless the namespace exists.

    The error names no other namespace: in a shared database those are other tenants' names.
    """
    require_database(database)
    with open_event_store(database, create=False) as store:
        if store.count(namespace) == 0:
            raise NothingThereError(
                f"unknown namespace {namespace!r} in {database} "
                "(`stratagate namespaces` lists the namespaces there)"
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
    """Append the turns of files not yet in their namespaces, several namespaces at once."""
    files = job_files(args.paths, args.namespace, thread_id=args.thread, limit=args.limit)
    options = model_options(args.models)
    if args.block_turn_size is not None:
        options["block_turn_size"] = args.block_turn_size
    if args.runtime == "ray":
        options.update(runtime="ray", max_live_namespaces=max(args.parallel, 8))
    namespaces = len({file.namespace for file in files})
    started = time.monotonic()
    total = sum(len(file.turns) for file in files)
    # Ray prints its raylet's warnings on stdout: keep them off the table or JSON document.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.runtime == "ray" else nullcontext()
    with quiet, Progress(total, sys.stderr, namespaces=namespaces) as progress:
        results = run_job(args.database, files, options, parallel=args.parallel, progress=progress)
    elapsed = time.monotonic() - started
    appended = sum(result.report.appended for result in results)
    skipped = sum(result.report.skipped for result in results)
    if args.json:
        emit_json(
            {
                "database": args.database,
                "runtime": args.runtime,
                "parallel": args.parallel,
                "namespaces": namespaces,
                "turns": {"total": total, "appended": appended, "skipped": skipped},
                "elapsed_s": round(elapsed, 3),
                "files": [result.as_dict() for result in results],
            }
        )
        return EXIT_OK
    rate = appended / elapsed if elapsed > 0 else 0.0
    at_once = min(args.parallel, namespaces)
    print(
        clip(
            f"ingested {len(files)} file(s) into {namespaces} namespace(s) of {args.database} "
            f"({args.runtime}, {at_once} at once)",
            WIDTH,
        )
    )
    emit(ingest_table(results))
    print(f"turns     {appended} appended, {skipped} skipped (already in), {total} in all")
    print(f"elapsed   {elapsed:.1f} s ({rate:.1f} turns/s)")
    return EXIT_OK


def ingest_table(results: Sequence[FileResult]) -> list[str]:
    """One row per file: its namespace's turns, blocks, events and elements after it."""
    rows = []
    for result in results:
        report, before, after = result.report, result.report.before, result.report.after
        rows.append(
            [
                result.file.namespace,
                str(report.total),
                str(report.appended),
                str(report.skipped),
                f"{after.blocks} (+{after.blocks - before.blocks})",
                f"{after.events} (+{after.events - before.events})",
                f"{after.elements} (+{after.elements - before.elements})",
                str(after.revision),
                result.file.path,
            ]
        )
    headers = ["NAMESPACE", "TURNS", "APPENDED", "SKIPPED", "BLOCKS", "EVENTS", "ELEMENTS"]
    return table([*headers, "REVISION", "FILE"], rows)


# -- retrieval -------------------------------------------------------------------------------


def search(args: argparse.Namespace) -> int:
    """Ranked events, element facts or raw messages for a query (the batch is logged).

    A query with no searchable words (empty, blanks, punctuation) is an input error: it would
    rank arbitrary memories and log them as a retrieval batch.
    """
    if not search_tokens(args.query):
        raise InvalidInputError(f"the query {args.query!r} has no words to search for")
    with existing_memory(args) as memory:
        if args.kind == "events":
            hits: Any = memory.search_events(args.query, limit=args.limit)
            lines = event_hit_lines(hits, turn=memory.turn)
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
    if args.type is not None and args.type not in EVENT_TYPES:
        raise InvalidInputError(
            f"unknown event type {args.type!r}; the types are {', '.join(sorted(EVENT_TYPES))}"
        )
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
