"""Several processes append to one namespace at once (SQLite file and PostgreSQL): every
acknowledged turn is in the log exactly once and in order, blocks are sealed per thread as one
process would seal them, each block is extracted once, verify() passes and every process's live
state equals a replay after a refresh — also when one of three writers is SIGKILLed mid-call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate import StaleHandleError, StrataGate

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def start_writer(
    database: str, thread: str, tmp: Path, *, expect: int, turns: int, models: str, hang: str = ""
) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "tests.support.concurrent_writer", database, thread,
        "--turns", str(turns), "--block", "4", "--models", models,
        "--go", str(tmp / "go"), "--done", str(tmp / "done"), "--expect", str(expect),
    ]  # fmt: skip
    if hang:
        argv += ["--hang", hang]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def run_writers(
    database: str, tmp: Path, count: int, *, turns: int = 12, models: str = "offline"
) -> list[dict[str, Any]]:
    (tmp / "done").mkdir()
    threads = [f"w{i}" for i in range(count)]
    children = [
        start_writer(database, t, tmp, expect=count, turns=turns, models=models) for t in threads
    ]
    for child in children:  # every writer has opened the namespace
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    (tmp / "go").touch()
    results = []
    for child in children:
        output, _ = child.communicate(timeout=600)
        assert child.returncode == 0, output
        results.append(orjson.loads(output.splitlines()[-1].removeprefix("result ")))
    return results


def check_log(memory: StrataGate, threads: dict[str, int], *, block: int = 4) -> None:
    """Exactly once, in order, sealed as one process would, extracted once per block."""
    history = memory.history()
    turns = [r.data for r in history if r.type == "TurnAppended"]
    receipts = Counter(t["receipt_id"] for t in turns)
    expected = {f"{thread}-{i}" for thread, n in threads.items() for i in range(n)}
    assert set(receipts) == expected and set(receipts.values()) == {1}
    for thread, n in threads.items():
        mine = [t for t in turns if t["thread_id"] == thread]
        assert [t["receipt_id"] for t in mine] == [f"{thread}-{i}" for i in range(n)]
        assert [t["thread_turn"] for t in mine] == list(range(1, n + 1))
        blocks = [b for b in memory.list_blocks() if b.thread_id == thread]
        assert [(b.start_turn, b.end_turn) for b in blocks] == [
            (s, s + block - 1) for s in range(1, n - block + 2, block)
        ]
    ended = Counter(
        r.data["block_id"]
        for r in history
        if r.type in ("ExtractionSucceeded", "ExtractionSkipped", "ExtractionFailed")
    )
    assert set(ended.values()) <= {1}, "a block was extracted twice"
    started = Counter(r.data["block_id"] for r in history if r.type == "ExtractionStarted")
    assert set(started.values()) <= {1}, "an extraction was claimed twice"
    sealed = Counter((r.data["thread_id"], r.data["start_turn"]) for r in history
                     if r.type == "BlockSealed")  # fmt: skip
    assert set(sealed.values()) <= {1}, "a block was sealed twice"
    assert memory.verify().ok


@pytest.mark.parametrize("count", [2, 8])
@pytest.mark.parametrize("file_backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)  # fmt: skip
def test_processes_append_to_one_namespace_at_once(
    file_backend: Any, tmp_path: Path, count: int
) -> None:
    database = file_backend.database
    turns = 12 if count == 2 else 8
    results = run_writers(database, tmp_path, count, turns=turns)
    assert all(r["verify"] for r in results), "a process's live state differs from a replay"
    assert len({r["revision"] for r in results}) == 1  # each saw everything after refresh
    with StrataGate.open(database, "shared", read_only=True) as memory:
        assert memory.revision == results[0]["revision"]
        check_log(memory, {f"w{i}": turns for i in range(count)})
        extracted = {e.source_block_id for e in memory.list_events()}
        ready = {b.id for b in memory.list_blocks() if b.end_turn < turns}  # has a next block
        assert ready <= extracted | skipped_blocks(memory)


def skipped_blocks(memory: StrataGate) -> set[str]:
    return {j.block_id for j in memory.list_extraction_jobs() if j.status == "skipped"}


@pytest.mark.parametrize("file_backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)  # fmt: skip
def test_one_of_three_writers_killed_mid_call_loses_nothing(
    file_backend: Any, tmp_path: Path
) -> None:
    database = file_backend.database
    (tmp_path / "done").mkdir()
    announce = tmp_path / "announce"
    victim = start_writer(database, "victim", tmp_path, expect=2, turns=8, models="callbacks",
                          hang=str(announce))  # fmt: skip
    assert victim.stdout is not None and victim.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    deadline = time.monotonic() + 120
    while not announce.exists():  # the victim holds a seal claim and hangs in its summarizer
        assert victim.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    # the other two write beside the hanging victim (they leave its live claim alone) ...
    others = [
        start_writer(database, t, tmp_path, expect=2, turns=8, models="callbacks")
        for t in ("w0", "w1")
    ]
    for child in others:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert child.stdout.readline().startswith("ack ")  # ... and are writing
    victim.send_signal(signal.SIGKILL)
    output, _ = victim.communicate(timeout=30)
    acked = [line.split()[1] for line in output.splitlines() if line.startswith("ack ")]
    for child in others:
        out, _ = child.communicate(timeout=600)
        assert child.returncode == 0, out
        assert orjson.loads(out.splitlines()[-1].removeprefix("result "))["verify"]
    with StrataGate.open(
        database, "shared", summarizer="offline", extractor="offline", element_projector="offline"
    ) as memory:  # opening recovers the dead victim's claim
        failed = [r.data for r in memory.history() if r.type == "SealFailed"]
        assert [f["thread_id"] for f in failed if f["interrupted"]] == ["victim"]
        memory.resume_pending_work()
        assert acked and all(memory.has_ingestion_receipt(receipt) for receipt in acked)
        # the turn in flight when it died may have become durable unacknowledged
        stored = memory.stats().turns - 16
        assert stored in (len(acked), len(acked) + 1)
        check_log(memory, {"w0": 8, "w1": 8, "victim": stored})
        running = [j for j in memory.list_extraction_jobs() if j.status == "running"]
        assert running == []


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(st.integers(min_value=1, max_value=9), min_size=2, max_size=4),
    block=st.integers(min_value=1, max_value=4),
)
def test_handles_on_threads_race_and_lose_nothing(
    tmp_path_factory: pytest.TempPathFactory, plan: list[int], block: int
) -> None:
    """Each thread its own handle with ``on_conflict="raise"``: a lost race appends nothing
    and is simply called again; what was acknowledged is in the log once, in order."""
    database = str(tmp_path_factory.mktemp("race") / "race.db")
    handles = [StrataGate.open(database, "shared", block_turn_size=block) for _ in plan]
    lost = Counter[str]()
    try:
        start = threading.Barrier(len(plan))

        def write(memory: StrataGate, thread: str, n: int) -> None:
            start.wait()
            for i in range(n):
                while True:
                    try:
                        memory.append_turn(f"{thread} {i}", "ok", thread_id=thread,
                                           receipt_id=f"{thread}-{i}")  # fmt: skip
                        break
                    except StaleHandleError:
                        lost[thread] += 1

        workers = [
            threading.Thread(target=write, args=(h, f"t{k}", n))
            for k, (h, n) in enumerate(zip(handles, plan, strict=True))
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for memory in handles:
            memory.refresh()
            assert memory.verify().ok
        check_log(handles[0], {f"t{k}": n for k, n in enumerate(plan)}, block=block)
    finally:
        for memory in handles:
            memory.close()
