"""A host's channel: a driver's calls through the host's Unix socket answer as Ray's would."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from stratagate.actors.channel import Channel, ChannelLost, ChannelServer, ChannelTimeout
from stratagate.errors import StaleHandleError, StrataGateError


class Target:
    """Stands for a host actor: a few calls, one slow, one failing with a typed error."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def add(self, a: int, b: int) -> int:
        with self._lock:
            self.calls += 1
        return a + b

    def slow(self, seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    def stale(self) -> None:
        raise StaleHandleError("another writer got there first")

    def secret(self) -> str:
        return "never through the channel"

    def unreadable(self) -> object:
        return Unreadable()


class Unreadable:
    """Pickles on the host's side, cannot be unpickled on the caller's (as a class the caller
    cannot import)."""

    def __reduce__(self) -> tuple[object, ...]:
        return (refuse, ())


def refuse() -> None:
    raise ModuleNotFoundError("no module named 'only_on_the_host'")


@pytest.fixture
def server() -> ChannelServer:
    found = ChannelServer(Target(), frozenset({"add", "slow", "stale", "unreadable"}))
    yield found
    found.close()


def test_calls_answer_and_raise_the_hosts_errors(server: ChannelServer) -> None:
    channel = Channel(server.path)
    assert channel.call("add", 2, 3) == 5
    with pytest.raises(StaleHandleError, match="another writer"):
        channel.call("stale")
    with pytest.raises(StrataGateError, match="no call 'secret'"):
        channel.call("secret")
    with pytest.raises(StrataGateError, match="cannot be read here"):
        channel.call("unreadable")
    assert channel.call("add", 1, 1) == 2  # the line still works after errors


def test_threads_call_at_the_same_time(server: ChannelServer) -> None:
    channel = Channel(server.path)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: channel.call("add", n, n), range(200)))
    assert answers == [2 * n for n in range(200)]


def test_a_late_answer_is_a_timeout_and_the_next_call_is_not_confused(
    server: ChannelServer,
) -> None:
    channel = Channel(server.path)
    with pytest.raises(ChannelTimeout):
        channel.call("slow", 0.5, timeout=0.05)
    assert channel.call("add", 4, 4) == 8  # not the slow call's late "done"


def test_a_closed_host_is_a_lost_line(server: ChannelServer) -> None:
    channel = Channel(server.path)
    assert channel.call("add", 1, 2) == 3
    server.close()
    with pytest.raises(ChannelLost):
        channel.call("add", 1, 2)
    with pytest.raises(ChannelLost):  # and stays lost: nothing listens at the path
        channel.call("add", 1, 2)
