"""Ray-only behaviour: shared actors, passivation under a bound, recycled actors, rehydration."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import ray
from sqlalchemy import text

from stratagate import StorageConflictError, StrataGate, StrataGateError
from stratagate.actors.channel import Channel
from stratagate.store.sql import open_event_store
from tests.support.fakes import KeywordExtractor, SlowOn, TitleSummarizer

pytestmark = pytest.mark.ray


def test_two_opens_share_actors_and_passivation_rehydrates(
    ray_cluster: None, tmp_path: Path
) -> None:
    database = str(tmp_path / "shared.db")
    first = StrataGate.open(
        database, "alpha", runtime="ray", block_turn_size=2, max_live_namespaces=1
    )
    second = StrataGate.open(database, "alpha", runtime="ray", max_live_namespaces=1)
    try:
        assert first.handles.sealer._actor_id == second.handles.sealer._actor_id
        for i in range(3):
            first.append_turn(f"alpha note {i}", "ok")
        assert second.turn == 3 and len(second.list_blocks()) == 1  # one set of actors, one state
        before = first.verify()
        assert before.ok

        old_sealer = first.handles.sealer
        other = StrataGate.open(database, "beta", runtime="ray", max_live_namespaces=1)
        other.append_turn("beta note", "ok")  # alpha is held open: the bound gives way
        assert other._runtime.directory_stats()["live"] == 2
        other.close()
        assert first._runtime.passivate()  # an operator passivates alpha now
        stats = first._runtime.directory_stats()
        assert stats["live"] == 1 and stats["passivations"] >= 1
        started = stats["actors_started"]
        with StrataGate.open(database, "gamma", runtime="ray", max_live_namespaces=1) as third:
            third.append_turn("gamma note", "ok")  # beta, closed, gives its place to gamma
            after = third._runtime.directory_stats()
            assert after["actors_started"] == started  # gamma runs on recycled actors
            assert ray.get(old_sealer.ping.remote()) == "host"  # no process was stopped

        # the next call to alpha re-activates it from snapshot + log tail, same content
        first.append_turn("alpha note 3", "ok")
        assert first.turn == 4 and [b.start_turn for b in first.list_blocks()] == [1, 3]
        assert first.verify().ok
        other.close()
    finally:
        first.close()
        second.close()


def test_the_directory_outlives_the_memory_that_created_it(
    ray_cluster: None, tmp_path: Path
) -> None:
    """Sequential opens and closes (a platform working through namespaces) share one directory:
    the bound and the passivation count carry over, and a closed namespace's actors stay up."""
    database = str(tmp_path / "sequential.db")
    names = ["one", "two", "three"]
    for name in names:
        with StrataGate.open(database, name, runtime="ray", max_live_namespaces=2) as memory:
            memory.append_turn(f"{name} note", "ok")
            stats = memory._runtime.directory_stats()
    assert stats["live"] == 2 and stats["passivations"] >= 1
    with StrataGate.open(database, "three", runtime="ray", max_live_namespaces=2) as memory:
        assert memory.turn == 1
        assert ray.get(memory.handles.sealer.ping.remote()) is not None


def test_namespaces_nobody_has_open_are_passivated_first(ray_cluster: None, tmp_path: Path) -> None:
    """Under the bound, a closed namespace gives up its place before one a memory still holds,
    even if the held one was used less recently (no thrashing of work in progress)."""
    database = str(tmp_path / "users.db")
    held = StrataGate.open(database, "held", runtime="ray", max_live_namespaces=2)
    try:
        held.append_turn("held note", "ok")
        with StrataGate.open(database, "closed", runtime="ray", max_live_namespaces=2) as closed:
            closed.append_turn("closed note", "ok")
            closed_sealer = closed.handles.sealer
        with StrataGate.open(database, "new", runtime="ray", max_live_namespaces=2) as new:
            new.append_turn("new note", "ok")  # the bound needs a place: 'closed' gives it
            stats = new._runtime.directory_stats()
        assert "held" in ray.get(held.handles.sealer.serving.remote())
        assert "closed" not in ray.get(closed_sealer.serving.remote())  # passivated for 'new'
        assert stats["live"] == 2 and stats["open"] == 2  # held, and new while it was open
    finally:
        held.close()


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_a_write_from_a_superseded_epoch_never_lands(ray_cluster: None, tmp_path: Path) -> None:
    """Race a change of writer against an in-flight call: the sealer is inside the summarizer
    when another activation takes the namespace's lease; the seal it finishes afterwards is
    refused (StorageConflictError) and the log holds nothing of it."""
    database = str(tmp_path / "fence.db")
    announce, release = tmp_path / "in-call", tmp_path / "go-on"
    summarizer = SlowOn(TitleSummarizer(), "slow", str(announce), str(release))
    memory = StrataGate.open(
        database, "alpha", runtime="ray", block_turn_size=1, summarizer=summarizer
    )
    try:
        memory.append_turn("a slow one", "ok", wait=False)
        wait_for(announce)  # the sealer has appended SealStarted and waits in the model
        with open_event_store(database) as store:  # a newer activation takes over the lease
            store.engine.dispose()
            with store.engine.begin() as conn:
                conn.execute(text("UPDATE stratagate_leases SET epoch = epoch + 1"))
        release.touch()
        with pytest.raises(StorageConflictError, match="moved on"):
            memory.drain(timeout=60)
        types = [record.type for record in memory.history()]
        assert types.count("SealStarted") == 1 and "BlockSealed" not in types
        assert memory.verify().ok
    finally:
        release.touch()
        memory.close()


def test_passivating_a_busy_namespace_holds_up_no_activation(
    ray_cluster: None, tmp_path: Path
) -> None:
    """The directory passivates a namespace whose host is inside a model call for it (the
    release has to wait for that call); meanwhile another namespace is activated at once, not
    after the call ends — and a release that ends late takes nothing from a newer activation."""
    database = str(tmp_path / "busy.db")
    announce, release = tmp_path / "in-call", tmp_path / "go-on"
    summarizer = SlowOn(TitleSummarizer(), "slow", str(announce), str(release), limit=600)
    options = {"runtime": "ray", "block_turn_size": 1, "max_live_namespaces": 1}
    busy = StrataGate.open(database, "busy", summarizer=summarizer, **options)
    opened: list[StrataGate] = []
    try:
        busy.append_turn("a slow one", "ok", wait=False)
        wait_for(announce)  # the host serving 'busy' waits in the summarizer
        threading.Thread(target=busy._runtime.passivate, daemon=True).start()
        opener = threading.Thread(
            target=lambda: opened.append(StrataGate.open(database, "other", **options)),
            daemon=True,
        )
        opener.start()
        opener.join(timeout=180)  # a hang guard: the summarizer waits up to 600 s
        assert opened, "activating 'other' waited for the busy namespace's release"
        assert not release.exists()  # the call is still under way
        opened[0].append_turn("other note", "ok")
        release.touch()
        with contextlib.suppress(StrataGateError):  # its lease moved on: the seal is refused
            busy.drain(timeout=120)
        busy.append_turn("after", "ok")  # re-activated under a newer lease
        assert busy.verify().ok and opened[0].verify().ok
        assert opened[0].turn == 1
    finally:
        release.touch()
        busy.close()
        for memory in opened:
            memory.close()


def test_sigkill_of_a_recycled_actor_loses_nothing(ray_cluster: None, tmp_path: Path) -> None:
    """Actors are recycled between two namespaces (bound 1); the extractor process is killed
    in the middle of a model call. Every acknowledged turn is kept, no namespace holds
    another's messages, the job is recovered as interrupted and retried, and both verify."""
    database = str(tmp_path / "kill.db")
    announce, release = tmp_path / "in-call", tmp_path / "never"
    extractor = SlowOn(KeywordExtractor(), "victim", str(announce), str(release), limit=300)
    options = {"runtime": "ray", "block_turn_size": 1, "max_live_namespaces": 1}
    acked: dict[str, list[str]] = {"alpha": [], "beta": []}
    with StrataGate.open(database, "beta", **options) as beta:
        for i in range(3):
            beta.append_turn(f"beta decided {i}", "ok", receipt_id=f"b{i}")
            acked["beta"].append(f"b{i}")
    alpha = StrataGate.open(database, "alpha", extractor=extractor, **options)
    try:
        extractor_pid = ray.get(alpha.handles.extractor.pid.remote())  # asked while it is idle
        alpha.append_turn("we decided victim", "ok", receipt_id="a0")
        acked["alpha"].append("a0")
        alpha.append_turn("second", "ok", receipt_id="a1", wait=False)  # seals: extraction runs
        acked["alpha"].append("a1")
        wait_for(announce)
        os.kill(extractor_pid, signal.SIGKILL)
        with contextlib.suppress(StrataGateError):  # typed, never Ray's own (issue 21: a
            alpha.drain(timeout=120)  # raw OwnerDiedError came out of drain in 5 of 13 kills)
        alpha.append_turn("third", "ok", receipt_id="a2")
        acked["alpha"].append("a2")
        [victim] = [j for j in alpha.list_extraction_jobs() if j.status == "failed"]
        assert victim.status == "failed" and (victim.last_error or "").startswith("interrupted")
        release.touch()
        alpha.resume_pending_work()
        retried = {j.block_id: j for j in alpha.list_extraction_jobs()}[victim.block_id]
        assert (retried.status, retried.attempts) == ("succeeded", 2)
    finally:
        release.touch()
        alpha.close()
    for name in ("alpha", "beta"):
        with StrataGate.open(database, name, **options) as memory:
            assert all(memory.has_ingestion_receipt(r) for r in acked[name])
            texts = [m.content for b in memory.list_blocks() for m in b.l5_raw]
            texts += [m.content for m in memory.list_open_tail()]
            assert all((name == "beta") == t.startswith("beta") for t in texts if t != "ok")
            assert memory.verify().ok


SECOND_DRIVER = """
import sys
from stratagate import StrataGate
database, address = sys.argv[1:3]
with StrataGate.open(database, "shared", runtime="ray", ray_address=address) as memory:
    print(memory.handles.sealer._actor_id.hex(), flush=True)
    memory.append_turn("from the second driver", "ok", thread_id="driver-2")
    print(memory.turn, flush=True)
"""


def test_a_second_driver_talks_to_the_same_actors(ray_cluster: None, tmp_path: Path) -> None:
    """Another process connected to the same Ray cluster finds the namespace's actors through
    the named directory instead of starting its own, and its turn is this process's too."""
    import subprocess
    import sys

    database = str(tmp_path / "drivers.db")
    with StrataGate.open(database, "shared", runtime="ray") as memory:
        memory.append_turn("from the first driver", "ok", thread_id="driver-1")
        address = ray.get_runtime_context().gcs_address
        done = subprocess.run(
            [sys.executable, "-c", SECOND_DRIVER, database, address],
            capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        actor, turns = done.stdout.split()
        assert actor == memory.handles.sealer._actor_id.hex()
        assert turns == "2" and memory.turn == 2
        assert memory.verify().ok


def test_a_directory_an_older_stratagate_started_is_left_alone(
    ray_cluster: None, tmp_path: Path
) -> None:
    """A long-lived cluster whose directory was started by an older stratagate (other call
    signatures, under the unversioned name): this version's memories get their own directory."""

    @ray.remote(num_cpus=0)
    class OlderDirectory:
        def activate(self, database: str, namespace: str) -> None:
            raise AssertionError("an older directory was asked to activate")

    older = OlderDirectory.options(  # type: ignore[attr-defined]
        name="stratagate-directory", namespace="stratagate", lifetime="detached"
    ).remote()
    try:
        with StrataGate.open(str(tmp_path / "m.db"), "versioned", runtime="ray") as memory:
            memory.append_turn("a note", "ok")
            assert memory.turn == 1
    finally:
        ray.kill(older)


def noted(database: str, prefix: str, count: int, **options: Any) -> list[StrataGate]:
    """``count`` memories on Ray, each holding one turn (the caller closes them)."""
    memories = [
        StrataGate.open(database, f"{prefix}{n}", runtime="ray", **options) for n in range(count)
    ]
    for memory in memories:
        memory.append_turn("a note", "ok")
    return memories


def test_the_directory_is_the_pools_first_host(ray_cluster: None, tmp_path: Path) -> None:
    """A pool of one host per CPU is that many processes: the directory serves namespaces too
    (on a fresh cluster, one process and its imports fewer to start)."""
    from stratagate.actors.ray_pool import DIRECTORY_NAME

    memories = noted(str(tmp_path / "pool.db"), "ns", 6, max_live_namespaces=8)
    try:
        directory = ray.get_actor(DIRECTORY_NAME, namespace="stratagate")
        served = {ray.get(memory.handles.sealer.pid.remote()) for memory in memories}
        assert ray.get(directory.pid.remote()) in served
        assert len(served) <= memories[0]._runtime.directory_stats()["hosts"] == 2
        assert all(memory.verify().ok for memory in memories)
    finally:
        for memory in memories:
            memory.close()


def test_the_directory_dying_with_its_namespaces_loses_nothing(
    ray_cluster: None, tmp_path: Path
) -> None:
    """The directory is also a host: when its process dies, the namespaces it served are
    re-activated by a new directory (which takes the dead holder's leases over)."""
    from stratagate.actors.ray_pool import DIRECTORY_NAME

    database = str(tmp_path / "directory.db")
    memories = [
        StrataGate.open(database, f"d{n}", runtime="ray", block_turn_size=2, max_live_namespaces=4)
        for n in range(4)
    ]
    try:
        for memory in memories:
            memory.append_turn("we decided a", "ok")
        directory = ray.get_actor(DIRECTORY_NAME, namespace="stratagate")
        served = [memory._runtime._host._actor_id == directory._actor_id for memory in memories]
        assert any(served)
        os.kill(ray.get(directory.pid.remote()), signal.SIGKILL)
        for memory in memories:
            memory.append_turn("we decided b", "ok")
            memory.append_turn("we decided c", "ok", wait=False)
            memory.drain(timeout=120)
            assert memory.turn == 3 and memory.verify().ok
            assert len(memory.list_blocks()) == 1
    finally:
        for memory in memories:
            memory.close()


def test_the_directory_answers_opens_and_closes_on_its_channel(
    ray_cluster: None, tmp_path: Path
) -> None:
    """A memory's open (``activate``) and close (``detach``) reach the directory on this
    machine through its channel, as turns reach a host: no Ray call per namespace."""
    from stratagate.actors.ray_pool import DIRECTORY_NAME, pack
    from stratagate.options import MemoryOptions

    database = str(tmp_path / "channel.db")
    with StrataGate.open(database, "first", runtime="ray") as memory:
        memory.append_turn("a note", "ok")
    directory = ray.get_actor(DIRECTORY_NAME, namespace="stratagate")
    _, path = ray.get(directory.channel.remote())
    channel = Channel(path)
    args = (database, "second", 8, pack(MemoryOptions()), True, True)
    host = channel.call("activate", *args)
    assert ray.get(host.ping.remote()) == "host"
    assert channel.call("activate", *args)._actor_id == host._actor_id  # live: the same host
    channel.call("detach", database, "second")
    channel.call("detach", database, "second")
    assert ray.get(directory.stats.remote())["open"] == 0
    assert "second" in ray.get(host.serving.remote())  # detached, still live until the bound
    channel.close()


def test_a_host_killed_behind_the_directorys_back_is_replaced_at_an_open(
    ray_cluster: None, tmp_path: Path
) -> None:
    """An open (the directory's ``activate``, answered on its channel's thread) that finds its
    host dead retires it, starts another and serves the namespace; nothing is lost."""
    from stratagate.actors.ray_pool import DIRECTORY_NAME

    database = str(tmp_path / "replaced.db")
    options = {"runtime": "ray", "max_live_namespaces": 16}
    memories = noted(database, "held", 4, max_live_namespaces=16)
    try:
        directory = ray.get_actor(DIRECTORY_NAME, namespace="stratagate")
        started = ray.get(directory.stats.remote())["actors_started"]
        [other] = {m._runtime._host for m in memories if m._runtime._host != directory}
        os.kill(ray.get(other.pid.remote()), signal.SIGKILL)
        for n in range(4):  # at least one of them is assigned to the dead host first
            with StrataGate.open(database, f"new{n}", **options) as memory:
                memory.append_turn("another note", "ok")
                assert memory.turn == 1
        stats = ray.get(directory.stats.remote())
        assert stats["actors_started"] == started + 1 and stats["hosts"] == 2
        for memory in memories:
            memory.append_turn("after the loss", "ok")
            assert memory.turn == 2 and memory.verify().ok
    finally:
        for memory in memories:
            memory.close()
