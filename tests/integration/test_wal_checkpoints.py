"""A SQLite file's write-ahead log is checkpointed by a background thread of the store, never
inside an append's commit (where it made one append in a few hundred pause for the copy and
its flush while holding the write lock)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagate.store import checkpoints
from stratagate.store.checkpoints import Checkpointer, checkpoint_whole
from stratagate.store.records import NewEvent
from stratagate.store.sql import SqlEventStore, open_event_store

PAYLOAD = '{"text": "%s"}' % ("x" * 3000)
"""About a page of log per event."""


def append_many(store: SqlEventStore, count: int) -> None:
    for n in range(count):
        event = NewEvent(event_id=f"e{n}", event_type="Noted", schema_version=1, payload=PAYLOAD)
        store.append("ns", "s", [event], None)


def test_no_commit_checkpoints_the_log(tmp_path: Path) -> None:
    database = tmp_path / "log.db"
    with open_event_store(str(database)) as store:
        assert isinstance(store, SqlEventStore) and store._checkpoints is not None
        store._checkpoints.every = 10**9  # no background checkpoint either
        size = database.stat().st_size
        append_many(store, 1500)  # well past SQLite's own threshold of 1,000 pages
        assert database.stat().st_size == size  # every page is still in the log only
        assert store.read("ns")[-1].global_position == 1500


def test_the_background_checkpoint_moves_the_log_into_the_file(tmp_path: Path) -> None:
    database = tmp_path / "log.db"
    with open_event_store(str(database)) as store:
        assert isinstance(store, SqlEventStore) and store._checkpoints is not None
        store._checkpoints.every = 20
        size = database.stat().st_size
        append_many(store, 100)
        store._checkpoints.close()  # waits for the one in flight
        assert store._checkpoints.done >= 1
        assert database.stat().st_size > size + 50 * 4096
        assert len(store.read("ns")) == 100


def test_one_checkpoint_at_a_time_and_a_failure_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = threading.Event()
    release = threading.Event()
    calls: list[int] = []

    def checkpoint() -> None:
        calls.append(1)
        started.set()
        release.wait(10)
        raise OSError("disk gone")

    checkpointer = Checkpointer(checkpoint, every=2)
    checkpointer.committed()
    assert not calls  # one commit of two
    checkpointer.committed()
    assert started.wait(10)
    for _ in range(5):
        checkpointer.committed()  # past ``every`` again, but one is running: none more
    with caplog.at_level(logging.WARNING, logger="stratagate.store.checkpoints"):
        release.set()
        checkpointer.close()
    assert calls == [1]
    assert checkpointer.done == 0
    assert "disk gone" in caplog.text
    for _ in range(2):
        checkpointer.committed()  # closed: nothing starts
    assert calls == [1]


def grown_log(tmp_path: Path) -> int:
    """The log's size after 400 appends (about 8 pages of log each: 13 MB if it never
    started over), with a background checkpoint every 20 commits."""
    database = tmp_path / "log.db"
    with open_event_store(str(database)) as store:
        assert isinstance(store, SqlEventStore) and store._checkpoints is not None
        store._checkpoints.every = 20
        append_many(store, 400)
        grown = Path(f"{database}-wal").stat().st_size
        store._checkpoints.close()
        assert store._checkpoints.done >= 5
        assert len(store.read("ns")) == 400
    return grown


def test_the_log_starts_over_while_a_writer_keeps_appending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each background run copies the whole log, the last commits inside the writers' queue,
    so the next commit starts the log over and overwrites the file in place. A run that only
    copied what was there when it began never caught up with a writer appending meanwhile,
    and the log grew by every commit's pages for as long as the writer wrote."""
    monkeypatch.setattr(checkpoints, "RESTART_BUDGET_S", 60.0)  # however slow the disk is
    assert grown_log(tmp_path) < 400 * 4096 * 8 // 4


def test_a_slow_disk_keeps_the_writers_out_of_the_last_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the pass beside the writers took longer than the budget, the last pass, which the
    appends would wait for, is not run (the log starts over later); within it, it runs inside
    the writers' queue and the whole log is copied."""
    entered: list[int] = []

    @contextlib.contextmanager
    def writers() -> Iterator[None]:
        entered.append(1)
        yield

    driver = sqlite3.connect(tmp_path / "log.db", isolation_level=None)
    try:
        driver.execute("PRAGMA journal_mode=WAL")
        driver.execute("CREATE TABLE t (x TEXT)")
        driver.executemany("INSERT INTO t VALUES (?)", [(PAYLOAD,)] * 50)
        monkeypatch.setattr(checkpoints, "RESTART_BUDGET_S", -1.0)  # every pass is too slow
        assert checkpoint_whole(driver, writers) is False
        assert entered == []
        monkeypatch.setattr(checkpoints, "RESTART_BUDGET_S", 60.0)  # however slow the disk is
        assert checkpoint_whole(driver, writers) is True
        assert entered == [1]
    finally:
        driver.close()
