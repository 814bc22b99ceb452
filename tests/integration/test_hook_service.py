"""The hook server's core on a real SQLite file: whatever a request holds, the reply is exit 0
or 1 with one line, never an exception; it captures beside other writers of the namespace, and
a capture that cannot write leaves its turns waiting for a later run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from stratagate import StrataGate
from stratagate.integrations.hooks.protocol import Reply, Request
from stratagate.integrations.hooks.service import HookService
from stratagate.store.keys import MASTER_KEY_ENV, new_master_key
from tests.support.transcripts import Transcript


@pytest.fixture
def service(tmp_path: Path) -> Any:
    made = HookService(str(tmp_path / "memory.db"), {}, tmp_path / "state")
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


def stop_event(t: Transcript, path: Path) -> dict[str, Any]:
    return {"hook_event_name": "Stop", "session_id": t.session_id,
            "transcript_path": str(t.write(path))}  # fmt: skip


def test_captures_beside_another_open_memory(service: HookService, tmp_path: Path) -> None:
    t = Transcript("s1")
    t.turn("Keep this.", "Kept.")
    other = StrataGate.open(tmp_path / "memory.db", "ns")  # a server, say
    try:
        other.append_turn("from the server", "ok", thread_id="server")
        assert ask(service, stop_event(t, tmp_path / "t.jsonl")).exit == 0
        service.run_later()
        assert other.stats().turns == 2  # the other memory reads the hook's turn
        other.append_turn("the server again", "ok", thread_id="server")
        t.turn("And this.", "Also kept.")
        assert ask(service, stop_event(t, tmp_path / "t.jsonl")).exit == 0
        service.run_later()
    finally:
        other.close()
    with StrataGate.open(tmp_path / "memory.db", "ns", read_only=True) as memory:
        assert memory.stats().turns == 4 and memory.verify().ok
        mine = [m.content for m in memory.list_open_tail(thread_id="s1")]
        assert mine == ["Keep this.", "Kept.", "And this.", "Also kept."]


def test_a_capture_that_cannot_write_leaves_its_turns_waiting(
    service: HookService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    right, wrong = new_master_key(), new_master_key()
    monkeypatch.setenv(MASTER_KEY_ENV, right)
    with StrataGate.open(tmp_path / "memory.db", "ns") as memory:
        memory.append_turn("earlier", "ok", thread_id="before")
    t = Transcript("s1")
    t.turn("Keep this.", "Kept.")
    stop = stop_event(t, tmp_path / "t.jsonl")
    monkeypatch.setenv(MASTER_KEY_ENV, wrong)  # the memory cannot be opened now
    reply = ask(service, stop)
    assert reply.exit == 1 and "wait in its transcript" in reply.stderr, reply.stderr
    monkeypatch.setenv(MASTER_KEY_ENV, right)
    assert ask(service, stop).exit == 0
    service.run_later()
    with StrataGate.open(tmp_path / "memory.db", "ns", read_only=True) as memory:
        assert [m.content for m in memory.list_open_tail(thread_id="s1")] == [
            "Keep this.",
            "Kept.",
        ]
