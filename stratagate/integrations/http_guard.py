"""The guard in front of ``stratagate serve --transport http``: an ASGI middleware that rate-limits
each client address, checks the bearer token in constant time and refuses oversized bodies,
before the MCP app sees the request. Pure ASGI (no framework), so it wraps any app.
"""

from __future__ import annotations

import hmac
import ipaddress
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from stratagate.errors import InvalidInputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 1_048_576
"""1 MiB: a tool call is a few kilobytes; an appended turn with long messages fits."""
DEFAULT_RATE = 50.0
"""Requests per second per client address, sustained (each tool call is one request)."""
DEFAULT_BURST = 200
"""Requests a client address may send at once above the sustained rate."""
MAX_TRACKED_CLIENTS = 10_000


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """A bind beyond loopback needs a token: anyone on the network could read the memory."""
    if not is_loopback(host) and not token:
        raise InvalidInputError(
            f"--host {host} is reachable from other machines: set a bearer token with "
            "STRATAGATE_TOKEN (or --token), or bind 127.0.0.1"
        )


def token_matches(header: bytes | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <token>`` (constant-time)."""
    if header is None:
        return False
    scheme, _, given = header.partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(given.strip(), token.encode())


@dataclass(frozen=True)
class Bucket:
    """A token bucket: ``tokens`` left at ``at`` (monotonic seconds)."""

    tokens: float
    at: float


def take(bucket: Bucket | None, now: float, rate: float, burst: int) -> tuple[bool, Bucket]:
    """Spend one token if there is one; the bucket refills at ``rate`` up to ``burst``."""
    if bucket is None:
        bucket = Bucket(float(burst), now)
    tokens = min(float(burst), bucket.tokens + (now - bucket.at) * rate)
    if tokens >= 1.0:
        return True, Bucket(tokens - 1.0, now)
    return False, Bucket(tokens, now)


@dataclass(frozen=True)
class GuardSettings:
    """What the guard enforces; ``rate`` 0 disables rate limiting."""

    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate: float = DEFAULT_RATE
    burst: int = DEFAULT_BURST


class HttpGuard:
    """Rate limit (429), bearer token (401), body size (413), in that order."""

    def __init__(
        self, app: App, settings: GuardSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.app = app
        self.settings = settings
        self.clock = clock
        self.buckets: OrderedDict[str, Bucket] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = self.settings
        if settings.rate > 0 and not self.admit(client_address(scope)):
            await respond(send, 429, "too many requests", [(b"retry-after", b"1")])
            return
        if settings.token is not None and not token_matches(
            header(scope, b"authorization"), settings.token
        ):
            challenge = [(b"www-authenticate", b'Bearer realm="stratagate"')]
            await respond(send, 401, "a valid bearer token is required", challenge)
            return
        body = await read_body(receive, settings.max_body_bytes)
        if body is None:
            await respond(send, 413, f"the body is over {settings.max_body_bytes} bytes")
            return
        await self.app(scope, replay(body, receive), send)

    def admit(self, client: str) -> bool:
        allowed, bucket = take(
            self.buckets.pop(client, None), self.clock(), self.settings.rate, self.settings.burst
        )
        self.buckets[client] = bucket
        if len(self.buckets) > MAX_TRACKED_CLIENTS:
            self.buckets.popitem(last=False)
        return allowed


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or ``None`` once it exceeds ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def respond(
    send: Send, status: int, reason: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = b'{"error": "' + reason.encode() + b'"}'
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RATE",
    "GuardSettings",
    "HttpGuard",
    "check_bind",
    "is_loopback",
    "take",
    "token_matches",
]
