"""A namespace as a Ray host serves it (``stratagate.actors.hosted``), without Ray: requests for
background work that arrive while a pass is queued are served by that pass."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from stratagate import StrataGate
from stratagate.actors import pipeline
from stratagate.actors.hosted import SNAPSHOT_KEY, HostedNamespace
from stratagate.options import MemoryOptions
from stratagate.store import Holder, open_store
from tests.support.fakes import SlowOn, TitleSummarizer


class CountingPasses(HostedNamespace):
    """Counts the background passes that ran."""

    passes = 0

    def _background(self, chain: Any) -> None:
        type(self).passes += 1
        super()._background(chain)


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_requests_while_a_pass_is_queued_are_coalesced(tmp_path: Path) -> None:
    database = str(tmp_path / "hosted.db")
    with StrataGate.open(database, "alpha", block_turn_size=1) as memory:
        memory.append_turn("a slow one", "ok", defer_processing=True)  # durable, not sealed
    announce, release = tmp_path / "in-call", tmp_path / "go-on"
    summarizer = SlowOn(TitleSummarizer(), "slow", str(announce), str(release))
    options = MemoryOptions(block_turn_size=1, summarizer=summarizer)
    store = open_store(database)
    try:
        lease = store.acquire_lease("alpha", Holder.current("test"))
        hosted = CountingPasses(store, "alpha", options, lease, recover=False)
        hosted.start(pipeline.DERIVED)
        wait_for(announce)  # the first pass is inside the summarizer
        for _ in range(5):  # turn-by-turn requests while it runs: one more pass covers them
            hosted.start(pipeline.DERIVED)
        release.touch()
        hosted.settle(60, finish=False)
        assert CountingPasses.passes == 2
        assert [b.l0_title for b in hosted.live.view.list_blocks()] == ["a slow one"]
        hosted.release(snapshot_min=1)
    finally:
        release.touch()
        store.close()


def test_a_released_namespace_snapshots_by_its_own_events_not_the_logs(tmp_path: Path) -> None:
    """Positions are global to the database: a namespace of a few events in a long log has no
    tail worth a snapshot when released; one whose own events reach the bound has."""
    database = str(tmp_path / "long.db")
    rows = [{"user": f"turn {i}", "assistant": "ok"} for i in range(60)]
    with StrataGate.open(database, "busy", snapshot_every=0) as memory:
        memory.append_turns(rows, defer_processing=True)  # 60 rows before the others
    store = open_store(database)
    scratch = StrataGate.in_memory("scratch")  # makes the turn commands a memory would send
    try:
        for name, turns, snapshotted in (("small", 3, False), ("large", 60, True)):
            lease = store.acquire_lease(name, Holder.current("test"))
            hosted = HostedNamespace(store, name, MemoryOptions(), lease, recover=False)
            for row in rows[:turns]:
                turn = scratch._turn_command(row["user"], row["assistant"], processing="defer")
                hosted.deliver(turn)
            hosted.release(snapshot_min=50)
            store.release_lease(lease)
            assert (store.load_snapshot(name, SNAPSHOT_KEY) is not None) == snapshotted, name
    finally:
        scratch.close()
        store.close()
