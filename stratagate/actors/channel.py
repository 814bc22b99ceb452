"""A direct line from a driver to a host actor on the same machine: a Unix socket beside Ray.

A Ray actor call costs about 0.6 ms of CPU in the caller and as much in the actor (the task's
submission and scheduling, the reply's object), measured on this project's 2-core machine; a
turn appended with ``wait=False`` is one call, so on the plain path that machinery cost as much
as the turn itself. A host therefore also listens on a Unix socket in a directory of its own
(mode 0700: only this user's processes can connect), and a driver on the same machine sends the
namespace's calls there — one cloudpickled frame each way, on a connection kept open — while Ray
still does everything else: starting and placing the actors, the directory, and the calls to
hosts on other machines. A line that breaks (the host died) raises ``ChannelLost``, which the
runtime treats as Ray's ``RayActorError``; a call past its timeout raises ``ChannelTimeout``
and its connection is dropped (its late answer goes nowhere).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from ray import cloudpickle

from stratagate.errors import StrataGateError

HEADER = struct.Struct("!Q")
"""Each frame: its length, then that many bytes of a cloudpickled value."""


class ChannelLost(StrataGateError):
    """The host at the other end of a channel is gone (or never answered)."""


class ChannelTimeout(StrataGateError):
    """A call through a channel did not answer within its timeout."""


def _dumps(value: Any) -> bytes:
    return bytes(cloudpickle.dumps(value))  # type: ignore[no-untyped-call]


def _send(conn: socket.socket, data: bytes) -> None:
    conn.sendall(HEADER.pack(len(data)) + data)


def _receive(conn: socket.socket) -> bytes | None:
    """One frame, or ``None`` when the other end closed the connection between frames."""
    header = _exactly(conn, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    body = _exactly(conn, size)
    if body is None:
        raise ConnectionResetError("the connection closed inside a frame")
    return body


def _exactly(conn: socket.socket, size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            if left == size:
                return None
            raise ConnectionResetError("the connection closed inside a frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


SOCKET_PATH_MAX = 100
"""A Unix socket's path must fit ``sun_path`` (108 bytes on Linux, with its NUL)."""


def _short_enough(within: str | None) -> str | None:
    """``within`` when a socket's path below it fits, else ``None`` (the system's temp dir)."""
    if within is None or len(within) + len("/sg-12345678/calls") > SOCKET_PATH_MAX:
        return None
    return within if os.path.isdir(within) else None


class ChannelServer:
    """Answers calls of ``methods`` on ``target`` from this machine's drivers, one thread per
    connection (the target is already safe for concurrent calls: a threaded Ray actor)."""

    def __init__(self, target: object, methods: frozenset[str], within: str | None = None) -> None:
        self._target = target
        self._methods = methods
        self._directory = tempfile.mkdtemp(prefix="sg-", dir=_short_enough(within))  # 0700
        self.path = os.path.join(self._directory, "calls")
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.bind(self.path)
        self._socket.listen(256)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="stratagate-channel", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.add(conn)
        try:
            with conn, contextlib.suppress(OSError):
                while (frame := _receive(conn)) is not None:
                    _send(conn, self._answer(frame))
        finally:
            with self._lock:
                self._open.discard(conn)

    def _answer(self, frame: bytes) -> bytes:
        """The reply frame: ``(True, result)``, or ``(False, the exception raised)``."""
        try:
            method, args = cloudpickle.loads(frame)
            if method not in self._methods:
                raise StrataGateError(f"a host answers no call {method!r} on its channel")
            reply: tuple[bool, Any] = (True, getattr(self._target, method)(*args))
        except Exception as exc:
            reply = (False, exc)
        try:
            return _dumps(reply)
        except Exception as exc:  # an answer or an error that does not pickle: said as text
            error = reply[1] if not reply[0] else exc
            return _dumps((False, StrataGateError(f"{type(error).__name__}: {error}")))

    def close(self) -> None:
        """Stop listening and hang up on every caller (they see ``ChannelLost``)."""
        with contextlib.suppress(OSError):
            self._socket.close()
        with self._lock:
            open_, self._open = self._open, set()
        for conn in open_:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        shutil.rmtree(self._directory, ignore_errors=True)


class Channel:
    """A driver's connections to one host's socket: each call takes an idle one (or opens one),
    so the driver's threads call the host at the same time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._idle: list[socket.socket] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def call(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        """``method(*args)`` on the host; raises what it raised there."""
        conn = self._take()
        try:
            conn.settimeout(timeout)
            _send(conn, _dumps((method, args)))
            frame = _receive(conn)
        except TimeoutError as exc:
            conn.close()
            raise ChannelTimeout(f"{method} still busy after {timeout} s") from exc
        except OSError as exc:
            conn.close()
            raise ChannelLost(f"the host's channel broke: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        if frame is None:
            conn.close()
            raise ChannelLost("the host closed its channel")
        self._give(conn)
        try:
            ok, value = cloudpickle.loads(frame)
        except Exception as exc:  # e.g. an error class this process cannot import
            raise StrataGateError(
                f"{method}: the host's answer cannot be read here: {exc}"
            ) from exc
        if ok:
            return value
        raise value

    def _take(self) -> socket.socket:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's connections are not its
                self._idle, self._pid = [], os.getpid()
            if self._idle:
                return self._idle.pop()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.path)
        except OSError as exc:
            conn.close()
            raise ChannelLost(f"cannot reach the host's channel: {exc}") from exc
        return conn

    def _give(self, conn: socket.socket) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class Channels:
    """This process's channels, one per host actor: looked up once per host, and only used for
    hosts on this machine (their socket is here); ``None`` for the others (Ray carries those)."""

    def __init__(self) -> None:
        self._known: dict[Any, Channel | None] = {}
        self._lock = threading.Lock()

    def of(self, key: Any, address: Callable[[], tuple[str, str]]) -> Channel | None:
        """The channel of the host ``key``; ``address()`` asks the host (once) for its node's
        address and its socket's path."""
        with self._lock:
            if key in self._known:
                return self._known[key]
        host_ip, path = address()
        here = node_ip()
        channel = Channel(path) if host_ip == here and os.path.exists(path) else None
        with self._lock:
            return self._known.setdefault(key, channel)

    def forget(self, key: Any) -> None:
        """Drop a lost host's channel."""
        with self._lock:
            channel = self._known.pop(key, None)
        if channel is not None:
            channel.close()


def node_ip() -> str:
    """This machine's address in the Ray cluster."""
    import ray.util

    return str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]


__all__ = ["Channel", "ChannelLost", "ChannelServer", "ChannelTimeout", "Channels", "node_ip"]
