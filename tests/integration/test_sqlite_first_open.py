"""Several threads opening one new SQLite file at the same moment all get a working store:
the first opens race to switch the file to WAL, and a loser must wait, not fail with
"database is locked" (seen in `stratagate ingest --parallel`)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stratagate import StrataGate


@pytest.mark.slow
def test_concurrent_first_opens_of_a_new_file_all_succeed(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    for trial in range(30):
        database = tmp_path / f"trial-{trial}.db"
        start = threading.Barrier(4)

        def open_and_write(
            namespace: str, database: Path = database, start: threading.Barrier = start
        ) -> None:
            start.wait()
            try:
                with StrataGate.open(database, namespace) as memory:
                    memory.append_turn(f"hello from {namespace}", "noted")
            except BaseException as exc:  # collected: the assertion names them all
                failures.append(exc)

        threads = [threading.Thread(target=open_and_write, args=(f"ns{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
