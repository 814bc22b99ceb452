"""Benchmark many namespaces ingesting at once through Ray, with passivation bounding memory.

For each N of ``--namespaces``: a fresh local Ray (``num_cpus=2``) and a fresh SQLite file;
``--workers`` driver threads each take namespaces off a queue, open them with
``runtime="ray"`` and ``max_live_namespaces=--max-live``, append ``--turns`` LoCoMo turns with
``wait=False`` (the call returns once the turn is durable; sealing, extraction and projection
run in the namespace's actors), ``drain()`` and close. A sampler adds up the resident memory of
the driver and every process below it (Ray's raylet, GCS and actor workers) once a second.
Reports aggregate turns/s, peak resident memory and process count (overall and in the first
and second half of the run, to show whether memory keeps growing), passivations, and checks that
the log holds every turn of every namespace. ``--max-seconds`` stops starting namespaces after
that long (a large N then reports how many it completed, at the same rate and memory).

    python scripts/bench_namespaces.py [--namespaces 10,100] [--turns 24] [--max-live 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import ray
from bench_ingest import locomo_turns
from benchkit import print_table, tree_rss_mb, write_report
from sqlalchemy import text

from stratagate import StrataGate
from stratagate.cli.ingest_job import model_options
from stratagate.formats.turn_files import FileTurn
from stratagate.store.sql import open_event_store


@contextmanager
def memory_sampler(every: float = 1.0) -> Iterator[dict[str, Any]]:
    """Samples the process tree's resident memory until the block ends: peak MiB and processes."""
    peak: dict[str, Any] = {"rss_mb": 0.0, "processes": 0, "series": []}
    stop = threading.Event()
    start = time.perf_counter()

    def sample() -> None:
        while not stop.is_set():
            total, processes = tree_rss_mb()
            peak["rss_mb"] = max(peak["rss_mb"], total)
            peak["processes"] = max(peak["processes"], processes)
            peak["series"].append((round(time.perf_counter() - start, 1), round(total), processes))
            stop.wait(every)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()


def mean_by_tenth(series: list[tuple[float, int, int]]) -> list[int]:
    """Mean sampled total RSS (MiB) in each tenth of the run: does memory keep rising?"""
    tenths = [series[i * len(series) // 10 : (i + 1) * len(series) // 10] for i in range(10)]
    return [round(statistics.fmean(s[1] for s in part)) for part in tenths if part]


def run(n: int, args: argparse.Namespace, turns: list[FileTurn]) -> dict[str, Any]:
    """N namespaces through a fresh Ray and a fresh database; the figures of that run."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace="stratagate")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ns-") as tmp:
            database = os.path.join(tmp, "memory.db")
            options = {
                "runtime": "ray",
                "max_live_namespaces": args.max_live,
                "block_turn_size": args.block_turn_size,
                **model_options(args.models),
            }
            done, lock = [0], threading.Lock()
            stats: dict[str, int] = {}

            def one(index: int) -> float | None:
                began = time.perf_counter()
                if deadline is not None and began > deadline:
                    return None  # out of time: this namespace is not started
                offset = index * args.turns % max(1, len(turns) - args.turns)
                memory = StrataGate.open(database, f"ns-{index:04d}", **options)
                try:
                    for turn in turns[offset : offset + args.turns]:
                        memory.append_turn(
                            turn.user, turn.assistant, **turn.append_kwargs(), wait=False
                        )
                    memory.drain()
                    with lock:
                        done[0] += 1
                        stats.update(memory._runtime.directory_stats())
                        if done[0] % max(1, n // 10) == 0:
                            print(f"  N={n}: {done[0]}/{n} namespaces", file=sys.stderr)
                finally:
                    memory.close()
                return time.perf_counter() - began

            with memory_sampler() as peak:
                start = time.perf_counter()
                deadline = start + args.max_seconds if args.max_seconds else None
                with ThreadPoolExecutor(args.workers) as pool:
                    per_namespace = [t for t in pool.map(one, range(n)) if t is not None]
                elapsed = time.perf_counter() - start
            with open_event_store(database) as store, store.engine.connect() as conn:
                stored = conn.execute(
                    text(
                        "SELECT count(*), count(DISTINCT namespace) FROM stratagate_events "
                        "WHERE event_type = 'TurnAppended'"
                    )
                ).one()
    finally:
        ray.shutdown()
    completed = len(per_namespace)
    total = completed * args.turns
    expected = (total, completed)
    assert tuple(stored) == expected, f"the log holds {tuple(stored)}, expected {expected}"
    series = peak["series"]
    half = len(series) // 2
    return {
        "namespaces": n,
        "completed": completed,
        "turns": total,
        "elapsed_s": elapsed,
        "turns_per_s": total / elapsed,
        "namespace_p50_s": statistics.median(per_namespace) if per_namespace else 0.0,
        "peak_rss_mb": peak["rss_mb"],
        "peak_processes": peak["processes"],
        "peak_rss_first_half_mb": max((s[1] for s in series[:half]), default=0),
        "peak_rss_second_half_mb": max((s[1] for s in series[half:]), default=0),
        "rss_mean_by_tenth_mb": mean_by_tenth(series),
        "passivations": stats.get("passivations", 0),
        "live_at_end": stats.get("live", 0),
        "all_turns_in_log": True,
        "rss_series": series,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", default="10,100", help="values of N")
    parser.add_argument("--turns", type=int, default=24, help="turns per namespace")
    parser.add_argument("--block-turn-size", type=int, default=12)
    parser.add_argument("--max-live", type=int, default=8, help="max_live_namespaces")
    parser.add_argument("--workers", type=int, default=8, help="driver threads")
    parser.add_argument("--models", choices=("offline", "none"), default="offline")
    parser.add_argument("--max-seconds", type=float, default=0, help="stop starting namespaces")
    parser.add_argument("--out", default="bench-results/bench_namespaces.json")
    args = parser.parse_args()

    turns = locomo_turns(5)
    rows = []
    for n in (int(value) for value in args.namespaces.split(",")):
        rows.append(run(n, args, turns))
        print_table(rows[-1:], list(rows[-1])[:9])
    out = write_report(
        "bench_namespaces",
        args.out,
        sizes={
            "turns_per_namespace": args.turns,
            "block_turn_size": args.block_turn_size,
            "max_live_namespaces": args.max_live,
            "workers": args.workers,
            "models": args.models,
            "max_seconds": args.max_seconds,
            "ray_num_cpus": 2,
        },
        results=rows,
    )
    print()
    print_table(
        rows,
        ["namespaces", "completed", "turns", "elapsed_s", "turns_per_s", "namespace_p50_s",
         "peak_rss_mb", "peak_rss_first_half_mb", "peak_rss_second_half_mb", "peak_processes",
         "passivations"],
    )  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
