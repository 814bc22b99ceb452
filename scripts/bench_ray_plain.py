"""Benchmark the plain Ray path a platform takes first, against inline, interleaved in one run.

Each round runs both runtimes, inline then Ray (the reverse on even rounds), each in two passes
on a fresh SQLite file each: ``--workers`` driver threads take ``--namespaces`` namespaces off a
queue, open each with the runtime's defaults only (for Ray: ``runtime="ray"``, no prestart, no
bound, no warm-up), append its ``--turns`` LoCoMo turns one ``append_turn(..., wait=False)`` at
a time, and close it. Under Ray a fresh local Ray (``num_cpus=2``) is running and nothing of
stratagate: the first pass (``cold``) starts the directory and its pool of hosts; the second
(``warm``) does the same work on a new file in the same cluster (for inline: the same process).
A sampler reads every process of the tree (the driver and, under Ray, the raylet, GCS and every
worker) twice a second: peak resident memory of the whole tree, and CPU-seconds (user +
system, every process, those gone before the end counted up to their last sample) spent during
the pass, by process. Reports turns/s, CPU-milliseconds per turn and peak RSS per runtime and
pass, the medians over rounds and the Ray / inline ratios, and checks that every log holds the
same work (every turn, every block sealed, every extraction and projection done).

    python scripts/bench_ray_plain.py [--namespaces 40] [--turns 24] [--workers 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from bench_ingest import locomo_turns
from benchkit import (
    descendants,
    fresh_database,
    installed_bytecode,
    local_ray,
    print_table,
    rss_mb,
    sampling,
    write_report,
)
from sqlalchemy import text

from stratagate import StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.formats.turn_files import FileTurn
from stratagate.store.sql import open_event_store

TICKS = os.sysconf("SC_CLK_TCK")
PASSES = ("cold", "warm")
WORK_TYPES = ("TurnAppended", "BlockSealed", "ExtractionSucceeded", "ProjectionCompleted")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU-seconds a process has used so far (``None`` when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def process_name(pid: int) -> str:
    """What a process is: Ray's title for its workers (``ray::HostActor``), else its program."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return "?"
    first = words[0].decode(errors="replace").split()[0] if words and words[0] else "?"
    if first.startswith("ray::"):
        return first
    program = os.path.basename(first)
    if program.startswith("python") and len(words) > 1:
        return f"python {os.path.basename(words[1].decode(errors='replace'))}"
    return program


@contextmanager
def tree_sampler(every: float = 0.5) -> Iterator[dict[str, Any]]:
    """Samples this process and all below it until the block ends: peak total RSS (MiB), peak
    process count, and the CPU-seconds the tree spent inside the block."""
    root = os.getpid()
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    names: dict[int, str] = {}
    seen: dict[str, Any] = {"rss_mb": 0.0, "processes": 0}

    def look() -> None:
        pids = [root, *descendants(root)]
        initial = not first  # the first look: what the tree had spent before the block
        for pid in pids:
            used = cpu_seconds(pid)
            if used is None:
                continue
            first.setdefault(pid, used if initial else 0.0)
            last[pid] = used
            names[pid] = process_name(pid)
        seen["rss_mb"] = max(seen["rss_mb"], sum(rss_mb(pid) for pid in pids))
        seen["processes"] = max(seen["processes"], len(pids))

    with sampling(look, every):
        yield seen
    seen["cpu_s"] = sum(last[pid] - first[pid] for pid in last)
    seen["cpu_processes"] = len(last)
    by_name: dict[str, float] = {}
    for pid, used in last.items():
        by_name[names[pid]] = by_name.get(names[pid], 0.0) + used - first[pid]
    seen["cpu_s_by_process"] = {k: round(v, 2) for k, v in sorted(by_name.items())}


def work_done(database: str) -> dict[str, int]:
    """How many events of each kind of work the namespaces' logs hold."""
    with open_event_store(database) as store, store.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT event_type, count(*) FROM stratagate_events "
                "WHERE namespace LIKE 'ns-%' GROUP BY event_type"
            )
        ).all()
    counts = {str(kind): int(n) for kind, n in rows}
    return {kind: counts.get(kind, 0) for kind in WORK_TYPES}


def one_pass(
    runtime: str, args: argparse.Namespace, turns: list[FileTurn], label: str
) -> dict[str, Any]:
    """All namespaces through ``runtime`` on a fresh database: the figures of that pass."""
    options: dict[str, Any] = {
        "runtime": runtime,
        "block_turn_size": args.block_turn_size,
        **model_options(args.models),
    }
    with fresh_database("sqlite") as database:

        def one(index: int) -> None:
            offset = index * args.turns % max(1, len(turns) - args.turns)
            with StrataGate.open(database, f"ns-{index:04d}", **options) as memory:
                for turn in turns[offset : offset + args.turns]:
                    memory.append_turn(
                        turn.user, turn.assistant, wait=False, **turn.append_kwargs()
                    )

        with tree_sampler() as seen:
            start = time.perf_counter()
            with ThreadPoolExecutor(args.workers) as pool:
                list(pool.map(one, range(args.namespaces)))
            elapsed = time.perf_counter() - start
        done = work_done(database)
    total = args.namespaces * args.turns
    assert done["TurnAppended"] == total, f"{runtime}: the log holds {done}, expected {total}"
    return {
        "runtime": runtime,
        "pass": label,
        "turns": total,
        "elapsed_s": elapsed,
        "turns_per_s": total / elapsed,
        "cpu_s": seen["cpu_s"],
        "cpu_ms_per_turn": seen["cpu_s"] * 1000 / total,
        "peak_rss_mb": seen["rss_mb"],
        "peak_processes": seen["processes"],
        "cpu_s_by_process": seen["cpu_s_by_process"],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **{f"log_{kind}": count for kind, count in done.items()},
    }


def one_run(runtime: str, args: argparse.Namespace, turns: list[FileTurn]) -> list[dict[str, Any]]:
    """The passes of one runtime: ``cold`` (under Ray the directory and its pool start inside
    it), then ``warm`` (the same work on a fresh database, in the same Ray or process)."""
    with local_ray(runtime == "ray"):
        return [one_pass(runtime, args, turns, label) for label in PASSES[: args.passes]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=int, default=40)
    parser.add_argument("--turns", type=int, default=24, help="turns per namespace")
    parser.add_argument("--block-turn-size", type=int, default=12)
    parser.add_argument("--workers", type=int, default=8, help="driver threads")
    parser.add_argument("--rounds", type=int, default=3, help="inline/Ray pairs, interleaved")
    parser.add_argument("--runtimes", default="inline,ray", help="which, in this order")
    parser.add_argument("--passes", type=int, choices=(1, 2), default=2, help="cold, warm")
    parser.add_argument("--models", choices=("offline", "none"), default="offline")
    parser.add_argument("--out", default="bench-results/bench_ray_plain.json")
    args = parser.parse_args()

    bytecode = installed_bytecode()
    turns = locomo_turns(5)
    with StrataGate.in_memory("imports", **model_options(args.models)) as memory:
        memory.append_turn("load the models' imports", "once, before any timing")
    columns = ["round", "runtime", "pass", "turns", "elapsed_s", "turns_per_s", "cpu_ms_per_turn",
               "peak_rss_mb", "peak_processes", "log_BlockSealed", "log_ExtractionSucceeded",
               "log_ProjectionCompleted"]  # fmt: skip
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    for index in range(args.rounds):
        runtimes = args.runtimes.split(",")
        order = runtimes if index % 2 == 0 else runtimes[::-1]
        for runtime in order:
            for figures in one_run(runtime, args, turns):
                row = {"round": index + 1, **figures}
                rows.append(row)
                print_table([row], columns)
                print(f"  CPU-seconds by process: {row['cpu_s_by_process']}")
                sys.stdout.flush()
    medians: dict[str, dict[str, dict[str, float]]] = {}
    for runtime in sorted({row["runtime"] for row in rows}):
        for label in PASSES[: args.passes]:
            mine = [row for row in rows if (row["runtime"], row["pass"]) == (runtime, label)]
            medians.setdefault(runtime, {})[label] = {
                key: statistics.median(row[key] for row in mine)
                for key in ("turns_per_s", "cpu_ms_per_turn", "peak_rss_mb", "elapsed_s")
            }
    ratios = (
        {
            label: {
                "throughput_ray_over_inline": medians["ray"][label]["turns_per_s"]
                / medians["inline"][label]["turns_per_s"],
                "cpu_per_turn_ray_over_inline": medians["ray"][label]["cpu_ms_per_turn"]
                / medians["inline"][label]["cpu_ms_per_turn"],
            }
            for label in PASSES[: args.passes]
        }
        if len(medians) == 2
        else {}
    )
    same_work = all(
        row[f"log_{kind}"] == rows[0][f"log_{kind}"] for row in rows for kind in WORK_TYPES
    )
    out = write_report(
        "bench_ray_plain",
        args.out,
        sizes={
            "namespaces": args.namespaces,
            "turns_per_namespace": args.turns,
            "block_turn_size": args.block_turn_size,
            "workers": args.workers,
            "rounds": args.rounds,
            "passes": list(PASSES[: args.passes]),
            "models": args.models,
            "database": "sqlite",
            "ray_num_cpus": 2,
        },
        bytecode=bytecode,
        load_average_before=[round(x, 2) for x in load_before],
        results=rows,
        medians=medians,
        ratios=ratios,
        same_work=same_work,
    )
    print()
    print_table(rows, columns)
    for runtime, by_pass in medians.items():
        for label, figures in by_pass.items():
            print(
                f"median {runtime} {label}: {figures['turns_per_s']:.0f} turns/s, "
                f"{figures['cpu_ms_per_turn']:.2f} CPU-ms/turn, "
                f"{figures['peak_rss_mb']:.0f} MiB peak"
            )
    for label, ratio in ratios.items():
        print(
            f"ray / inline, {label}: throughput {ratio['throughput_ray_over_inline']:.2f}x, "
            f"CPU per turn {ratio['cpu_per_turn_ray_over_inline']:.2f}x"
        )
    print(f"same work: {same_work}")
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
