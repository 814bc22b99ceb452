"""Helpers for tests of ``stratagate ui``: a memory worth looking at (the bundled sample, a recorded
use through the evidence gate, planted secrets) and the UI as a real server process on a free
loopback port, asked over plain HTTP."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from stratagate.cli.demo import sample_turns
from stratagate.memory import StrataGate
from tests.support.mcp_client import free_port, running, start_listening

WORKTREE = Path(__file__).resolve().parents[2]
OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}
SECRET_KEY = "sk-proj-uitestSECRET0123456789"
"""Planted in a user message (an OpenAI-shaped key)."""
SECRET_TOKEN = "uitoolTOKEN0123456789abc"
"""Planted in a tool trace's result, after ``Bearer``."""
SECRET_TURN = {
    "user": f"Deploy with api_key={SECRET_KEY} please, then check pnpm.",
    "assistant": "Deployed.",
    "thread_id": "ops",
    "assistant_tool_calls": [
        {
            "name": "http",
            "arguments": {"url": "https://example.org"},
            "result": {"headers": f"Authorization: Bearer {SECRET_TOKEN}"},
        }
    ],
    "receipt_id": "secret-turn",
    "created_at": "2026-04-20T10:00:00Z",
}


def build_memory(database: Path, namespace: str = "default") -> dict[str, Any]:
    """The sample conversation, a turn with planted secrets, and one recorded use audited by a
    sufficient assessment; returns the ids a test needs."""
    with StrataGate.open(database, namespace, block_turn_size=6, **OFFLINE) as memory:
        turns = [
            {"user": t.user, "assistant": t.assistant, **t.append_kwargs()} for t in sample_turns()
        ]
        memory.append_turns(turns)
        memory.append_turns(
            [
                SECRET_TURN,
                *[
                    {
                        "user": f"ops note {i}",
                        "assistant": "ok",
                        "thread_id": "ops",
                        "created_at": f"2026-04-20T1{i}:00:00Z",
                    }
                    for i in range(1, 7)
                ],
            ]
        )
        hits = memory.search_events("pnpm lockfile")
        card = hits[0].id
        memory.assess_retrieval(
            {"verdict": "sufficient", "evidence_refs": [card], "next_strategy": "answer"},
            hits.batch_id,
        )
        memory.record_memory_use(
            event_ids=[card],
            receipt_id="answer-1",
            audit={"batch_id": hits.batch_id, "evidence_refs": [card], "session_id": "s-1"},
        )
        return {"event_id": card, "batch_id": hits.batch_id, "head": memory.history()[-1].position}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.body)


class UiServer:
    """``stratagate ui`` as a real process on a free loopback port."""

    def __init__(self, database: Path, *options: str, token: str | None = None) -> None:
        self.database, self.options, self.token = database, options, token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> UiServer:
        env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
        env.pop("STRATAGATE_TOKEN", None)
        if self.token is not None:
            env["STRATAGATE_TOKEN"] = self.token
        argv = [sys.executable, "-m", "stratagate", "ui", "--database", str(self.database),
                "--port", str(self.port), *self.options]  # fmt: skip
        self.process = start_listening(argv, env, self.port)
        return self

    def stop(self) -> int:
        assert self.process is not None
        self.process.terminate()
        return self.process.wait(30)

    def request(
        self,
        path: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        token: str | None = None,
    ) -> Answer:
        """One request; the API token is sent when the server has one (unless ``token=""``)."""
        sent = dict(headers or {})
        given = self.token if token is None else token
        if given:
            sent.setdefault("Authorization", f"Bearer {given}")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, headers=sent)
            response = connection.getresponse()
            return Answer(response.status, dict(response.getheaders()), response.read())
        finally:
            connection.close()

    def get(self, path: str, **params: Any) -> Any:
        """A successful GET's JSON."""
        query = "&".join(f"{k}={v}" for k, v in params.items())
        answer = self.request(f"/api/v1{path}" + (f"?{query}" if query else ""))
        assert answer.status == 200, (answer.status, answer.body[:300])
        return answer.json


__all__ = ["OFFLINE", "SECRET_KEY", "SECRET_TOKEN", "WORKTREE", "Answer", "UiServer", "build_memory",
           "running"]  # fmt: skip
