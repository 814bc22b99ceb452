"""The hook command's side of the hook server: send the request, or start the server with the
request in hand, and give up at the deadline (stdlib only: this runs on every prompt).

A running server gets the request over its socket. When none listens, the hook starts one
(detached: its own session, its log for stderr) and writes the request on the new server's
stdin, so the request is delivered however long the server then takes to start and open the
memory; the reply comes back on its stdout if it is ready by the deadline. A reply that is not
ready is ``None``: the server goes on with the work (a capture completes, a memory finishes
opening) and the next hook finds it ready.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from stratagate.integrations.hooks.protocol import Reply, Request

RETRY_SECONDS = 0.02
"""How often a server that another hook is starting is tried again."""
FIRST_REQUEST_OPTION = "--first-request-on-stdin"
"""What tells a starting server that its first request waits on its stdin."""


def exchange(path: Path, request: Request) -> Reply | None:
    """Send ``request`` to the server at ``path`` and read its reply (``None``: no reply by the
    deadline). ``FileNotFoundError`` or ``ConnectionRefusedError``: no server listens."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        left = request.deadline - time.time()
        if left <= 0:
            return None
        connection.settimeout(left)
        connection.connect(str(path))
        try:
            connection.sendall(request.encode())
            connection.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := connection.recv(1 << 16):
                chunks.append(chunk)
                connection.settimeout(max(0.001, request.deadline - time.time()))
        except TimeoutError:
            return None
        data = b"".join(chunks)
    return Reply.decode(data) if data else None


def start_with(
    request: Request, argv: Sequence[str], log_path: Path, environ: Mapping[str, str]
) -> Reply | None:
    """Start the hook server with ``request`` on its stdin; its reply, if ready in time."""
    import subprocess  # only when no server answers: not on every prompt

    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(descriptor, "ab") as log:
        server = subprocess.Popen(
            [*argv, FIRST_REQUEST_OPTION],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            cwd=log_path.parent,
            env=dict(environ),
        )
    assert server.stdin is not None and server.stdout is not None
    try:
        with server.stdin:
            server.stdin.write(request.encode())
    except OSError:  # it died at once; its log says why, and the next hook starts another
        return None
    reply = read_until(server.stdout.fileno(), request.deadline)
    server.stdout.close()  # a reply written later goes nowhere: the work is done all the same
    return reply


def read_until(descriptor: int, deadline: float) -> Reply | None:
    """A whole reply read from ``descriptor`` before ``deadline``, else ``None``."""
    chunks: list[bytes] = []
    while (left := deadline - time.time()) > 0:
        ready, _, _ = select.select([descriptor], [], [], left)
        if not ready:
            break
        chunk = os.read(descriptor, 1 << 16)
        if not chunk:
            data = b"".join(chunks)
            return Reply.decode(data) if data else None
        chunks.append(chunk)
    return None


def call(
    path: Path, request: Request, *, start: Callable[[Request], Reply | None] | None = None
) -> Reply | None:
    """The server's reply to ``request``. When none listens, ``start`` starts one with the
    request in hand (``start_with``); without it, a server that another process is starting
    is waited for until the deadline."""
    while True:
        try:
            return exchange(path, request)
        except (FileNotFoundError, ConnectionRefusedError):
            if start is not None:
                return start(request)
        except TimeoutError:
            return None
        if time.time() + RETRY_SECONDS >= request.deadline:
            return None
        time.sleep(RETRY_SECONDS)


__all__ = ["FIRST_REQUEST_OPTION", "call", "exchange", "read_until", "start_with"]
