"""Helpers for tests of ``stratagate serve``: the SDK's real client over stdio (the server as a
subprocess) and over streamable HTTP (a real server process on a free loopback port)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx2
import orjson
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from stratagate.cli.demo import sample_turns

WORKTREE = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(WORKTREE)}


def serve_argv(database: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "stratagate", "serve", "--database", str(database), *options]


def stdio_client(database: Path, *options: str) -> Client:
    """A client that starts ``stratagate serve`` on stdio as its subprocess."""
    command, *args = serve_argv(database, *options)
    return Client(StdioServerParameters(command=command, args=args, env=ENV, cwd=str(WORKTREE)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_listening(argv: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """Start a server process and wait until it listens on the loopback ``port``."""
    process = subprocess.Popen(argv, env=env, cwd=WORKTREE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process
        time.sleep(0.05)
    process.kill()
    raise TimeoutError("the server did not start listening")


class HttpServer:
    """``stratagate serve --transport http`` as a real process on a free loopback port."""

    def __init__(self, database: Path, *options: str, token: str | None = "test-token") -> None:
        self.database, self.options, self.token = database, options, token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> HttpServer:
        env = {**os.environ, **ENV}
        env.pop("STRATAGATE_TOKEN", None)
        if self.token is not None:
            env["STRATAGATE_TOKEN"] = self.token
        argv = serve_argv(self.database, "--transport", "http", "--port", str(self.port))
        self.process = start_listening([*argv, *self.options], env, self.port)
        return self

    def stop(self) -> int:
        """SIGTERM, then the exit status (the server closes its memories first)."""
        assert self.process is not None
        self.process.terminate()
        return self.process.wait(30)

    def headers(self, token: str | None = None) -> dict[str, str]:
        token = token if token is not None else self.token
        return {"Authorization": f"Bearer {token}"} if token else {}

    @contextlib.asynccontextmanager
    async def client(self, token: str | None = None) -> AsyncIterator[Client]:
        async with (
            httpx2.AsyncClient(headers=self.headers(token)) as http,
            Client(streamable_http_client(self.url, http_client=http)) as client,
        ):
            yield client


class Startable(Protocol):
    """A server process a test starts and stops (``HttpServer``, ``ui_server.UiServer``)."""

    process: subprocess.Popen[bytes] | None

    def start(self) -> Any: ...

    def stop(self) -> int: ...


S = TypeVar("S", bound=Startable)


@contextlib.contextmanager
def running(server: S) -> Iterator[S]:
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """A successful tool call's JSON result (the test fails on a tool error)."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    assert len(result.content) == 1 and result.structured_content is None
    return orjson.loads(text)


async def fail(client: Client, tool: str, **arguments: Any) -> str:
    """A failed tool call's error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def append_sample(client: Client) -> list[dict[str, Any]]:
    """Every turn of the bundled sample through ``append_turn`` (with its receipt id)."""
    return [
        await call(
            client, "append_turn", user=turn.user, assistant=turn.assistant,
            created_at=turn.created_at, thread_id=turn.thread_id, receipt_id=turn.receipt_id,
        )
        for turn in sample_turns()
    ]  # fmt: skip
