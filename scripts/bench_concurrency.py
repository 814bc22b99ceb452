"""Benchmark several processes appending to one namespace at once (SQLite file, PostgreSQL).

For each backend of ``--backends`` and each P of ``--processes``, on a fresh database: P worker
processes each open the namespace (``on_conflict="retry"``, no models, ``--block`` turns per
block), wait for a common start signal, and append ``--turns`` turns to a thread of their own
one ``append_turn`` at a time, timing each call and counting the decisions made again after a
conflict during it (a lost race with another writer: the turn's own append, or a seal it set
off). Then the log is checked: every turn of every worker exactly once (receipt ids), and
``verify()``.

Reports aggregate turns/s (all turns over the wall time from the start signal to the last
worker's end) and its ratio to one process, retries per turn (mean, p99 and max over turns),
p50/p99 append latency, and what was lost or doubled (0 and 0).

    python scripts/bench_concurrency.py [--processes 1,2,4,8] [--backends sqlite,postgres]
        [--turns 200] [--block 12] [--out bench-results/concurrency.json]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
from benchkit import fresh_database, percentile, print_table, write_report

from stratagate import StrataGate
from stratagate.actors import pipeline

PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
NAMESPACE = "shared"


def worker(args: argparse.Namespace) -> None:
    """One writer: open, wait for ``go``, append, print one JSON line of timings."""
    memory = StrataGate.open(
        args.database, NAMESPACE, block_turn_size=args.block, on_conflict="retry"
    )
    print("ready", flush=True)
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.001)
    latencies: list[float] = []
    retries: list[int] = []
    began = time.time()
    for i in range(args.turns):
        before = sum(pipeline.RETRIES.values())
        start = time.perf_counter()
        memory.append_turn(
            f"{args.thread} turn {i}: we looked at option {i % 7}",
            f"noted {i}",
            thread_id=args.thread,
            receipt_id=f"{args.thread}-{i}",
        )
        latencies.append(time.perf_counter() - start)
        retries.append(sum(pipeline.RETRIES.values()) - before)
    ended = time.time()
    memory.close()
    print(
        orjson.dumps(
            {"began": began, "ended": ended, "latencies": latencies, "retries": retries}
        ).decode(),
        flush=True,
    )


def run(database: str, processes: int, turns: int, block: int) -> dict[str, Any]:
    """P workers on one fresh namespace; their merged figures and the log's check."""
    with tempfile.TemporaryDirectory(prefix="bench-conc-") as tmp:
        go = Path(tmp) / "go"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        argv = [sys.executable, __file__, "--worker", "--database", database, "--turns",
                str(turns), "--block", str(block), "--go", str(go)]  # fmt: skip
        children = [
            subprocess.Popen(
                [*argv, "--thread", f"p{k}"], stdout=subprocess.PIPE, text=True, env=env
            )
            for k in range(processes)
        ]
        for child in children:
            assert child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                raise SystemExit("a worker did not start")
        start = time.time()
        go.touch()
        reports = []
        for child in children:
            out, _ = child.communicate(timeout=3600)
            if child.returncode != 0:
                raise SystemExit(f"a worker failed with status {child.returncode}")
            reports.append(orjson.loads(out.strip().splitlines()[-1]))
    wall = max(r["ended"] for r in reports) - start
    latencies = [x for r in reports for x in r["latencies"]]
    retries = [x for r in reports for x in r["retries"]]
    with StrataGate.open(database, NAMESPACE, read_only=True) as memory:
        receipts = Counter(r.data["receipt_id"] for r in memory.history(type="TurnAppended"))
        ok = memory.verify().ok
    expected = {f"p{k}-{i}" for k in range(processes) for i in range(turns)}
    return {
        "processes": processes,
        "turns": len(latencies),
        "wall_s": round(wall, 3),
        "turns_per_s": len(latencies) / wall,
        "retries_per_turn": sum(retries) / len(retries),
        "retries_p99": percentile([float(r) for r in retries], 99),
        "retries_max": max(retries),
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "lost": len(expected - set(receipts)),
        "doubled": sum(1 for n in receipts.values() if n > 1),
        "verify": "ok" if ok else "FAILED",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", default="1,2,4,8")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("STRATAGATE_TEST_PG_URL", PG_DEFAULT)
    )
    parser.add_argument("--turns", type=int, default=200, help="turns per process")
    parser.add_argument("--block", type=int, default=12)
    parser.add_argument("--out", default="bench-results/concurrency.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--thread", help=argparse.SUPPRESS)
    parser.add_argument("--go", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    rows = []
    for backend in args.backends.split(","):
        kind = "sqlite" if backend == "sqlite" else args.postgres_url
        base: float | None = None
        for processes in (int(p) for p in args.processes.split(",")):
            with fresh_database(kind) as database:
                row = {"backend": backend, **run(database, processes, args.turns, args.block)}
            base = base or row["turns_per_s"]
            row["vs_1"] = row["turns_per_s"] / base
            rows.append(row)
            print(f"{backend} x{processes}: {row['turns_per_s']:.0f} turns/s", file=sys.stderr)
    print_table(rows, ["backend", "processes", "turns_per_s", "vs_1", "retries_per_turn",
                       "retries_p99", "retries_max", "p50_ms", "p99_ms", "lost", "doubled",
                       "verify"])  # fmt: skip
    path = write_report("bench_concurrency", args.out, turns_per_process=args.turns,
                        block=args.block, rows=rows)  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
