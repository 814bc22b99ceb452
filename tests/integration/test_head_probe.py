"""A SQLite file's head probe remembers the heads its own writer connection read or wrote and
asks SQLite's ``data_version`` whether another connection has committed since: a commit of
another store in this process, or of another process, must still be seen at the next probe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stratagate.store.records import NewEvent
from stratagate.store.sql import open_event_store

ROOT = Path(__file__).resolve().parents[2]

APPEND_ONE = """
import sys
from stratagate.store.records import NewEvent
from stratagate.store.sql import open_event_store
with open_event_store(sys.argv[1]) as store:
    store.append(sys.argv[2], "s", [NewEvent(sys.argv[3], "Noted", 1, "{}")], None)
"""


def one(event_id: str) -> list[NewEvent]:
    return [NewEvent(event_id=event_id, event_type="Noted", schema_version=1, payload="{}")]


def test_a_commit_of_another_connection_is_seen_by_the_next_probe(tmp_path: Path) -> None:
    database = str(tmp_path / "log.db")
    with open_event_store(database) as mine, open_event_store(database) as theirs:
        mine.append("ns", "s", one("a"), 0)
        assert mine.head("ns") == 1  # its own append: remembered
        assert mine.head("other") == 0
        theirs.append("ns", "s", one("b"), None)
        theirs.append("other", "s", one("c"), None)
        assert mine.head("ns") == 2
        assert mine.head("other") == 3
        mine.append("ns", "s", one("d"), 2)
        assert mine.head("ns") == theirs.head("ns") == 4


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_commit_of_another_process_is_seen_by_the_next_probe(tmp_path: Path) -> None:
    database = str(tmp_path / "log.db")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open_event_store(database) as mine:
        mine.append("ns", "s", one("a"), 0)
        assert mine.head("ns") == 1
        for n, event_id in enumerate(["b", "c"], start=2):
            subprocess.run(
                [sys.executable, "-c", APPEND_ONE, database, "ns", event_id], check=True, env=env
            )
            assert mine.head("ns") == n
        mine.append("ns", "s", one("d"), 3)  # and its own append chains onto theirs
        assert mine.head("ns") == 4
        assert [row.event_id for row in mine.read("ns")] == ["a", "b", "c", "d"]
