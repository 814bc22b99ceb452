"""Finding 4 of issue 21: the MCP app behind ``serve --transport http`` checks Host and Origin
on every bind, not only on the three names the MCP SDK knows (127.0.0.1, localhost, ::1).
Driven in process as an ASGI app around a real pool (a real SQLite file, opened on first use)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from stratagate.integrations.http_guard import GuardSettings
from stratagate.integrations.mcp_server import MemoryPool, http_app


def post(app: Any, headers: list[tuple[bytes, bytes]]) -> int:
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/mcp", "raw_path": b"/mcp",
        "query_string": b"", "headers": headers, "client": ("127.0.0.2", 5000),
        "server": ("127.0.0.2", 8765), "scheme": "http", "http_version": "1.1",
        "root_path": "",
    }  # fmt: skip
    anyio.run(app, scope, receive, send)
    status: int = sent[0]["status"]
    return status


@pytest.mark.parametrize("bind", ["127.0.0.2", "::ffff:127.0.0.1"])
def test_a_non_canonical_loopback_bind_checks_host_and_origin(tmp_path: Path, bind: str) -> None:
    pool = MemoryPool(str(tmp_path / "memory.db"), "default", frozenset({"default"}))
    try:
        app = http_app(pool, bind, GuardSettings(token="t0ken", rate=0))
        auth = (b"authorization", b"Bearer t0ken")
        assert post(app, [auth, (b"host", b"rebound.example:8765")]) == 421
        assert (
            post(app, [auth, (b"host", b"127.0.0.1:8765"), (b"origin", b"http://evil.example")])
            == 403
        )
    finally:
        pool.close()
