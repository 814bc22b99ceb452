"""Benchmark MCP tool-call latency: ``search_events`` and ``recall_context`` over stdio and
streamable HTTP, on a LoCoMo conversation.

One LoCoMo conversation (``--conversation``) is ingested with the offline models into a SQLite
file; then ``stratagate serve`` answers the conversation's questions (``--calls`` per tool,
after ``--warmup`` untimed ones) to the MCP SDK's real client: as its stdio subprocess, and as
an HTTP server on a loopback port (bearer token on, rate limit off). A call's latency is the
client's wall time for ``call_tool`` (request, tool, logged retrieval batch, JSON response); no
model is called. The server's CPU time per call (user + system, from /proc) is reported next to
it, and the same calls made in process through ``StrataGate`` give the protocol's overhead.

    python scripts/bench_mcp.py [--conversation conv-26] [--calls 200] [--out PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from benchkit import descendants, print_table, summary_ms, write_report
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from stratagate import StrataGate
from stratagate.formats.locomo import conversation_turns, default_data_dir, load_conversation

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("search_events", "recall_context")
TOKEN = "bench-token"
TARGET_HTTP_P50_MS = 10.0
OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}


def arguments(tool: str, question: str) -> dict[str, Any]:
    return {"query": question, "limit": 6} if tool == "search_events" else {"query": question}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed_calls(
    call: Callable[[str, dict[str, Any]], Awaitable[Any]],
    tool: str,
    questions: list[str],
    warmup: int,
) -> list[float]:
    asked = itertools.cycle(questions)
    for _ in range(warmup):
        await call(tool, arguments(tool, next(asked)))
    took = []
    for question in questions:
        started = time.perf_counter()
        await call(tool, arguments(tool, question))
        took.append(time.perf_counter() - started)
    return took


async def measure(client: Client, pid: int, transport: str, args: Any) -> list[dict[str, Any]]:
    sizes: list[int] = []

    async def call(tool: str, arguments: dict[str, Any]) -> None:
        result = await client.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content}")
        sizes.append(len(result.content[0].text))  # type: ignore[union-attr]

    rows = []
    for tool in TOOLS:
        sizes.clear()
        cpu_before = cpu_seconds(pid)
        took = await timed_calls(call, tool, args.questions, args.warmup)
        cpu = (cpu_seconds(pid) - cpu_before) / (len(took) + args.warmup)
        rows.append(
            {"transport": transport, "tool": tool, **summary_ms(took),
             "server_cpu_ms": cpu * 1000, "result_kb": statistics.fmean(sizes) / 1024}
        )  # fmt: skip
    return rows


def server_pid(parent: int) -> int:
    """The ``stratagate serve`` process started below ``parent``."""
    for pid in descendants(parent):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if b"serve" in cmdline.read():
                return pid
    raise RuntimeError("no stratagate serve process found")


def serve_argv(database: Path) -> list[str]:
    return [sys.executable, "-m", "stratagate", "serve", "--database", str(database)]


async def over_stdio(database: Path, args: Any) -> list[dict[str, Any]]:
    command, *argv = serve_argv(database)
    params = StdioServerParameters(
        command=command, args=argv, env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT)
    )
    async with Client(params) as client:
        return await measure(client, server_pid(os.getpid()), "stdio", args)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def over_http(database: Path, args: Any) -> list[dict[str, Any]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STRATAGATE_TOKEN": TOKEN}
    argv = [*serve_argv(database), "--transport", "http", "--port", str(port), "--rate-limit", "0"]
    server = subprocess.Popen(argv, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP server did not start") from None
                time.sleep(0.05)

        async def session() -> list[dict[str, Any]]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                return await measure(client, server.pid, "http", args)

        return anyio.run(session)
    finally:
        server.terminate()
        server.wait(30)


def in_process(database: Path, args: Any) -> list[dict[str, Any]]:
    """The same calls through ``StrataGate`` in this process (no protocol)."""
    rows = []
    with StrataGate.open(database, "default", **OFFLINE) as memory:
        calls: dict[str, Callable[[str], Any]] = {
            "search_events": lambda q: memory.search_events(q, limit=6),
            "recall_context": memory.recall_context,
        }
        for tool in TOOLS:
            search = calls[tool]

            async def call(tool: str, arguments: dict[str, Any], search: Any = search) -> None:
                search(arguments["query"])

            took = anyio.run(timed_calls, call, tool, args.questions, args.warmup)
            rows.append({"transport": "in-process", "tool": tool, **summary_ms(took)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="conv-26", help="a LoCoMo sample id")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per tool")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per tool first")
    parser.add_argument("--turns", type=int, default=None, help="ingest only the first N turns")
    parser.add_argument("--out", default="bench-results/bench_mcp.json")
    args = parser.parse_args()

    conversation = load_conversation(default_data_dir() / f"{args.conversation}.json")
    turns = conversation_turns(conversation)[: args.turns]
    asked = [qa.question for qa in conversation.qa]
    args.questions = list(itertools.islice(itertools.cycle(asked), args.calls))
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        database = Path(tmp) / "memory.db"
        started = time.monotonic()
        with StrataGate.open(database, "default", **OFFLINE) as memory:
            memory.append_turns(turns)
            events = len(memory.list_events())
        print(f"  ingested {len(turns)} turns ({events} events) in "
              f"{time.monotonic() - started:.1f} s", file=sys.stderr)  # fmt: skip
        rows = in_process(database, args)
        rows += anyio.run(over_stdio, database, args)
        rows += over_http(database, args)
    http_p50 = max(r["p50_ms"] for r in rows if r["transport"] == "http")
    print_table(
        rows,
        [
            "transport",
            "tool",
            "p50_ms",
            "p95_ms",
            "mean_ms",
            "max_ms",
            "server_cpu_ms",
            "result_kb",
        ],
    )
    print(f"HTTP p50 {http_p50:.2f} ms (target <= {TARGET_HTTP_P50_MS:.0f} ms)")
    out = write_report(
        "bench_mcp",
        args.out,
        sizes={
            "conversation": args.conversation, "turns": len(turns), "events": events,
            "calls": args.calls, "warmup": args.warmup,
        },
        results=rows,
        target={"http_p50_ms_max": TARGET_HTTP_P50_MS, "http_p50_ms": http_p50,
                "met": http_p50 <= TARGET_HTTP_P50_MS},
    )  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
