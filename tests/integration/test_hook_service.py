"""The hook server's core on a real SQLite file: whatever a request holds, the reply is exit 0
or 1 with one line, never an exception; a namespace held by another writer is refused at once
while it stays held."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from stratagate import StrataGate
from stratagate.integrations.hooks.protocol import Reply, Request
from stratagate.integrations.hooks.service import HookService
from tests.support.transcripts import Transcript


@pytest.fixture
def service(tmp_path: Path) -> Any:
    made = HookService(str(tmp_path / "memory.db"), {}, tmp_path / "state", busy_backoff=1.0)
    yield made
    made.close()


def ask(service: HookService, event: Any, namespace: Any = "ns") -> Reply:
    reply = service.handle(Request(event=event, namespace=namespace, deadline=time.time() + 30))
    assert reply.exit in (0, 1) and len(reply.stderr.splitlines()) <= 1
    return reply


@pytest.mark.parametrize(
    ("event", "namespace", "says"),
    [
        (5, "ns", "not a JSON object"),
        ({"hook_event_name": "Stop"}, "ns", "no usable session_id"),
        ({"hook_event_name": "Stop", "session_id": "s"}, "ns", "no transcript_path"),
        ({"hook_event_name": "Stop", "session_id": "s", "cwd": 7}, "ns", "cwd is not a string"),
        ({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"}, "", "namespace"),
        ({"hook_event_name": "SessionStart", "session_id": "s"}, 42, "namespace"),
    ],
)  # fmt: skip
def test_bad_requests_are_one_line_exit_1(
    service: HookService, event: Any, namespace: Any, says: str
) -> None:
    reply = ask(service, event, namespace)
    assert reply.exit == 1 and says in reply.stderr and reply.stdout == ""


def test_a_busy_namespace_is_refused_at_once_until_its_writer_leaves(
    service: HookService, tmp_path: Path
) -> None:
    t = Transcript("s1")
    t.turn("Keep this.", "Kept.")
    stop = {"hook_event_name": "Stop", "session_id": "s1",
            "transcript_path": str(t.write(tmp_path / "t.jsonl"))}  # fmt: skip
    other = StrataGate.open(tmp_path / "memory.db", "ns")
    try:
        first = ask(service, stop)
        started = time.monotonic()
        second = ask(service, stop)
        assert first.exit == second.exit == 1 and "open for writing" in second.stderr
        assert time.monotonic() - started < 0.5  # not restored again to be refused again
    finally:
        other.close()
    assert ask(service, stop).exit == 1  # still within the back-off: not tried again
    time.sleep(1.0)
    assert ask(service, stop).exit == 0
    with StrataGate.open(tmp_path / "memory.db", "ns", read_only=True) as memory:
        assert [m.content for m in memory.list_open_tail()] == ["Keep this.", "Kept."]
