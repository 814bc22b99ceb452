"""The hook command's side of the hook server: send the request, start the server when none
answers, and give up at the deadline (stdlib only: this runs on every prompt).

A server that is not running is started detached (its own session, output to its log file) and
connected to as soon as it listens; a reply that does not come by the request's deadline is
``None``: the server goes on with the work (a capture completes, a memory finishes opening) and
the next hook finds it ready.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from stratagate.integrations.hooks.protocol import Reply, Request

RETRY_SECONDS = 0.02
"""How often a server that is starting is tried again."""


def start_server(argv: Sequence[str], log_path: Path, environ: Mapping[str, str]) -> None:
    """Start the hook server detached from the hook command (it outlives it)."""
    import subprocess  # only when no server answers: not on every prompt

    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(descriptor, "ab") as log:
        subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            cwd=log_path.parent,
            env=dict(environ),
        )


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


def call(
    path: Path,
    request: Request,
    *,
    server_argv: Sequence[str],
    log_path: Path,
    environ: Mapping[str, str],
) -> Reply | None:
    """The server's reply to ``request``, starting the server once if none listens."""
    started = False
    while True:
        try:
            return exchange(path, request)
        except (FileNotFoundError, ConnectionRefusedError):
            if not started:
                start_server(server_argv, log_path, environ)
                started = True
        except TimeoutError:
            return None
        if time.time() + RETRY_SECONDS >= request.deadline:
            return None
        time.sleep(RETRY_SECONDS)


def server_pid(path: Path) -> int | None:
    """The pid the server at ``path`` wrote, when it runs."""
    try:
        return int(path.with_name(path.name + ".pid").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


__all__ = ["call", "exchange", "server_pid", "start_server"]
