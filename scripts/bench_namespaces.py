"""Benchmark many namespaces ingesting at once: through Ray, and the same turns in one process.

For each N of ``--namespaces`` the same work runs twice, on a fresh database each time:

* **ray** — a fresh local Ray (``num_cpus=2``); ``--workers`` driver threads each take
  namespaces off a queue, open them with ``runtime="ray"`` (``max_live_namespaces=--max-live``;
  the directory's warm pool of hosts, one per CPU, is the default), append the namespace's
  ``--turns`` LoCoMo turns in one ``append_turns(..., wait=False)`` call (it returns once they
  are durable; sealing, extraction and projection run in the namespace's host), ``drain()``
  and close. A
  sampler adds up the resident memory of the driver and every process below it (Ray's raylet,
  GCS and the actors) once a second;
* **inline** — the same loop in this one process with ``runtime="inline"``.

Reports both aggregate turns/s and their ratio, the CPU-seconds per turn of the whole process
tree (driver, Ray's processes, every actor; after the warm-up), the directory's activation latency (assigning
a namespace to a pooled host and hydrating it), peak resident memory of the whole Ray
cluster, the hosts it started and its passivations, and checks that the log holds every turn
of every namespace (and, for a sample, that ``verify()`` passes). ``--max-seconds`` stops
starting namespaces after that long (a large N then reports how many it completed).

    python scripts/bench_namespaces.py [--namespaces 10,100] [--turns 24] [--max-live 3]
        [--database sqlite|postgresql://...] [--runtimes ray,inline]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from bench_ingest import locomo_turns
from bench_ray_plain import tree_sampler
from benchkit import (
    fresh_database,
    installed_bytecode,
    local_ray,
    print_table,
    sampling,
    tree_rss_mb,
    write_report,
)
from sqlalchemy import text

from stratagate import StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.formats.turn_files import FileTurn
from stratagate.store.sql import open_event_store


@contextmanager
def memory_sampler(every: float = 1.0) -> Iterator[dict[str, Any]]:
    """Samples the process tree's resident memory until the block ends: peak MiB and processes."""
    peak: dict[str, Any] = {"rss_mb": 0.0, "processes": 0, "series": []}
    start = time.perf_counter()

    def look() -> None:
        total, processes = tree_rss_mb()
        peak["rss_mb"] = max(peak["rss_mb"], total)
        peak["processes"] = max(peak["processes"], processes)
        peak["series"].append((round(time.perf_counter() - start, 1), round(total), processes))

    with sampling(look, every):
        yield peak


def mean_by_tenth(series: list[tuple[float, int, int]]) -> list[int]:
    """Mean sampled total RSS (MiB) in each tenth of the run: does memory keep rising?"""
    tenths = [series[i * len(series) // 10 : (i + 1) * len(series) // 10] for i in range(10)]
    return [round(statistics.fmean(s[1] for s in part)) for part in tenths if part]


def turn_rows(turns: list[FileTurn], index: int, count: int) -> list[dict[str, Any]]:
    """Namespace ``index``'s turns: ``count`` consecutive LoCoMo turns, as append_turns takes."""
    offset = index * count % max(1, len(turns) - count)
    return [
        {"user": t.user, "assistant": t.assistant, **t.append_kwargs()}
        for t in turns[offset : offset + count]
    ]


def ingest(
    n: int,
    runtime: str,
    database: str,
    args: argparse.Namespace,
    turns: list[FileTurn],
) -> tuple[list[float], float, dict[str, Any]]:
    """Every namespace through ``runtime``: per-namespace seconds, the elapsed time and the
    CPU the process tree spent on them (``tree_sampler``: after the warm-up)."""
    options: dict[str, Any] = {
        "runtime": runtime,
        "block_turn_size": args.block_turn_size,
        **model_options(args.models),
    }
    if runtime == "ray":
        options |= {"max_live_namespaces": args.max_live}
    warm = time.perf_counter()  # start the pool (Ray) and load the imports before timing
    with StrataGate.open(database, "warm-up", **options) as memory:
        memory.append_turns(turn_rows(turns, 0, args.block_turn_size * 2))
    print(f"  {runtime}: warmed up in {time.perf_counter() - warm:.1f} s", file=sys.stderr)
    done, lock = [0], threading.Lock()
    start = time.perf_counter()
    deadline = start + args.max_seconds if args.max_seconds else None

    def one(index: int) -> float | None:
        began = time.perf_counter()
        if deadline is not None and began > deadline:
            return None  # out of time: this namespace is not started
        memory = StrataGate.open(database, f"ns-{index:05d}", **options)
        try:
            memory.append_turns(turn_rows(turns, index, args.turns), wait=False)
            memory.drain()
            with lock:
                done[0] += 1
                if done[0] % max(1, n // 10) == 0:
                    print(f"  {runtime} N={n}: {done[0]}/{n} namespaces", file=sys.stderr)
        finally:
            memory.close()
        return time.perf_counter() - began

    with tree_sampler(every=1.0) as cpu, ThreadPoolExecutor(args.workers) as pool:
        per_namespace = [t for t in pool.map(one, range(n)) if t is not None]
    return per_namespace, time.perf_counter() - start, cpu


def check_log(database: str, completed: int, runtime: str, args: argparse.Namespace) -> None:
    """Every turn of every completed namespace is in the log; a sample of them verifies (through
    the runtime that wrote them: under Ray the directory still holds their leases)."""
    with open_event_store(database) as store, store.engine.connect() as conn:
        stored = tuple(
            conn.execute(
                text(
                    "SELECT count(*), count(DISTINCT namespace) FROM stratagate_events "
                    "WHERE event_type = 'TurnAppended' AND namespace LIKE 'ns-%'"
                )
            ).one()
        )
        namespaces = [name for name in store.namespaces() if name.startswith("ns-")]
    expected = (completed * args.turns, completed)
    assert stored == expected, f"the log holds {stored}, expected {expected}"
    for name in random.Random(7).sample(namespaces, min(3, len(namespaces))):
        with StrataGate.open(database, name, runtime=runtime) as memory:
            assert memory.verify().ok, f"{name} does not verify"


def run(n: int, runtime: str, args: argparse.Namespace, turns: list[FileTurn]) -> dict[str, Any]:
    """N namespaces through one runtime and a fresh database; the figures of that run."""
    stats: dict[str, Any] = {}
    with fresh_database(args.database) as database, local_ray(runtime == "ray"):
        with memory_sampler() as peak:
            per_namespace, elapsed, cpu = ingest(n, runtime, database, args, turns)
        if runtime == "ray":  # asked once, after the run (not once per namespace inside it)
            import ray

            from stratagate.actors.ray_runtime import directory

            stats = ray.get(directory(args.max_live).stats.remote())
        completed = len(per_namespace)
        check_log(database, completed, runtime, args)
    series = peak["series"]
    activations = stats.get("activation_ms") or []
    return {
        "runtime": runtime,
        "namespaces": n,
        "completed": completed,
        "turns": completed * args.turns,
        "elapsed_s": elapsed,
        "turns_per_s": completed * args.turns / elapsed,
        "namespace_p50_s": statistics.median(per_namespace) if per_namespace else 0.0,
        "activation_p50_ms": statistics.median(activations) if activations else None,
        "activation_p95_ms": (
            sorted(activations)[int(0.95 * (len(activations) - 1))] if activations else None
        ),
        "cpu_ms_per_turn": cpu["cpu_s"] * 1000 / max(1, completed * args.turns),
        "cpu_s_by_process": cpu["cpu_s_by_process"],
        "peak_rss_mb": peak["rss_mb"],
        "peak_processes": peak["processes"],
        "rss_mean_by_tenth_mb": mean_by_tenth(series),
        "actors_started": stats.get("actors_started"),
        "passivations": stats.get("passivations"),
        "all_turns_in_log": True,
        "rss_series": series,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", default="10,100", help="values of N")
    parser.add_argument("--turns", type=int, default=24, help="turns per namespace")
    parser.add_argument("--block-turn-size", type=int, default=12)
    parser.add_argument("--max-live", type=int, default=3, help="max_live_namespaces (Ray)")
    parser.add_argument("--workers", type=int, default=3, help="driver threads")
    parser.add_argument("--models", choices=("offline", "none"), default="offline")
    parser.add_argument("--runtimes", default="ray,inline")
    parser.add_argument("--database", default="sqlite", help="sqlite, or a PostgreSQL URL")
    parser.add_argument("--max-seconds", type=float, default=0, help="stop starting namespaces")
    parser.add_argument("--out", default="bench-results/bench_namespaces.json")
    args = parser.parse_args()

    bytecode = installed_bytecode()
    turns = locomo_turns(5)
    columns = ["runtime", "namespaces", "completed", "turns", "elapsed_s", "turns_per_s",
               "cpu_ms_per_turn", "activation_p50_ms", "peak_rss_mb", "peak_processes", "actors_started",
               "passivations"]  # fmt: skip
    rows: list[dict[str, Any]] = []
    ratios = []
    for n in (int(value) for value in args.namespaces.split(",")):
        by_runtime = {}
        for runtime in args.runtimes.split(","):
            by_runtime[runtime] = run(n, runtime, args, turns)
            rows.append(by_runtime[runtime])
            print_table(rows[-1:], columns)
        if {"ray", "inline"} <= set(by_runtime):
            ray_row, inline_row = by_runtime["ray"], by_runtime["inline"]
            ratio = ray_row["turns_per_s"] / inline_row["turns_per_s"]
            cpu = ray_row["cpu_ms_per_turn"] / max(1e-9, inline_row["cpu_ms_per_turn"])
            ratios.append({"namespaces": n, "ray_over_inline": ratio, "cpu_ray_over_inline": cpu})
            print(f"N={n}: ray / inline = {ratio:.2f}x, CPU per turn {cpu:.2f}x")
    database_kind = "sqlite" if args.database == "sqlite" else "postgresql"
    out = write_report(
        "bench_namespaces",
        args.out,
        sizes={
            "turns_per_namespace": args.turns,
            "block_turn_size": args.block_turn_size,
            "max_live_namespaces": args.max_live,
            "workers": args.workers,
            "models": args.models,
            "database": database_kind,
            "max_seconds": args.max_seconds,
            "ray_num_cpus": 2,
        },
        bytecode=bytecode,
        results=rows,
        ratios=ratios,
    )
    print()
    print_table(rows, columns)
    for ratio in ratios:
        print(
            f"N={ratio['namespaces']}: ray / inline = {ratio['ray_over_inline']:.2f}x, "
            f"CPU per turn {ratio['cpu_ray_over_inline']:.2f}x"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
