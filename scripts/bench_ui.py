"""Benchmark the Memory UI's JSON API: latency of each kind of request at ``--events`` events.

Writes a LoCoMo-made log (turns, seals, extractions with cards; ``bench_replay``'s writer) into
one namespace of a fresh SQLite file, starts ``stratagate ui`` on it as a real server process
on a loopback port (rate limit off) and asks it over HTTP from this process, ``--requests``
times per kind after three untimed ones:

- ``overview`` (``/namespaces``), ``namespace``, ``events page`` and ``blocks page`` (random
  offsets), ``log page`` (random positions, 50 events);
- ``search events`` and ``search raw`` (words of the corpus; nothing is logged);
- ``state: slider`` — past positions moving forward in small steps, as dragging the slider
  does (each folds forward from the state before it) — and ``state: jump`` — random past
  positions (a fold from the start, or from a kept earlier state).

The first request (the server hydrating the namespace from the log) is reported apart, with the
server's resident memory at the end.

    python scripts/bench_ui.py [--events 20000] [--requests 100] [--out PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from bench_replay import NAMESPACE, write_log
from benchkit import print_table, rss_mb, summary_ms, write_report
from corpus import locomo_lines

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Client:
    """One keep-alive HTTP connection to the server."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def get(self, path: str) -> Any:
        self.connection.request("GET", f"/api/v1{path}")
        response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {body[:200]!r}")
        return orjson.loads(body)


def start_server(database: str, port: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "stratagate", "ui", "--database", database,
            "--port", str(port), "--rate-limit", "0"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("STRATAGATE_TOKEN", None)
    process = subprocess.Popen(argv, env=env, cwd=ROOT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"stratagate ui exited with {process.returncode}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process
        time.sleep(0.05)
    raise TimeoutError("stratagate ui did not start listening")


def timed(client: Client, paths: list[str]) -> list[float]:
    """Seconds per request (after three untimed ones)."""
    for path in paths[:3]:
        client.get(path)
    seconds = []
    for path in paths[3:]:
        start = time.perf_counter()
        client.get(path)
        seconds.append(time.perf_counter() - start)
    return seconds


def query_words(count: int) -> list[str]:
    words = sorted(
        {
            w.lower()
            for line in locomo_lines()[:2000]
            for w in re.findall(r"[A-Za-z]{6,}", line.text)
        }
    )
    random.Random(7).shuffle(words)
    return words[:count]


def kinds(
    head: int, counts: dict[str, int], requests: int
) -> dict[str, Callable[[random.Random], list[str]]]:
    """Each kind of request as a generator of ``requests + 3`` paths."""
    ns = f"/namespaces/{NAMESPACE}"
    n = requests + 3
    words = query_words(n)
    slider_start = head // 2
    step = max(1, (head - slider_start) // n)
    return {
        "overview": lambda r: ["/namespaces"] * n,
        "namespace": lambda r: [ns] * n,
        "events page": lambda r: [f"{ns}/events?offset={r.randrange(max(1, counts['events'] - 50))}&limit=50" for _ in range(n)],
        "blocks page": lambda r: [f"{ns}/blocks?offset={r.randrange(max(1, counts['blocks'] - 20))}&limit=20" for _ in range(n)],
        "log page": lambda r: [f"{ns}/log?after={r.randrange(head)}&limit=50" for _ in range(n)],
        "search events": lambda r: [f"{ns}/events?q={w}&limit=10" for w in words],
        "search raw": lambda r: [f"{ns}/sources?q={w}&limit=10" for w in words],
        "state: slider": lambda r: [f"{ns}/state?at={slider_start + i * step}&limit=20" for i in range(n)],
        "state: jump": lambda r: [f"{ns}/state?at={r.randrange(1, head)}&limit=20" for _ in range(max(8, n // 5))],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--out", default="bench_ui.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as folder:
        database = str(Path(folder) / "memory.db")
        wrote = write_log(database, args.events)
        port = free_port()
        server = start_server(database, port)
        try:
            client = Client(port)
            start = time.perf_counter()
            overview = client.get("/namespaces")["items"][0]
            first = time.perf_counter() - start
            head = overview["head"]
            rng = random.Random(11)
            rows = []
            for kind, make in kinds(head, overview, args.requests).items():
                rows.append({"request": kind, **summary_ms(timed(client, make(rng)))})
            server_mb = rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(30)
    print(
        f"{args.events:,} events (written in {wrote:.1f} s); first request (hydration) {first * 1000:,.0f} ms; server RSS {server_mb:,.0f} MiB"
    )
    print_table(rows, ["request", "p50_ms", "p95_ms", "mean_ms", "max_ms", "n"])
    path = write_report(
        "bench_ui", args.out,
        sizes={"events": args.events, "head": head, "blocks": overview["blocks"], "cards": overview["events"]},
        first_request_ms=first * 1000, server_rss_mb=server_mb, results=rows,
    )  # fmt: skip
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
