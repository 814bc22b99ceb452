"""A namespace as a Ray host serves it (``stratagate.actors.hosted``), without Ray: requests for
background work that arrive while a pass is queued are served by that pass."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from stratagate import StrataGate
from stratagate.actors import pipeline
from stratagate.actors.hosted import HostedNamespace
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
