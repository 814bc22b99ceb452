"""Benchmark the Claude Code hook as the host runs it: wall time of one ``stratagate hook
claude-code`` process, from its start to its exit, per event.

For each ``--sizes`` (stored turns; a LoCoMo-made log of turns, sealed blocks and event cards,
see ``corpus.py``, in a SQLite file with its snapshot written, as a memory that was used and
closed leaves it) the script starts nothing itself: the first hook call starts the hook server,
as it would for a user (that cold call is reported on its own). Then, ``--runs`` times each:

- ``UserPromptSubmit``: a LoCoMo question as the prompt (``recall_context`` plus raw hits of
  other sessions, printed as ``additionalContext``);
- ``Stop`` with 1 and with 50 new turns appended to the session's transcript before the call
  (the turns are durable when it exits; the model work runs in the server, waited for only
  within ``--budget``).

Where the time goes is measured too: a hook call for an event the hook ignores (the hook
process alone), the interpreter's start, importing the memory, opening (restoring) the
namespace in a fresh process, one ``--no-server`` call (the hook doing everything in its own
process), and the hook server's resident memory.

    python scripts/bench_hooks.py [--sizes 1000,20000] [--runs 30] [--out PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from bench_replay import NAMESPACE, write_log
from benchkit import print_table, rss_mb, summary_ms, write_report
from corpus import LogWriter, locomo_lines

from stratagate import StrataGate
from stratagate.formats.locomo import default_data_dir, load_conversation

ROOT = Path(__file__).resolve().parents[1]
GOALS_MS = {"UserPromptSubmit": 400.0, "Stop (1 new turn)": 500.0}
SESSION = "bench-session"
OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}


def questions() -> Iterator[str]:
    """The LoCoMo questions, over and over."""
    found = [
        qa.question
        for path in sorted(default_data_dir().glob("*.json"))
        for qa in load_conversation(path).qa
    ]
    return itertools.cycle(found)


def build(database: Path, turns: int) -> dict[str, float]:
    """A namespace of ``turns`` stored turns whose model work is done (its event cards
    projected into elements) and whose snapshot is written, and what making it took."""
    events = sum(1 for _ in LogWriter(locomo_lines()).turns(turns))
    started = time.perf_counter()
    write_log(str(database), events)
    wrote = time.perf_counter() - started
    started = time.perf_counter()
    with StrataGate.open(database, NAMESPACE, **OFFLINE) as memory:  # closing: the snapshot
        assert memory.turn == turns, (memory.turn, turns)
        memory.resume_pending_work()
    return {"write_s": wrote, "settle_and_snapshot_s": time.perf_counter() - started}


class Hooks:
    """The host's side: an environment of its own and the hook command per event."""

    def __init__(self, root: Path, budget: float) -> None:
        self.root = root
        self.budget = budget
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "XDG_RUNTIME_DIR": str(root / "run"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data"),
        }
        self.env.pop("CLAUDE_PROJECT_DIR", None)

    def call(self, database: Path, event: dict[str, Any], *options: str) -> tuple[float, Any]:
        """Seconds from the hook process's start to its exit, and what it printed."""
        argv = [sys.executable, "-m", "stratagate", "hook", "claude-code"]
        argv += ["--database", str(database), "--namespace", NAMESPACE]
        argv += ["--budget", str(self.budget), *options]
        started = time.perf_counter()
        done = subprocess.run(
            argv, input=orjson.dumps(event), capture_output=True, env=self.env, timeout=600
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"hook failed ({done.returncode}): {done.stderr.decode()}")
        return elapsed, done.stdout

    def server_ms(self) -> dict[str, list[float]]:
        """The hook server's own handling time per event, from its log (``… Stop ns exit=0
        12.3 ms``): what is left of a call's time is the hook process and the wait."""
        found: dict[str, list[float]] = {}
        for log in (self.root / "state").rglob("server-*.log"):
            for line in log.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 6 and parts[3].startswith("exit=") and parts[5] == "ms":
                    found.setdefault(parts[1], []).append(float(parts[4]) / 1000)
        return found

    def server_rss_mb(self) -> float:
        """The hook server's resident memory (MiB), the namespace's read models in it."""
        return sum(rss_mb(int(p.read_text())) for p in (self.root / "run").rglob("*.pid"))

    def stop_servers(self) -> None:
        for pid_file in (self.root / "run").rglob("*.pid"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            deadline = time.monotonic() + 60
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)


def event(name: str, transcript: Path, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(ROOT),
        "hook_event_name": name,
        **fields,
    }


def append_turns(transcript: Path, count: int, counter: Iterator[int]) -> None:
    """``count`` finished turns at the end of the session's transcript, as the host writes."""
    lines = []
    for _ in range(count):
        n = next(counter)
        for kind, text in (
            ("user", f"Turn {n}: please note decision number {n} about the release."),
            ("assistant", [{"type": "text", "text": f"Noted decision {n}."}]),
        ):
            message: dict[str, Any] = {"role": kind, "content": text}
            if kind == "assistant":
                message["stop_reason"] = "end_turn"
            lines.append(
                {
                    "type": kind,
                    "uuid": f"{kind[0]}-{n}",
                    "sessionId": SESSION,
                    "timestamp": "2026-05-01T09:00:00Z",
                    "isSidechain": False,
                    "message": message,
                }
            )
    with open(transcript, "ab") as handle:
        handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def fresh_process_seconds(code: str) -> float:
    """What a fresh interpreter prints after running ``code`` (it prints seconds)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(done.stdout.strip().splitlines()[-1])


def breakdown(database: Path) -> dict[str, float]:
    """Where a hook process would spend its time without the server."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    interpreter = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "stratagate", "--version"], check=True,
                   capture_output=True)  # fmt: skip
    cli = time.perf_counter() - started
    imports = fresh_process_seconds(
        "import time; t = time.perf_counter(); import stratagate.memory; "
        "print(time.perf_counter() - t)"
    )
    opened = fresh_process_seconds(
        "import time; from stratagate import StrataGate; t = time.perf_counter(); "
        f"m = StrataGate.open({str(database)!r}, {NAMESPACE!r}, read_only=True); m.turn; "
        "print(time.perf_counter() - t)"
    )
    return {
        "interpreter_ms": interpreter * 1000,
        "cli_version_ms": cli * 1000,
        "import_memory_ms": imports * 1000,
        "open_read_only_ms": opened * 1000,
    }


def measure(size: int, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    database = tmp / f"memory-{size}.db"
    built = build(database, size)
    print(f"  {size:,} turns stored ({built['write_s']:.1f} s)", file=sys.stderr, flush=True)
    hooks = Hooks(tmp / f"host-{size}", args.budget)
    transcript = tmp / f"session-{size}.jsonl"
    transcript.touch()
    counter = itertools.count(1)
    asked = questions()
    result: dict[str, Any] = {"turns": size, "build": built, "breakdown": breakdown(database)}
    try:
        cold, _ = hooks.call(
            database, event("SessionStart", transcript, source="startup"), "--budget", "600"
        )
        result["cold_start_ms"] = cold * 1000
        samples: dict[str, list[float]] = {
            "UserPromptSubmit": [],
            "Stop (1 new turn)": [],
            "Stop (50 new turns)": [],
        }
        answered = 0
        for _ in range(args.runs):
            seconds, out = hooks.call(
                database, event("UserPromptSubmit", transcript, prompt=next(asked))
            )
            samples["UserPromptSubmit"].append(seconds)
            answered += bool(out.strip())
        for label, count in (("Stop (1 new turn)", 1), ("Stop (50 new turns)", 50)):
            for _ in range(args.runs):
                append_turns(transcript, count, counter)
                seconds, _ = hooks.call(database, event("Stop", transcript))
                samples[label].append(seconds)
        result["prompts_with_context"] = answered
        result["samples"] = {k: summary_ms(v) for k, v in samples.items()}
        ignored = [
            hooks.call(database, event("PreToolUse", transcript, tool_name="Bash"))[0]
            for _ in range(args.runs)
        ]
        result["ignored_event_ms"] = summary_ms(ignored)
        result["server_rss_mb"] = hooks.server_rss_mb()
        handled = hooks.server_ms()
        result["server_ms"] = {
            name: summary_ms(handled[name][-args.runs * (2 if name == "Stop" else 1) :])
            for name in ("UserPromptSubmit", "Stop")
            if handled.get(name)
        }
    finally:
        hooks.stop_servers()
    here, _ = hooks.call(  # the memory's writer lease is free again
        database, event("UserPromptSubmit", transcript, prompt=next(asked)), "--no-server"
    )
    result["no_server_prompt_ms"] = here * 1000
    with StrataGate.open(database, NAMESPACE, read_only=True) as memory:
        result["stored_after"] = memory.turn
    expected = size + args.runs * 51
    assert result["stored_after"] == expected, (result["stored_after"], expected)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,20000", help="stored turns, comma-separated")
    parser.add_argument("--runs", type=int, default=30, help="hook calls per event and size")
    parser.add_argument("--budget", type=float, default=1.0, help="the hook's --budget")
    parser.add_argument("--out", default="bench-results/bench_hooks.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="bh-", dir="/tmp"))  # AF_UNIX paths must stay short
    try:
        results = [measure(size, args, tmp) for size in sizes]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for result in results:
        for label, stats in result["samples"].items():
            goal = GOALS_MS.get(label)
            rows.append(
                {
                    "event": label,
                    "stored turns": result["turns"],
                    "p50 ms": stats["p50_ms"],
                    "p95 ms": stats["p95_ms"],
                    "max ms": stats["max_ms"],
                    "n": stats["n"],
                    "goal p95 ms": "" if goal is None else goal,
                    "met": "" if goal is None else ("yes" if stats["p95_ms"] <= goal else "NO"),
                }
            )
    print_table(rows, list(rows[0]))
    print()
    extra = [
        {
            "stored turns": r["turns"],
            "cold start ms": r["cold_start_ms"],
            "no-server prompt ms": r["no_server_prompt_ms"],
            "ignored event p50 ms": r["ignored_event_ms"]["p50_ms"],
            "server MiB": r["server_rss_mb"],
            **{f"server {k} p50 ms": v["p50_ms"] for k, v in r.get("server_ms", {}).items()},
            **r["breakdown"],
        }
        for r in results
    ]
    print_table(extra, list(extra[0]))
    out = write_report(
        "bench_hooks",
        args.out,
        settings={"runs": args.runs, "budget_s": args.budget, "sizes": sizes},
        results=results,
        goals_ms=GOALS_MS,
        p95_ms={
            f"{label}@{r['turns']}": r["samples"][label]["p95_ms"]
            for r in results
            for label in r["samples"]
        },
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
