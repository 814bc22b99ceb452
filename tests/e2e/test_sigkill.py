"""SIGKILL during the summarizer, the extractor and the projector calls: no acknowledged turn is
lost, the interrupted job is failed and retryable, no event is duplicated, and verify() passes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stratagate import StrataGate
from tests.support.fakes import KeywordExtractor, TitleSummarizer, UsesProjector

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def kill_mid_call(tmp_path: Path, role: str) -> tuple[str, list[str]]:
    database = str(tmp_path / "victim.db")
    announce = tmp_path / "announce"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.kill_worker", database, role, str(announce)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not announce.exists():
        assert child.poll() is None, "the worker ended before reaching the callback"
        assert time.monotonic() < deadline, "the worker never reached the callback"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    output, _ = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    return database, [line.split()[1] for line in output.splitlines() if line.startswith("ack ")]


def reopen(database: str) -> StrataGate:
    return StrataGate.open(
        database,
        "victim",
        summarizer=TitleSummarizer(),
        extractor=KeywordExtractor(),
        element_projector=UsesProjector(),
    )


def check_recovered(memory: StrataGate, acked: list[str]) -> None:
    assert all(memory.has_ingestion_receipt(receipt) for receipt in acked)
    events = memory.list_events()
    assert len({e.id for e in events}) == len(events)
    cited = [m for e in events for m in e.source_message_ids]
    assert len(cited) == len(set(cited)), "an event was extracted twice"
    assert memory.verify().ok


@pytest.mark.parametrize("role", ["summarizer", "extractor", "element_projector"])
def test_sigkill_mid_callback(tmp_path: Path, role: str) -> None:
    database, acked = kill_mid_call(tmp_path, role)
    assert acked, "some turns were acknowledged before the kill"
    in_flight = f"turn-{len(acked)}"
    with reopen(database) as memory:
        history = memory.history()
        if role == "summarizer":
            failed = [r for r in history if r.type == "SealFailed"]
            assert failed and failed[-1].data["interrupted"] is True
        elif role == "extractor":
            jobs = memory.list_extraction_jobs()
            assert [j.status for j in jobs if "interrupted" in (j.last_error or "")] == ["failed"]
        else:
            jobs = memory.list_element_projection_jobs()
            assert [j.status for j in jobs if "interrupted" in (j.last_error or "")] == ["failed"]
        turns_before = memory.turn
        resumed = memory.resume_pending_work()
        assert memory.turn == turns_before
        if role == "summarizer":
            assert resumed.sealed_blocks and "HANG" in resumed.sealed_blocks[0].l4_readable
        elif role == "extractor":
            assert any("HANG" in e.summary for e in resumed.extracted_events)
        else:
            assert any(e.current_state.get("uses") == "HANG" for e in resumed.projected_elements)
        check_recovered(memory, [*acked, in_flight])  # the turn in flight was durable too
        assert memory.resume_pending_work() == type(resumed)()  # nothing left to retry
