"""Benchmark ingestion: the five LoCoMo conversations, inline, with or without models.

Every turn goes through ``StrataGate.append_turn`` (``wait=True``), so a turn's time includes
the sealing, extraction and element projection it triggers — or, with ``--batch N``, through
``append_turns`` N turns at a time (one call, one commit for the turns). ``--layout shared``
puts every conversation in one namespace; ``per-conversation`` gives each its own namespace
(one writer each, one after the other). ``--store durable`` is a SQLite file, ``memory`` the
plain-Python store of ``StrataGate.in_memory``. Reports turns/s over the whole run, per-turn
latency in the first and last 10% of turns (as history grows a turn's cost must stay flat), and
what the store did per turn: SQL statements and catch-up reads of the log. ``--models
offline`` (default) uses the bundled heuristics; ``none`` seals with deterministic views and
extracts nothing. ``--passes N`` ingests the conversations N times (each pass with its own
threads, receipt and message ids, 400 days later), to show a turn's cost over a longer
history; ``--snapshot-every N`` sets the read-model snapshots' spacing (0: none; by default
the library's: every 1,000 events on a file, none in memory). Each per-turn row prints p50, p95, p99 and max (the longest pause a caller
saw), and the longest a turn took of its thread's CPU (``max_cpu_ms``: on a loaded machine a
wall pause may be mostly waiting for a core); SQL statements per turn are the store's (list
operations for ``--store memory``). The garbage collector's figures: every collection's pause,
the full (generation 2) ones apart, and the objects it tracks after the run less those before
it, per 1,000 turns (what a full collection has to walk grows with them).

    python scripts/bench_ingest.py [--models offline|none] [--layout shared|per-conversation]
        [--store durable|memory] [--batch N] [--conversations 5] [--passes N]
        [--snapshot-every N] [--encryption on,off] [--gc-freeze] [--out PATH]

``--encryption on,off`` runs the whole ingest twice, content sealed (the default) and in clear
(``STRATAGATE_ENCRYPTION=off``), and reports encrypted / clear time: the cost of encryption.
``--gc-freeze`` calls ``gc.freeze()`` once each memory is open, so the collector's full
collections skip the objects setup made (imports, the store, the read models' tables).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchkit import (
    encryption_modes,
    peak_rss_mb,
    percentile,
    print_table,
    summary_ms,
    write_report,
)

from stratagate import StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.formats.locomo import default_data_dir
from stratagate.formats.turn_files import FileTurn, read_turn_file
from stratagate.store.keys import ENCRYPTION_ENV


def locomo_turns(conversations: int) -> list[FileTurn]:
    """The first ``conversations`` samples as ``stratagate ingest`` reads them (a thread each)."""
    return [turn for _, turns in locomo_conversations(conversations) for turn in turns]


def locomo_conversations(conversations: int) -> list[tuple[str, list[FileTurn]]]:
    """The first ``conversations`` samples, each with its name."""
    paths = sorted(default_data_dir().glob("*.json"))[:conversations]
    return [(path.stem, read_turn_file(path).turns) for path in paths]


PASS_SHIFT = timedelta(days=400)
"""How much later each further pass over the conversations happens."""


def passes(
    conversations: list[tuple[str, list[FileTurn]]], count: int
) -> list[tuple[str, list[FileTurn]]]:
    """Each conversation followed by ``count - 1`` copies of itself as new threads: ids
    suffixed ``~<pass>``, times shifted by ``PASS_SHIFT`` per pass."""
    return [
        (name, [again(turn, n) for n in range(count) for turn in turns])
        for name, turns in conversations
    ]


def again(turn: FileTurn, n: int) -> FileTurn:
    """``turn`` as pass ``n`` has it (pass 0: unchanged)."""
    if n == 0:
        return turn
    return dataclasses.replace(
        turn,
        receipt_id=f"{turn.receipt_id}~{n}",
        thread_id=None if turn.thread_id is None else f"{turn.thread_id}~{n}",
        created_at=_later(turn.created_at, n),
        user=_side_again(turn.user, n),
        assistant=_side_again(turn.assistant, n),
    )


def _later(value: Any, n: int) -> Any:
    return value + n * PASS_SHIFT if isinstance(value, datetime) else value


def _side_again(side: Any, n: int) -> Any:
    if isinstance(side, list):
        return [_side_again(item, n) for item in side]
    if not isinstance(side, dict):
        return side
    copy = dict(side)
    if copy.get("id"):
        copy["id"] = f"{copy['id']}~{n}"
    if "created_at" in copy:
        copy["created_at"] = _later(copy["created_at"], n)
    return copy


def chunks(turns: list[FileTurn], size: int) -> Iterator[list[FileTurn]]:
    for start in range(0, len(turns), size):
        yield turns[start : start + size]


def ingest_one(
    memory: StrataGate, turns: list[FileTurn], batch: int, took: list[float], cpu: list[float]
) -> None:
    """Append ``turns`` one call per turn, or ``batch`` turns per call (each turn of a batch
    is charged an equal share of the call); ``took`` gets each turn's wall time, ``cpu`` its
    thread's CPU time (on a shared machine the wall time is mostly waiting for a core)."""
    if batch <= 1:
        for turn in turns:
            began, began_cpu = time.perf_counter(), time.thread_time()
            memory.append_turn(turn.user, turn.assistant, **turn.append_kwargs())
            took.append(time.perf_counter() - began)
            cpu.append(time.thread_time() - began_cpu)
        return
    for part in chunks(turns, batch):
        rows = [{"user": t.user, "assistant": t.assistant, **t.append_kwargs()} for t in part]
        began, began_cpu = time.perf_counter(), time.thread_time()
        memory.append_turns(rows)
        took.extend([(time.perf_counter() - began) / len(part)] * len(part))
        cpu.extend([(time.thread_time() - began_cpu) / len(part)] * len(part))


def work_counts(memory: StrataGate) -> tuple[int, int]:
    """SQL statements the memory's store ran and the log reads its live state made."""
    runtime = getattr(memory, "_runtime", None)
    store = getattr(runtime, "store", None)
    statements = getattr(getattr(store, "counters", None), "statements", 0)
    live = getattr(runtime, "live", None)
    reads = live.counters.catch_up_reads if live is not None else 0
    return statements, reads


def settle(memory: StrataGate) -> None:
    """Wait for the background snapshot in flight (its state is not the memory's)."""
    live = getattr(getattr(memory, "_runtime", None), "live", None)
    if live is not None:
        live.snapshots.join()


class GcPauses:
    """The cyclic garbage collector's pauses while it is installed (``gc.callbacks``): a full
    collection walks every live object, so it is the usual cause of a turn's max."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self.full: list[float] = []
        """The pauses of full (generation 2) collections."""
        self._began = 0.0

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._tick)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._tick)

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append(time.perf_counter() - self._began)
            if info["generation"] == 2:
                self.full.append(self.pauses[-1])


@dataclass
class Run:
    """What one full ingest run measured."""

    elapsed: float = 0.0
    cpu: float = 0.0
    """CPU seconds of this process while ingesting (a shared machine stretches wall time)."""
    took: list[float] = field(default_factory=list)
    cpu_took: list[float] = field(default_factory=list)
    statements: int = 0
    reads: int = 0
    summary: dict[str, int] = field(
        default_factory=lambda: {"revision": 0, "blocks": 0, "events": 0, "elements": 0}
    )
    verified: bool = True
    gc_pauses: list[float] = field(default_factory=list)
    gc_full: list[float] = field(default_factory=list)
    tracked: int = 0
    """Objects the collector tracks after the run, less those it tracked before it (after
    a full collection each time; frozen ones are not counted): what the state keeps."""


def ingest_run(
    args: argparse.Namespace, conversations: list[tuple[str, list[FileTurn]]], encryption: str
) -> Run:
    """Ingest every conversation once, content encrypted (``on``) or in clear (``off``)."""
    os.environ[ENCRYPTION_ENV] = encryption
    options: dict[str, Any] = {
        "block_turn_size": args.block_turn_size,
        **model_options(args.models),
    }
    if args.snapshot_every is not None:
        options["snapshot_every"] = args.snapshot_every
    run = Run()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        database = os.path.join(tmp, "memory.db")
        for name, turns in conversations:
            if args.store == "memory":
                memory = StrataGate.in_memory(name, **options)
            else:
                memory = StrataGate.open(database, name, **options)
            with memory:
                if args.gc_freeze:  # what setup made is never garbage: out of the collector's walks
                    gc.collect()
                    gc.freeze()
                gc.collect()
                tracked = len(gc.get_objects())
                start, cpu = time.perf_counter(), time.process_time()
                with GcPauses() as collections:
                    ingest_one(memory, turns, args.batch, run.took, run.cpu_took)
                run.gc_pauses += collections.pauses
                run.gc_full += collections.full
                run.elapsed += time.perf_counter() - start
                run.cpu += time.process_time() - cpu
                memory.drain()
                settle(memory)
                gc.collect()
                run.tracked += len(gc.get_objects()) - tracked
                gc.unfreeze()
                counted = work_counts(memory)
                run.statements += counted[0]
                run.reads += counted[1]
                stats = memory.stats()
                for key in run.summary:
                    run.summary[key] += getattr(stats, key)
                run.verified = run.verified and memory.verify().ok
            print(f"  {name}: {len(turns):,} turns (encryption {encryption})", file=sys.stderr)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", choices=("offline", "none"), default="offline")
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--passes", type=int, default=1, help="times over the conversations")
    parser.add_argument(
        "--snapshot-every",
        type=int,
        default=None,
        help="0: no read-model snapshots (default: the library's, 1000, none in memory)",
    )
    parser.add_argument("--block-turn-size", type=int, default=12)
    parser.add_argument("--layout", choices=("shared", "per-conversation"), default="shared")
    parser.add_argument("--store", choices=("durable", "memory"), default="durable")
    parser.add_argument("--batch", type=int, default=1, help="turns per append_turns call")
    parser.add_argument(
        "--encryption",
        type=encryption_modes,
        default=["on"],
        help="on, off, or on,off: one run each, and the cost of encryption as a ratio",
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() once each memory is open: the collector skips what setup made",
    )
    parser.add_argument("--out", default="bench-results/bench_ingest.json")
    args = parser.parse_args()

    conversations = passes(locomo_conversations(args.conversations), args.passes)
    if args.layout == "shared":
        conversations = [("bench", [t for _, turns in conversations for t in turns])]
    turn_count = sum(len(turns) for _, turns in conversations)
    runs = {mode: ingest_run(args, conversations, mode) for mode in args.encryption}
    mode = args.encryption[0]
    run = runs[mode]
    took, elapsed, summary = run.took, run.elapsed, run.summary
    statements, reads, verified = run.statements, run.reads, run.verified

    tenth = max(1, len(took) // 10)
    parts = {"all": took, "first 10%": took[:tenth], "last 10%": took[-tenth:]}
    cpu_parts = {
        name: statistics.median(values) * 1e6
        for name, values in {
            "first 10%": run.cpu_took[:tenth],
            "last 10%": run.cpu_took[-tenth:],
        }.items()
    }
    rows = [
        {
            "turns": name,
            **summary_ms(values),
            "p99_ms": percentile(values, 99) * 1000,
            "turns_per_s": len(values) / sum(values),
        }
        for name, values in parts.items()
    ]
    first, last = rows[1], rows[2]
    ratios = {key: last[key] / first[key] for key in ("p50_ms", "p95_ms", "p99_ms", "mean_ms")}
    by_mode = {
        name: {
            "turns_per_s": turn_count / r.elapsed,
            "elapsed_s": r.elapsed,
            "cpu_s": r.cpu,
            "verified": r.verified,
        }
        for name, r in runs.items()
    }
    both = {"on", "off"} <= runs.keys()
    cost = runs["on"].elapsed / runs["off"].elapsed if both else None
    cpu_cost = runs["on"].cpu / runs["off"].cpu if both else None
    out = write_report(
        "bench_ingest",
        args.out,
        sizes={
            "turns": turn_count,
            "conversations": args.conversations,
            "passes": args.passes,
            "snapshot_every": args.snapshot_every,
            "block_turn_size": args.block_turn_size,
            "models": args.models,
            "layout": args.layout,
            "store": args.store,
            "batch": args.batch,
            "encryption": ",".join(args.encryption),
            "gc_freeze": args.gc_freeze,
        },
        turns_per_s=turn_count / elapsed,
        elapsed_s=elapsed,
        statements_per_turn=statements / turn_count,
        catch_up_reads_per_turn=reads / turn_count,
        results=rows,
        last_over_first=ratios,
        memory=summary,
        verified=verified,
        encryption=by_mode,
        encrypted_over_clear=cost,
        encrypted_over_clear_cpu=cpu_cost,
        peak_rss_mb=peak_rss_mb(),
        cpu_p50_us=cpu_parts,
        max_cpu_ms=max(run.cpu_took, default=0.0) * 1000,
        gc={
            "collections": len(run.gc_pauses),
            "total_s": sum(run.gc_pauses),
            "max_ms": max(run.gc_pauses, default=0.0) * 1000,
            "full_collections": len(run.gc_full),
            "max_full_ms": max(run.gc_full, default=0.0) * 1000,
            "tracked_per_1000_turns": run.tracked * 1000 / turn_count,
        },
    )
    print(
        f"{turn_count:,} turns in {elapsed:.1f} s: {turn_count / elapsed:.1f} turns/s, "
        f"CPU {run.cpu * 1e6 / turn_count:.0f} µs a turn "
        f"(models {args.models}, {args.layout}, {args.store}, batch {args.batch}, "
        f"passes {args.passes}, snapshot_every {args.snapshot_every}, encryption {mode}); "
        f"{statements / turn_count:.1f} SQL statements and {reads / turn_count:.2f} catch-up "
        f"reads per turn; log revision {summary['revision']:,}, {summary['blocks']} blocks, "
        f"{summary['events']} events, {summary['elements']} elements; "
        f"verify {'ok' if verified else 'FAILED'}"
    )
    print_table(
        rows, ["turns", "n", "p50_ms", "p95_ms", "p99_ms", "mean_ms", "max_ms", "turns_per_s"]
    )
    print(
        f"CPU per turn, p50: first 10% {cpu_parts['first 10%']:.0f} µs, last 10% "
        f"{cpu_parts['last 10%']:.0f} µs ({cpu_parts['last 10%'] / cpu_parts['first 10%']:.2f}x)"
    )
    print(
        "last 10% / first 10%: "
        + ", ".join(f"{key.removesuffix('_ms')} {value:.2f}x" for key, value in ratios.items())
    )
    if len(runs) > 1:
        print_table(
            [{"encryption": name, **values} for name, values in by_mode.items()],
            ["encryption", "turns_per_s", "elapsed_s", "cpu_s", "verified"],
        )
    if cost is not None and cpu_cost is not None:
        print(
            f"encrypted / clear ingest: wall {cost:.3f}x ({(cost - 1) * 100:+.1f}%), "
            f"CPU {cpu_cost:.3f}x ({(cpu_cost - 1) * 100:+.1f}%)"
        )
    print(
        f"median turn {statistics.median(took) * 1000:.3f} ms, p99 {rows[0]['p99_ms']:.3f} ms, "
        f"max pause {rows[0]['max_ms']:.1f} ms (CPU {max(run.cpu_took, default=0.0) * 1000:.1f} "
        f"ms); garbage collector: {len(run.gc_pauses)} collections, "
        f"{sum(run.gc_pauses) * 1000:.0f} ms in all, longest "
        f"{max(run.gc_pauses, default=0.0) * 1000:.1f} ms, {len(run.gc_full)} full, longest "
        f"{max(run.gc_full, default=0.0) * 1000:.1f} ms; {run.tracked * 1000 / turn_count:,.0f} "
        f"objects tracked per 1,000 turns; wrote {Path(out)}"
    )


if __name__ == "__main__":
    main()
