"""The guard in front of ``stratagate serve --transport http``: an ASGI middleware that rate-limits
each client (address and client id), checks the bearer token in constant time and refuses
oversized bodies, before the MCP app sees the request; and the Host and Origin checks (DNS
rebinding, cross-site requests) every HTTP surface wears on every bind. Pure ASGI (no framework),
so it wraps any app.
"""

from __future__ import annotations

import hmac
import ipaddress
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

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
CLIENT_ID_HEADERS = (b"x-stratagate-client", b"mcp-session-id")
"""Headers naming a client of one address (first found wins): each gets its own bucket."""
MAX_CLIENT_ID_CHARS = 128
CANONICAL_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
"""The binds served without a token: the names the Host check (and the MCP SDK) know."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback too
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def is_canonical_loopback(host: str) -> bool:
    """127.0.0.1, localhost or ::1: the only binds served without a bearer token. Any other
    (127.0.0.2, ::ffff:127.0.0.1, 0.0.0.0, a name) is treated as reachable from elsewhere."""
    return host.lower() in CANONICAL_LOOPBACK


def check_bind(host: str, token: str | None) -> None:
    """A bind other than 127.0.0.1, localhost or ::1 needs a token: anyone who reaches it could
    read the memory."""
    if not is_canonical_loopback(host) and not token:
        where = (
            "is not 127.0.0.1, localhost or ::1"
            if is_loopback(host)
            else "is reachable from other machines"
        )
        raise InvalidInputError(
            f"--host {host} {where}: set a bearer token with "
            "STRATAGATE_TOKEN (or --token), or bind 127.0.0.1"
        )


def host_name(value: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8766`` → ``[::1]``)."""
    if value.startswith("["):
        return value[: value.find("]") + 1]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(host: str | None, bind: str) -> bool:
    """A loopback server (any loopback bind) answers only to loopback names and its own
    address (a DNS-rebinding page's Host is its own name); beyond loopback the token decides,
    so any Host is let through."""
    if not is_loopback(bind):
        return True
    if host is None:
        return False
    name = host_name(host).lower()
    own = bind.lower().strip("[]")
    return name in LOOPBACK_NAMES or name.strip("[]") == own


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """No ``Origin`` (a same-origin GET, a script) or this very server's: nothing cross-site."""
    if origin is None:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and host is not None and parts.netloc == host


@dataclass(frozen=True)
class Origins:
    """Host and Origin checks in front of an app (421 and 403, as the MCP SDK answers)."""

    app: App
    bind: str

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = _text(header(scope, b"host"))
            if not host_allowed(host, self.bind):
                await respond(send, 421, "this server answers only to its loopback address")
                return
            if not origin_allowed(_text(header(scope, b"origin")), host):
                await respond(send, 403, "requests from another origin are refused")
                return
        await self.app(scope, receive, send)


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


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
        if settings.rate > 0 and not self.admit(client_key(scope)):
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


def client_key(scope: Scope) -> str:
    """The bucket of a request: its address and, when it names one, its client id (the
    ``X-StrataGate-Client`` header or the MCP session), so agents sharing an address do not
    share an allowance. The id is cut to 128 characters; at most 10,000 buckets are kept."""
    for name in CLIENT_ID_HEADERS:
        value = header(scope, name)
        if value:
            return f"{client_address(scope)} {value[:MAX_CLIENT_ID_CHARS].decode('latin-1')}"
    return client_address(scope)


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
    "Origins",
    "check_bind",
    "client_key",
    "host_allowed",
    "host_name",
    "is_canonical_loopback",
    "is_loopback",
    "origin_allowed",
    "take",
    "token_matches",
]
