"""The subcommands of ``stratagate`` (except ``demo``): each takes the parsed arguments, prints
a table or one JSON document on stdout, and returns the exit status.

Commands that only look (everything but ``ingest``) refuse a database or namespace that does
not exist rather than create it. Those that only read (``stats``, ``history``, ``replay``,
``verify``, ``expand event|element``) read the log without the namespace's writer lease, so they
run next to an ingest; those that append (``search`` and ``context`` log a retrieval batch,
``expand block`` a lift) take the lease, and open the memory with ``recover_on_open=False`` so
that nobody's running jobs are marked interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagate.cli.constants import EXIT_OK, EXIT_VERIFY_FAILED
from stratagate.cli.formatting import envelope, json_text
from stratagate.cli.ingest_job import (
    NO_MODELS_NOTICE,
    FileResult,
    job_files,
    model_options,
    run_job,
)
from stratagate.cli.progress import Progress
from stratagate.cli.render import WIDTH, clip, table
from stratagate.cli.streams import reserve_stdout
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
from stratagate.errors import InvalidInputError, ReadOnlyError, UnknownIdError
from stratagate.formats.input_files import read_input_file
from stratagate.memory import StrataGate
from stratagate.messages import MAX_POSITION
from stratagate.results import LogSummary


class NothingThereError(UnknownIdError):
    """A looking command named a database or namespace that holds nothing."""


def emit(lines: list[str]) -> None:
    for line in lines:
        print(line)


def emit_json(value: Any) -> None:
    """The command's result as one JSON document in the CLI's envelope."""
    print(json_text(envelope(value)))


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


def log_summary(database: str, namespace: str) -> LogSummary:
    """What the log holds of an existing namespace; ``NothingThereError`` unless it exists.

    The error names no other namespace: in a shared database those are other tenants' names.
    """
    with read_only_memory(database, namespace) as memory:
        return memory.log_summary()


@contextmanager
def read_only_memory(database: str, namespace: str) -> Iterator[StrataGate]:
    """The namespace opened read-only, for the commands that only read: they take no writer
    lease, so they neither wait for an ingest nor keep one from starting (a view is the inline
    memory's last snapshot plus the log after it); ``NothingThereError`` unless it exists."""
    require_database(database)
    with StrataGate.open(database, namespace, read_only=True) as memory:
        if not memory.log_summary().present:
            raise NothingThereError(
                f"unknown namespace {namespace!r} in {database} "
                "(`stratagate namespaces` lists the namespaces there)"
            )
        yield memory


@contextmanager
def existing_memory(args: argparse.Namespace) -> Iterator[StrataGate]:
    """The memory of an existing namespace, for the commands that append to its log (a search
    logs its batch, ``expand block`` its lift). Other processes (a server, an ingest) may write
    it at the same time: a lost race is decided again (``on_conflict="retry"``). Nobody's
    running jobs are recovered."""
    log_summary(args.database, args.namespace)
    with StrataGate.open(
        args.database, args.namespace, recover_on_open=False, on_conflict="retry"
    ) as memory:
        yield memory


# -- ingest ----------------------------------------------------------------------------------


def ingest(args: argparse.Namespace) -> int:
    """Append the turns of files not yet in their namespaces, several namespaces at once."""
    files = job_files(args.paths, args.namespace, thread_id=args.thread, limit=args.limit)
    options = {**model_options(args.models), "on_conflict": "retry"}  # a server may write too
    if args.block_turn_size is not None:
        options["block_turn_size"] = args.block_turn_size
    if args.ray_address is not None and args.runtime != "ray":
        raise InvalidInputError("--ray-address joins a Ray cluster: it needs --runtime ray")
    if args.runtime == "ray":
        options.update(
            runtime="ray",
            max_live_namespaces=max(args.parallel, 8),
            ray_address=args.ray_address,
            ray_log_level=args.ray_log_level,
        )
        reserve_stdout()  # Ray writes to fd 1, also after the result: never into the document
    namespaces = len({file.namespace for file in files})
    started = time.monotonic()
    total = sum(len(file.turns) for file in files)
    with Progress(total, sys.stderr, namespaces=namespaces) as progress:
        results = run_job(args.database, files, options, parallel=args.parallel, progress=progress)
    elapsed = time.monotonic() - started
    appended = sum(result.report.appended for result in results)
    skipped = sum(result.report.skipped for result in results)
    if args.models == "none":
        print(f"stratagate: {NO_MODELS_NOTICE}", file=sys.stderr)
    if args.json:
        emit_json(
            {
                "database": args.database,
                "runtime": args.runtime,
                "models": args.models,
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
    print(f"models    {args.models}")
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
    return table([*headers, "REVISION", "FILE"], rows, keep_end=True)


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
    if args.kind == "block":
        if args.read_only:
            raise ReadOnlyError("expand block appends the lift to the log: drop --read-only")
        with existing_memory(args) as memory:
            return _expand_block(memory, args)
    with read_only_memory(args.database, args.namespace) as memory:
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
    if args.since > MAX_POSITION:
        raise InvalidInputError(f"--since must be at most {MAX_POSITION}, got {args.since}")
    with read_only_memory(args.database, args.namespace) as memory:
        records = memory.history(args.since, limit=args.limit, type=args.type)
    if args.json:
        emit_json(records)
    elif records:
        emit(history_lines(records))
    else:
        print("no logged events match")
    return EXIT_OK


def verify(args: argparse.Namespace) -> int:
    """The hash chain (and the anchor, when given) and a full replay against every stored
    snapshot; 1 when anything fails."""
    anchor = None if args.anchor is None else _read_text(args.anchor, "anchor")
    if anchor is None:
        with read_only_memory(args.database, args.namespace) as memory:
            report = memory.verify()
    else:
        require_database(args.database)  # an emptied namespace must still fail its anchor
        with StrataGate.open(args.database, args.namespace, read_only=True) as memory:
            report = memory.verify(anchor)
    if args.json:
        emit_json(report)
    elif report.ok:
        print(f"ok ({report.events_checked} events, chain and replay verified)")
    elif report.first_bad_position is not None:
        print(f"FAILED at global position {report.first_bad_position}: {report.detail}")
    else:
        print(f"FAILED: {report.detail}")
    return EXIT_OK if report.ok else EXIT_VERIFY_FAILED


MAX_TEXT_BYTES = 1024 * 1024
"""An anchor is a few hundred bytes."""


def _read_text(path: str, what: str) -> str:
    data = read_input_file(path, f"{what} file", MAX_TEXT_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"cannot read the {what} file {path}: {exc}") from exc


def checkpoint(args: argparse.Namespace) -> int:
    """An anchor of the namespace's head, to stdout or a file (read-only: nothing appended)."""
    with read_only_memory(args.database, args.namespace) as memory:
        anchor = memory.checkpoint()
    text = anchor.model_dump_json()
    if args.output is not None:
        try:
            Path(args.output).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot write the anchor to {args.output}: {exc}") from exc
    if args.json:
        emit_json(anchor)
    elif args.output is None:
        print(text)  # the anchor itself, as `verify --anchor` reads it
    else:
        print(f"anchor of {args.namespace!r} at global position {anchor.position} -> {args.output}")
    return EXIT_OK


def replay(args: argparse.Namespace) -> int:
    """What the memory knew as of a global position."""
    with read_only_memory(args.database, args.namespace) as memory:
        head = memory.log_summary().log_position
        if args.until > head:
            raise InvalidInputError(f"position {args.until} is past the end of the log ({head})")
        revision = sum(1 for r in memory.history() if r.position <= args.until)
        view = memory.state_at(args.until)
    stats = view.stats(revision)
    blocks, events, elements = view.list_blocks(), view.list_events(), view.list_elements()
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
    """Counts of everything in the namespace (what ``StrataGate.stats()`` returns)."""
    with read_only_memory(args.database, args.namespace) as memory:
        counts = memory.stats()
    _show(args, counts, stats_lines(counts))
    return EXIT_OK


def namespaces(args: argparse.Namespace) -> int:
    """Every namespace in the database with its revision."""
    require_database(args.database)
    found = [
        (summary.namespace, summary.revision, summary.last_position)
        for summary in StrataGate.list_namespaces(args.database)
    ]
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
    "checkpoint",
    "context",
    "existing_memory",
    "expand",
    "history",
    "ingest",
    "log_summary",
    "namespaces",
    "read_only_memory",
    "replay",
    "require_database",
    "search",
    "stats",
    "verify",
]
