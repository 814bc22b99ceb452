"""A real local HTTP server that plays a scripted queue of chat-completion replies.

It listens on 127.0.0.1 (an ephemeral port) in a background thread, answers each POST with the
next scripted ``Reply`` (or the fallback once the queue is empty) and records every request.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: status, body, headers, and a delay before answering (seconds)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    """Header names in lower case (clients differ in how they capitalise them)."""
    body: dict[str, Any]


def completion(content: str | None, *, model: str = "test-model") -> Reply:
    """A 200 chat-completion response whose first choice says ``content``."""
    envelope = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(body=json.dumps(envelope).encode())


def json_reply(payload: dict[str, Any]) -> Reply:
    """A completion whose content is ``payload`` as JSON text."""
    return completion(json.dumps(payload, ensure_ascii=False))


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error answer with an OpenAI-style error body."""
    body = json.dumps({"error": {"message": message, "type": "test"}}).encode()
    return Reply(status=status, body=body, headers=headers or {})


class ChatServer:
    """Scripted chat-completions endpoint; use as a context manager, ``url`` is the base URL."""

    def __init__(self, *replies: Reply, fallback: Reply | None = None) -> None:
        self._queue: deque[Reply] = deque(replies)
        self._fallback = fallback or error(500, "script exhausted")
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.received: list[Received] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL to configure (``.../v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply, fallback: Reply | None = None) -> None:
        """Queue ``replies``; ``fallback`` (if given) answers once the queue is empty."""
        with self._lock:
            self._queue.extend(replies)
            if fallback is not None:
                self._fallback = fallback

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._released.set()  # wake handlers still sleeping through a scripted delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            return self._queue.popleft() if self._queue else self._fallback

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = server._next(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if reply.delay and server._released.wait(reply.delay):
                    return
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler
