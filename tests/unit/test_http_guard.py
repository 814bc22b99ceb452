"""The HTTP guard of ``stratagate serve``: rate limit, bearer token and body size, driven as a
real ASGI middleware around a recording app, with a fake clock."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import InvalidInputError
from stratagate.integrations.http_guard import (
    GuardSettings,
    HttpGuard,
    check_bind,
    is_loopback,
    take,
    token_matches,
)


class Recorder:
    """The app behind the guard: answers 200 and keeps the bodies it received."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.bodies.append(message["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def request(
    guard: HttpGuard,
    *,
    body: bytes = b"{}",
    token: str | None = None,
    client: str = "10.0.0.1",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> int:
    """One POST through the guard (the body in 1 KiB chunks); its status."""
    headers = [
        *(headers or []),
        *([(b"authorization", f"Bearer {token}".encode())] if token else []),
    ]
    chunks = [body[i : i + 1024] for i in range(0, len(body), 1024)] or [b""]
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "headers": headers, "client": (client, 5000)}
    anyio.run(guard, scope, receive, send)
    status: int = sent[0]["status"]
    return status


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_token_is_required_and_compared_exactly() -> None:
    app = Recorder()
    guard = HttpGuard(app, GuardSettings(token="s3cret", rate=0))
    assert request(guard) == 401
    assert request(guard, token="s3cre") == 401
    assert request(guard, token="s3cret-and-more") == 401
    assert request(guard, token="s3cret", body=b'{"a": 1}') == 200
    assert app.bodies == [b'{"a": 1}']  # only the authorised request reached the app
    assert token_matches(b"bearer s3cret", "s3cret") and not token_matches(b"s3cret", "s3cret")


def test_a_body_over_the_limit_is_refused_before_the_app_sees_it() -> None:
    app = Recorder()
    guard = HttpGuard(app, GuardSettings(max_body_bytes=4096, rate=0))
    assert request(guard, body=b"x" * 4097) == 413
    assert request(guard, body=b"x" * 4096) == 200
    assert app.bodies == [b"x" * 4096]  # chunks reassembled, the oversized one never passed


def test_each_client_gets_its_burst_then_the_sustained_rate() -> None:
    clock = Clock()
    guard = HttpGuard(Recorder(), GuardSettings(rate=2.0, burst=3), clock=clock)
    assert [request(guard) for _ in range(4)] == [200, 200, 200, 429]
    assert request(guard, client="10.0.0.2") == 200  # another address has its own bucket
    clock.now = 0.5  # one more token after half a second at 2/s
    assert [request(guard) for _ in range(2)] == [200, 429]


@given(
    rate=st.floats(0.1, 100), burst=st.integers(1, 50),
    gaps=st.lists(st.floats(0, 2), min_size=1, max_size=200),
)  # fmt: skip
def test_a_bucket_never_admits_more_than_burst_plus_rate_times_elapsed(
    rate: float, burst: int, gaps: list[float]
) -> None:
    bucket, now, admitted = None, 0.0, 0
    for gap in gaps:
        now += gap
        allowed, bucket = take(bucket, now, rate, burst)
        admitted += allowed
    assert admitted <= burst + rate * now + 1e-6


def test_a_bind_beyond_loopback_needs_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "token")
    with pytest.raises(InvalidInputError, match="reachable from other machines"):
        check_bind("0.0.0.0", None)


def test_a_non_canonical_loopback_bind_needs_a_token_too() -> None:
    """127.0.0.2 (or ::ffff:127.0.0.1) is loopback, but the MCP SDK's DNS-rebinding protection
    only knows 127.0.0.1, localhost and ::1: any other bind is treated as reachable."""
    for host in ("127.0.0.2", "127.1.2.3", "::ffff:127.0.0.1", "0.0.0.0", "::"):
        with pytest.raises(InvalidInputError, match="--host"):
            check_bind(host, None)
        check_bind(host, "token")
    for host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        check_bind(host, None)


def test_each_client_id_of_one_address_gets_its_own_bucket() -> None:
    """Local agents share 127.0.0.1: the bucket is per address *and* client id (the MCP
    session, or the X-StrataGate-Client header), so one busy agent does not starve the rest."""
    clock = Clock()
    guard = HttpGuard(Recorder(), GuardSettings(rate=1.0, burst=2), clock=clock)

    def call(client_id: str | None, session: str | None = None) -> int:
        extra = []
        if client_id is not None:
            extra.append((b"x-stratagate-client", client_id.encode()))
        if session is not None:
            extra.append((b"mcp-session-id", session.encode()))
        return request(guard, headers=extra)

    assert [call("agent-a") for _ in range(3)] == [200, 200, 429]
    assert [call("agent-b") for _ in range(2)] == [200, 200]
    assert [call(None, session="s1") for _ in range(3)] == [200, 200, 429]
    assert call(None, session="s2") == 200
