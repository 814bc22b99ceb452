"""The hook server: one process per user and database that keeps the memories open, so that a
hook command, which the host starts for every prompt, needs neither to import the memory (about
a second) nor to restore its read models (seconds at tens of thousands of turns).

It listens on a Unix socket in a private directory (``places.socket_path``), answers one request
per connection, one at a time (a request is one JSON document; the reply too), and runs the work
a reply need not wait for after sending it. An exclusive lock beside the socket lets only one
server run per socket; a second one started in a race exits at once. After ``idle`` seconds
without a request, or on SIGTERM, it closes its memories (their snapshot written) and exits.
Other processes (an MCP server, the CLI) may write the same namespaces meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from stratagate.integrations.hooks.client import call
from stratagate.integrations.hooks.protocol import Reply, Request

if TYPE_CHECKING:
    from stratagate.integrations.hooks.service import HookService

MAX_REQUEST_BYTES = 32 * 1024 * 1024
READ_TIMEOUT = 5.0
"""Seconds a connected hook command may take to send its request."""
TICK = 0.5
"""How often the idle time is looked at (seconds)."""
HAND_ON_SECONDS = 30.0
"""How long a server that lost the race keeps trying to hand its first request on."""


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` while the block runs; ``False`` when another process
    holds it (then nothing is held)."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)


def read_request(connection: socket.socket) -> bytes:
    """Everything the client sends before it shuts its side down."""
    connection.settimeout(READ_TIMEOUT)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise ValueError(f"request larger than {MAX_REQUEST_BYTES} bytes")
        chunks.append(chunk)


def serve(
    make_service: Callable[[], HookService],
    path: Path,
    *,
    idle: float,
    log: TextIO,
    first: Request | None = None,
    answer_first: Callable[[Reply], None] | None = None,
) -> bool:
    """Serve until ``idle`` seconds pass without a request (or SIGTERM); ``False`` when another
    server already holds the socket.

    ``first`` is the request of the hook that started this server (it came on stdin): it is
    answered first, through ``answer_first``; a server that finds another one running hands it
    on to that one. The socket listens before ``make_service`` runs (it imports the memory:
    about a second), so the hooks that come meanwhile wait in its queue, not for a socket."""
    reply_first = answer_first or (lambda reply: None)
    with exclusive(path.with_name(path.name + ".lock")) as mine:
        if not mine:
            log.write(f"another hook server serves {path}; handing the request on\n")
            if first is not None:
                reply_first(hand_on(path, first))
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        pid_file = path.with_name(path.name + ".pid")
        service: HookService | None = None
        try:
            listener.bind(str(path))
            os.chmod(path, 0o600)
            listener.listen(64)
            listener.settimeout(TICK)
            descriptor = os.open(pid_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(f"{os.getpid()}\n")
            signal.signal(signal.SIGTERM, _stop)
            log.write(f"serving {path} (pid {os.getpid()}, idle exit after {idle:g} s)\n")
            log.flush()
            service = make_service()
            if first is not None:
                reply_first(service.handle(first))
                service.run_later()
            _loop(service, listener, idle, log)
        except KeyboardInterrupt:
            pass
        finally:
            listener.close()
            for own in (path, pid_file):
                with contextlib.suppress(FileNotFoundError):
                    own.unlink()
            if service is not None:
                service.close()
            log.write("stopped\n")
            log.flush()
        return True


def hand_on(path: Path, request: Request) -> Reply:
    """``request`` delivered to the server at ``path`` (which may still be starting): nobody
    waits on this process, so it tries for longer than the hook did."""
    patient = request._replace(deadline=max(request.deadline, time.time() + HAND_ON_SECONDS))
    reply = call(path, patient)
    return reply or Reply()


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _loop(service: HookService, listener: socket.socket, idle: float, log: TextIO) -> None:
    last = time.monotonic()
    while time.monotonic() - last < idle:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        last = time.monotonic()
        with connection:
            try:
                request = Request.decode(read_request(connection))
            except (OSError, ValueError) as exc:
                log.write(f"unreadable request: {exc!r}\n")
                continue
            reply = service.handle(request)
            with contextlib.suppress(OSError):  # the hook command gave up waiting: fine
                connection.sendall(reply.encode())
        service.run_later()
        last = time.monotonic()


__all__ = ["exclusive", "hand_on", "read_request", "serve"]
