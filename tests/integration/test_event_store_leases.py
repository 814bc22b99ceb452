"""Writer leases on every backend: one live writer per namespace, epochs that fence the stale,
takeover only from holders that are gone, and a broken log that is never extended."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from stratagate.errors import FencedWriterError, LogIntegrityError, WriterBusyError
from stratagate.store.leases import Holder
from stratagate.store.records import NewEvent


def new(event_id: str) -> NewEvent:
    return NewEvent(event_id, "Noted", 1, orjson.dumps({"id": event_id}).decode())


def gone_process() -> Holder:
    """A holder on this host whose process has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return Holder(socket.gethostname(), child.pid, 1, "crashed")


def test_a_lease_fences_every_earlier_epoch(store: Any) -> None:
    me = Holder.current("test")
    first = store.acquire_lease("ns", me)
    assert first.epoch == 1
    store.append("ns", "s", [new("a")], 0, lease=first)
    with pytest.raises(WriterBusyError, match="test process"):
        store.acquire_lease("ns", me)  # even this process: the first writer is still open
    store.renew_lease(first)
    store.release_lease(first)
    second = store.acquire_lease("ns", me)
    assert second.epoch == 2
    with pytest.raises(FencedWriterError):
        store.append("ns", "s", [new("late")], 1, lease=first)  # the late write never lands
    with pytest.raises(FencedWriterError):
        store.renew_lease(first)
    store.append("ns", "s", [new("b")], 1, lease=second)
    assert [row.event_id for row in store.read("ns")] == ["a", "b"]
    assert store.acquire_lease("other", me).epoch == 1  # namespaces have their own leases


def test_a_lease_whose_holder_is_gone_is_taken_over(store: Any) -> None:
    dead = store.acquire_lease("ns", gone_process())
    taken = store.acquire_lease("ns", Holder.current("next"))
    assert taken.epoch == dead.epoch + 1
    with pytest.raises(FencedWriterError):
        store.append("ns", "s", [new("from the dead")], 0, lease=dead)


def test_a_reused_pid_is_not_the_holder(store: Any) -> None:
    me = Holder.current()
    store.acquire_lease("ns", Holder(me.host, me.pid, me.started - 1, "earlier process"))
    assert store.acquire_lease("ns", me).epoch == 2


def test_a_holder_on_another_host_lives_as_long_as_it_renews(store: Any) -> None:
    remote = Holder("elsewhere.invalid", 4242, 1, "remote")
    lease = store.acquire_lease("ns", remote, ttl_s=0.5)
    with pytest.raises(WriterBusyError, match=r"elsewhere\.invalid"):
        store.acquire_lease("ns", Holder.current())
    time.sleep(0.3)
    store.renew_lease(lease)
    time.sleep(0.3)
    with pytest.raises(WriterBusyError):
        store.acquire_lease("ns", Holder.current())  # renewed 0.3 s ago: still alive
    time.sleep(0.6)
    assert store.acquire_lease("ns", Holder.current()).epoch == 2  # silent too long: gone


def test_relaxed_commits_chain_like_the_others(store: Any) -> None:
    store.append("ns", "s", [new("a")], 0)
    store.append("ns", "s", [new("b")], 1, durable=False)
    store.append("ns", "s", [new("c")], 2)
    assert [row.event_id for row in store.read("ns")] == ["a", "b", "c"]
    assert store.verify_chain("ns") is None


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE stratagate_heads SET last_hash = 'f' || substr(last_hash, 2)",
        "DELETE FROM stratagate_events WHERE stream_version = 2",
        "DELETE FROM stratagate_heads",
    ],
)
def test_a_writer_does_not_extend_a_broken_log(
    store: Any, raw_sql: Callable[..., None], damage: str
) -> None:
    store.append("ns", "s", [new("a"), new("b")], 0)
    raw_sql(damage)
    before = store.read("ns")
    with pytest.raises(LogIntegrityError) as caught:
        store.append("ns", "s", [new("c")], None)
    assert caught.value.position is not None
    assert store.read("ns") == before  # nothing appended
