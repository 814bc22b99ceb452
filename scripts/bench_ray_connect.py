"""Benchmark how long a memory takes to open on Ray: a new local Ray against a prestarted one.

Each measurement runs in a fresh Python process (Ray is started or joined once per process),
on a SQLite file holding one small namespace, ``--repeat`` times:

- ``open + append``: ``StrataGate.open`` then one ``append_turn`` (the first call reaches the
  role actors), inline; on Ray starting its own local instance (``ray_address="local"``); and on
  Ray joining a cluster this script started before (``ray_address=<its address>``, what
  ``--ray-address`` gives the command line);
- ``mcp stdio connect``: the MCP SDK's client starting ``stratagate serve`` as its subprocess,
  until ``initialize`` and a ``list_tools`` answered, inline, on a new local Ray
  (``--ray-address local``) and on the prestarted cluster.

Times are wall seconds from the process's start (imports included: what a user waits for).
Prints medians and writes JSON to ``--out``.

    python scripts/bench_ray_connect.py [--repeat 3] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchkit import print_table, write_report

ROOT = Path(__file__).resolve().parents[1]
NAMESPACES = {"inline": "inline", "ray, new local": "ray-local", "ray, prestarted": "ray-pre"}
"""One namespace per runtime: a Ray actor may hold its namespace's lease after the memory
closed (until passivation), which an inline opener of that namespace would wait for."""

OPEN = """
import sys, time
start = time.perf_counter()
from stratagate import StrataGate
options = {} if sys.argv[2] == "inline" else {"runtime": "ray", "ray_address": sys.argv[2]}
with StrataGate.open(sys.argv[1], sys.argv[4], **options) as memory:
    memory.append_turn("a turn to reach the actors", "ok")
    print(time.perf_counter() - start)
"""

CONNECT = """
import os, sys, time
start = time.perf_counter()
import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

argv = ["-m", "stratagate", "serve", "--database", sys.argv[1], "--namespace", sys.argv[4]]
if sys.argv[2] != "inline":
    argv += ["--runtime", "ray", "--ray-address", sys.argv[2]]

async def connect():
    env = {**os.environ, "PYTHONPATH": sys.argv[3]}  # HOME too: Ray's token for joining
    server = StdioServerParameters(command=sys.executable, args=argv, env=env)
    async with Client(server) as client:
        await client.list_tools()
        print(time.perf_counter() - start)

anyio.run(connect)
"""


def timed(script: str, database: str, where: str, namespace: str) -> float:
    """Seconds the script reports, run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script, database, where, str(ROOT), namespace],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="bench-results/bench_ray_connect.json")
    args = parser.parse_args()

    import ray

    from stratagate import StrataGate

    runs: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ray-connect-") as tmp:
        database = str(Path(tmp) / "memory.db")
        for namespace in NAMESPACES.values():
            with StrataGate.open(database, namespace) as memory:
                memory.append_turn("set up", "ok")
        context = ray.init(
            address="local", num_cpus=2, include_dashboard=False, log_to_driver=False
        )
        prestarted = context.address_info["address"]
        try:
            for repeat in range(args.repeat):
                for step, script in (("open + append", OPEN), ("mcp stdio connect", CONNECT)):
                    for label, where in (
                        ("inline", "inline"),
                        ("ray, new local", "local"),
                        ("ray, prestarted", prestarted),
                    ):
                        seconds = timed(script, database, where, NAMESPACES[label])
                        runs.setdefault((step, label), []).append(seconds)
                print(f"  repeat {repeat + 1}/{args.repeat} done", file=sys.stderr)
        finally:
            ray.shutdown()
    rows: list[dict[str, Any]] = [
        {
            "step": step,
            "runtime": label,
            "median_s": statistics.median(values),
            "runs_s": ", ".join(f"{v:.2f}" for v in values),
        }
        for (step, label), values in runs.items()
    ]
    out = write_report("bench_ray_connect", args.out, sizes={"repeat": args.repeat}, results=rows)
    print_table(rows, ["step", "runtime", "median_s", "runs_s"])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
