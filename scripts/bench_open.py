"""Benchmark opening a memory for writing (and read-only) on a log of N events with a snapshot.

Issue 21 made a writable open walk the whole hash chain (a snapshot restores the read models
without folding the rows under it, so damage there was appended to). This measures what that
costs: for each ``--events`` size it writes a LoCoMo-made log (``bench_replay.write_log``) into
a fresh SQLite file, opens and closes it once (the close writes the snapshot an open hydrates
from), then times, in child processes running the code of each ``--code LABEL=DIR``
(``PYTHONPATH``), ``--repeat`` writable opens, read-only opens and the chain walk alone.

    python scripts/bench_open.py [--events 10000,100000] [--repeat 3]
        [--code before=/path/to/main --code after=.] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
from bench_replay import NAMESPACE, write_log
from benchkit import print_table, write_report

from stratagate import StrataGate

CHILD = """
import gc, sys, time, orjson
from stratagate import StrataGate
from stratagate.store.sql import open_event_store
database, namespace, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
def timed(action):
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - start, time.process_time() - cpu
def walk():
    with open_event_store(database, create=False, read_only=True) as store:
        assert store.find_fault(namespace) is None
out = {"open": [], "read_only": [], "walk": []}
for _ in range(repeat):
    memory = None
    def open_writable():
        global memory
        memory = StrataGate.open(database, namespace)
    out["open"].append(timed(open_writable))
    memory.close()
    def open_read_only():
        StrataGate.open(database, namespace, read_only=True).close()
    out["read_only"].append(timed(open_read_only))
    out["walk"].append(timed(walk))
print(orjson.dumps(out).decode())
"""


def measure(code: str, database: str, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(code).resolve())}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, database, NAMESPACE, str(repeat)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result


def best(pairs: list[list[float]]) -> tuple[float, float]:
    """The fastest run's wall and CPU seconds (the least disturbed by other load)."""
    wall, cpu = min(pairs, key=lambda pair: pair[0])
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", action="append", default=None, metavar="LABEL=DIR")
    parser.add_argument("--out", default="bench_open.json")
    args = parser.parse_args()
    codes = [item.split("=", 1) for item in (args.code or ["after=."])]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as root:
        for events in (int(n) for n in args.events.split(",")):
            database = str(Path(root) / f"open-{events}.db")
            written = write_log(database, events)
            StrataGate.open(database, NAMESPACE).close()  # the snapshot an open hydrates from
            print(f"{events} events written in {written:.1f} s", file=sys.stderr)
            for label, code in codes:
                timings = measure(code, database, args.repeat)
                open_wall, open_cpu = best(timings["open"])
                ro_wall, _ = best(timings["read_only"])
                walk_wall, _ = best(timings["walk"])
                rows.append(
                    {
                        "events": events,
                        "code": label,
                        "open_ms": round(open_wall * 1000, 1),
                        "open_cpu_ms": round(open_cpu * 1000, 1),
                        "read_only_ms": round(ro_wall * 1000, 1),
                        "chain_walk_ms": round(walk_wall * 1000, 1),
                    }
                )
    print_table(rows, ["events", "code", "open_ms", "open_cpu_ms", "read_only_ms", "chain_walk_ms"])
    path = write_report("bench_open", args.out, rows=rows, repeat=args.repeat)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
