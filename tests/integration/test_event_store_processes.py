"""Several OS processes on one SQLite file or PostgreSQL schema: nothing lost, nothing doubled,
a catch-up reader skips nothing, and a writer killed mid-append leaves no trace of its batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from stratagate.store.records import NewEvent, StoredEvent
from stratagate.store.sql import open_event_store

if TYPE_CHECKING:
    from conftest import Backend

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

WORKER = Path(__file__).with_name("event_store_worker.py")
ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
WORKERS, COUNT = 4, 12


def spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args], stdout=subprocess.PIPE, text=True, env=env
    )


@pytest.mark.parametrize("file_backend", BACKENDS, indirect=True)
def test_concurrent_processes_lose_and_duplicate_nothing(
    file_backend: Backend, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    names = [f"w{n}" for n in range(WORKERS)]
    workers = [
        spawn(
            "mixed",
            "--database",
            file_backend.database,
            "--namespace",
            "ns",
            "--count",
            str(COUNT),
            "--worker",
            name,
            "--go",
            str(go),
        )
        for name in names
    ]
    with open_event_store(file_backend.database) as store:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        go.touch()
        tailed: list[StoredEvent] = []  # a catch-up reader following the log as it grows
        while any(worker.poll() is None for worker in workers):
            tailed += store.read_all(after=tailed[-1].global_position if tailed else 0, limit=50)
            time.sleep(0.01)
        assert [worker.wait() for worker in workers] == [0] * WORKERS
        tailed += store.read_all(after=tailed[-1].global_position if tailed else 0)
        rows = store.read("ns")

        own = {
            name: [f"{name}-own-{i}-{k}" for i in range(COUNT) for k in range(1 + i % 3)]
            for name in names
        }
        shared = {name: [f"{name}-shared-{i}" for i in range(COUNT)] for name in names}
        expected = sorted(id_ for ids in [*own.values(), *shared.values()] for id_ in ids)
        assert sorted(row.event_id for row in rows) == expected  # nothing lost, nothing doubled
        assert tailed == rows  # the tailing reader saw every row once, in order
        assert [row.global_position for row in rows] == list(range(1, len(rows) + 1))
        for name in names:
            mine = [row for row in rows if row.stream == f"own-{name}"]
            assert [row.event_id for row in mine] == own[name]
            assert [row.stream_version for row in mine] == list(range(1, len(mine) + 1))
        in_shared = [row for row in rows if row.stream == "shared"]
        assert [row.stream_version for row in in_shared] == list(range(1, WORKERS * COUNT + 1))
        for name in names:
            assert [
                row.event_id for row in in_shared if row.event_id.startswith(f"{name}-")
            ] == shared[name]
        assert store.verify_chain("ns") is None
        assert store.count("ns") == len(expected) and store.head("ns") == rows[-1].global_position


@pytest.mark.parametrize("kill_at", ["insert", "commit"])
@pytest.mark.parametrize("file_backend", BACKENDS, indirect=True)
def test_a_writer_killed_mid_append_leaves_no_partial_batch(
    file_backend: Backend, kill_at: str
) -> None:
    big = 20_000
    with open_event_store(file_backend.database) as store:
        before = store.append(
            "ns", "small", [NewEvent(f"pre-{i}", "Ticked", 1, "{}") for i in range(10)], 0
        )
    writer = spawn(
        "big",
        "--database",
        file_backend.database,
        "--namespace",
        "ns",
        "--count",
        str(big),
        "--kill-at",
        kill_at,
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "started"
    os.kill(writer.pid, signal.SIGKILL)
    assert writer.wait() == -signal.SIGKILL

    with open_event_store(file_backend.database) as store:
        count = store.count("ns")
        if kill_at == "commit":
            assert count == 10  # killed inside the open transaction: the batch must be gone
        assert count in (10, 10 + big)  # never a partial batch
        assert len(store.read("ns")) == count
        assert store.stream_version("ns", "big") == count - 10
        assert store.verify_chain("ns") is None
        after = store.append("ns", "small", [NewEvent("post", "Ticked", 1, "{}")], 10)
        assert after[0].global_position == store.head("ns") > before[-1].global_position
        assert store.verify_chain("ns") is None
        if file_backend.name == "sqlite":
            with store.engine.connect() as conn:
                assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"


@pytest.mark.parametrize("file_backend", BACKENDS, indirect=True)
def test_processes_appending_to_distinct_namespaces_lose_nothing(
    file_backend: Backend, tmp_path: Path
) -> None:
    """Writers of different namespaces do not wait for one another on PostgreSQL (each holds
    only its namespace's lock); each namespace still gets its rows in position order, a
    per-namespace catch-up reader skips none, and every chain verifies."""
    go = tmp_path / "go"
    names = [f"tenant-{n}" for n in range(WORKERS)]
    workers = [
        spawn(
            "solo",
            "--database",
            file_backend.database,
            "--namespace",
            name,
            "--count",
            str(COUNT),
            "--go",
            str(go),
        )
        for name in names
    ]
    with open_event_store(file_backend.database) as store:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        go.touch()
        tailed: dict[str, list[StoredEvent]] = {name: [] for name in names}
        while any(worker.poll() is None for worker in workers):
            for name, rows in tailed.items():  # one catch-up reader per namespace
                rows += store.read(name, after=rows[-1].global_position if rows else 0)
            time.sleep(0.005)
        assert [worker.wait() for worker in workers] == [0] * WORKERS
        expected = sum(1 + i % 3 for i in range(COUNT))
        for name, rows in tailed.items():
            rows += store.read(name, after=rows[-1].global_position if rows else 0)
            stored = store.read(name)
            assert rows == stored and len(stored) == expected  # nothing skipped, nothing lost
            positions = [row.global_position for row in stored]
            assert positions == sorted(positions) and len(set(positions)) == len(positions)
            assert [row.stream_version for row in stored] == list(range(1, expected + 1))
            assert store.verify_chain(name) is None
        everything = store.read_all()
        assert len({row.global_position for row in everything}) == WORKERS * expected


def test_a_forked_child_queues_behind_its_parent_on_descriptors_of_its_own(
    tmp_path: Path,
) -> None:
    """A child forked from a writer appends through the parent's store object: it opens its own
    queue descriptor and connection (an ``flock`` is shared by every copy of one descriptor,
    so on the parent's it would not wait), and lands after the parent lets go."""
    store = open_event_store(tmp_path / "log.db")
    store.append("ns", "s", [NewEvent("parent-0", "Ticked", 1, "{}")], 0)
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            os.read(go_read, 1)
            store.append("ns", "s", [NewEvent("child-0", "Ticked", 1, "{}")], None)
            os.write(done_write, repr(time.monotonic()).encode())
            code = 0
        finally:
            os._exit(code)
    assert store._writers is not None
    with store._writers.turn():  # the parent holds the writers' queue
        os.write(go_write, b"g")
        time.sleep(0.5)
        released = time.monotonic()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    landed = float(os.read(done_read, 64))
    assert landed >= released  # it waited for the parent's turn
    assert [row.event_id for row in store.read("ns")] == ["parent-0", "child-0"]
    assert store.verify_chain("ns") is None
    store.close()
