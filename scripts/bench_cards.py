"""Benchmark adding event cards to an in-memory namespace (no models): ``--cards`` calls of
``add_event`` one by one, and the same cards in one ``add_events`` call.

Each run is a fresh child process, so its peak resident memory (``VmHWM``) is that of one
namespace holding the cards; ``cpu_s`` is the CPU time the calls took (on a shared machine the
wall-clock ``total_s`` also counts the time other processes had the cores). ``search_cpu_s`` is
the CPU time of the first event search after the calls: the cards' search postings are built
there, on first read, so ``cpu_s + search_cpu_s`` is the whole cost of cards that get searched.
``--before PATH`` runs the same children against another checkout
(``PYTHONPATH=PATH``), interleaved with this one, for a before/after comparison in one sitting.
The table shows medians of ``--repeat`` runs; ``--out`` gets the JSON report with every run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from benchkit import peak_rss_mb, print_table, summary_ms, write_report

from stratagate import StrataGate

MODES = ("add_event", "add_events")


def card(i: int, block_id: str) -> dict[str, Any]:
    return {
        "title": f"card {i}: the team chose option {i % 97} for service {i % 13}",
        "summary": f"decision {i} about service {i % 13}, recorded for the benchmark",
        "tags": [f"service{i % 13}"],
        "source_block_id": block_id,
    }


def seed(memory: StrataGate) -> str:
    """A sealed block for the cards to cite."""
    memory.append_turn("we compare options for every service", "noted")
    memory.append_turn("and record each decision", "ok")
    return memory.list_blocks()[0].id


def first_search(memory: StrataGate) -> float:
    """CPU seconds of one event search (the first builds the cards' postings)."""
    cpu = time.process_time()
    memory.search_events("which option did the team choose for service 7", limit=6)
    return time.process_time() - cpu


def one_by_one(count: int, window: int) -> dict[str, Any]:
    """``count`` calls of ``add_event``: the total, and the p50 of the first and last window."""
    with StrataGate.in_memory(block_turn_size=2) as memory:
        block_id = seed(memory)
        cards = [card(i, block_id) for i in range(count)]
        durations: list[float] = []
        cpu = time.process_time()
        for one in cards:
            started = time.perf_counter()
            memory.add_event(one)
            durations.append(time.perf_counter() - started)
        cpu = time.process_time() - cpu
        jobs = len(memory.list_element_projection_jobs())
        return {
            "total_s": sum(durations),
            "cpu_s": cpu,
            "search_cpu_s": first_search(memory),
            "first_p50_ms": summary_ms(durations[:window])["p50_ms"],
            "last_p50_ms": summary_ms(durations[-window:])["p50_ms"],
            "jobs": jobs,
            "peak_rss_mib": peak_rss_mb(),
        }


def one_batch(count: int) -> dict[str, Any]:
    """One ``add_events`` call with ``count`` cards."""
    with StrataGate.in_memory(block_turn_size=2) as memory:
        block_id = seed(memory)
        cards = [card(i, block_id) for i in range(count)]
        started, cpu = time.perf_counter(), time.process_time()
        memory.add_events(cards)
        total, cpu = time.perf_counter() - started, time.process_time() - cpu
        jobs = len(memory.list_element_projection_jobs())
        search = first_search(memory)
        return {
            "total_s": total,
            "cpu_s": cpu,
            "search_cpu_s": search,
            "jobs": jobs,
            "peak_rss_mib": peak_rss_mb(),
        }


def child(mode: str, count: int, window: int, checkout: str | None) -> dict[str, Any]:
    """One run in a fresh process, against ``checkout`` (else this one)."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([checkout, env.get("PYTHONPATH", "")]).rstrip(":")
    command = [sys.executable, __file__, "--child", mode, "--cards", str(count)]
    command += ["--window", str(window)]
    done = subprocess.run(command, env=env, capture_output=True, check=True, text=True)
    result: dict[str, Any] = orjson.loads(done.stdout.splitlines()[-1])
    return result


def median_row(side: str, mode: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {"code": side, "calls": mode, "runs": len(runs)}
    for key in runs[0]:
        row[key] = statistics.median(run[key] for run in runs)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=1_000, help="calls per reported window")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", help="another checkout to compare with, interleaved")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--out", default="bench-results/bench_cards.json")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    window = min(args.window, args.cards)
    if args.child is not None:
        measure = one_by_one(args.cards, window) if args.child == "add_event" else None
        sys.stdout.write(orjson.dumps(measure or one_batch(args.cards)).decode() + "\n")
        return
    sides = {"after": None} if args.before is None else {"before": args.before, "after": None}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(args.repeat):
        for mode in args.modes:
            for side, checkout in sides.items():
                runs.setdefault((side, mode), []).append(child(mode, args.cards, window, checkout))
    rows = [median_row(side, mode, runs[side, mode]) for mode in args.modes for side in sides]
    columns = ["code", "calls", "runs", "total_s", "cpu_s", "search_cpu_s", "peak_rss_mib", "jobs"]
    print_table(rows, [*columns, "first_p50_ms", "last_p50_ms"])
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; wrote {args.out}")
    write_report(
        "bench_cards",
        args.out,
        cards=args.cards,
        before=str(Path(args.before).resolve()) if args.before else None,
        rows=rows,
        runs=[{"code": s, "calls": m, "runs": r} for (s, m), r in runs.items()],
    )


if __name__ == "__main__":
    main()
