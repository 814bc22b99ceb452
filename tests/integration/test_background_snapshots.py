"""Periodic snapshots are written by a background thread of a state of its own: turns only ask,
a failed write never fails a turn, and a key destroyed while the writer folds voids its write."""

from __future__ import annotations

import gc
import sqlite3
import threading
from pathlib import Path
from typing import Any

from projections.replay import load_snapshot, replay
from projections.search_index import SearchIndex
from stratagate import StrataGate
from stratagate.actors.snapshot_writer import SnapshotWriter
from stratagate.store import EventStore, Snapshot
from stratagate.store.keys import NamespaceKeys, keyring_for
from stratagate.store.sql import open_event_store

SECRET = "zebrafishdb"


def writer_of(memory: StrataGate) -> SnapshotWriter:
    writer: SnapshotWriter = memory._runtime.live.snapshots  # type: ignore[attr-defined]
    return writer


def store_of(memory: StrataGate) -> EventStore:
    store: EventStore = memory._runtime.store  # type: ignore[attr-defined]
    return store


def turns(memory: StrataGate, count: int, *, thread: str | None = None, word: str = "") -> None:
    for i in range(count):
        memory.append_turn(f"turn {i} about {word or 'weather'}", "noted", thread_id=thread)


def turns_cards_turns(
    memory: StrataGate, first: int, cards: int, then: int, *, then_thread: str | None = None
) -> None:
    """Turns about a harbour, cards from the first block, then turns about a lighthouse: what
    the search index defers to its first read, of both kinds, in fold order."""
    turns(memory, first, word="harbour")
    source = memory.list_blocks()[0].id
    memory.add_events(
        {"title": f"note {i}", "summary": f"decided {i}", "source_block_id": source}
        for i in range(cards)
    )
    turns(memory, then, thread=then_thread, word="lighthouse")


def test_turns_ask_and_a_background_thread_writes_a_snapshot_equal_to_a_replay(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "memory.db")
    saved_by: list[str] = []
    with StrataGate.open(database, "w", snapshot_every=10, block_turn_size=3) as memory:
        store = store_of(memory)
        save = store.save_snapshot

        def observed(snapshot: Snapshot) -> None:
            saved_by.append(threading.current_thread().name)
            save(snapshot)

        store.save_snapshot = observed  # type: ignore[method-assign]
        turns(memory, 30)
        writer = writer_of(memory)
        writer.join()
        assert writer.counters.written >= 1 and writer.counters.failed == 0
        assert saved_by and all(name.startswith("stratagate-snapshot-") for name in saved_by)
        snapshot = store.load_snapshot("w", "inline")
        assert snapshot is not None and snapshot.position == writer.position > 0
        restored = load_snapshot(store, "w", "inline")
        assert restored is not None
        assert restored.digests() == replay(store, "w", until=snapshot.position).digests()


def test_a_failing_snapshot_write_never_fails_a_turn(tmp_path: Path) -> None:
    database = str(tmp_path / "memory.db")
    memory = StrataGate.open(database, "w", snapshot_every=10, block_turn_size=3)
    try:
        turns(memory, 2)
        with sqlite3.connect(database) as conn:  # every snapshot write fails from now on
            conn.execute("DROP TABLE stratagate_snapshots")
        turns(memory, 30)
        writer = writer_of(memory)
        writer.join()
        assert writer.counters.failed >= 1 and writer.counters.written == 0
        assert "stratagate_snapshots" in writer.counters.last_error
        assert memory.stats().turns == 32
    finally:
        memory.close()  # the close's own snapshot fails too: a cache, never raised


def test_a_key_destroyed_while_the_writer_folds_voids_its_snapshot(tmp_path: Path) -> None:
    database = str(tmp_path / "memory.db")
    options: dict[str, Any] = {"snapshot_every": 10, "block_turn_size": 3}
    first = StrataGate.open(database, "w", **options)
    try:
        turns(first, 4, thread="secret", word=SECRET)
        writer = writer_of(first)
        writer.join()
        with writer._save_lock:  # the writer folds, then waits to save
            turns(first, 8, thread="public")
            assert writer.busy
            with StrataGate.open(database, "w", **options) as second:  # another handle erases
                second.erase_thread("secret", reason="test")
        writer.join()
        assert writer.counters.skipped == 1
        assert "destroyed" in writer.counters.last_skip
        with open_event_store(database) as store:  # what is stored reads as a replay now does
            stored = store.load_snapshot("w", "inline")
            if stored is not None:
                restored = load_snapshot(store, "w", "inline")
                assert restored is not None
                assert restored.digests() == replay(store, "w", until=stored.position).digests()
    finally:
        first.close()


def test_a_new_namespace_counts_its_own_rows_not_the_databases(tmp_path: Path) -> None:
    """Positions are global to the database: a namespace opened after others wrote many rows
    asks for no snapshot after its first few turns (it did at every first append, issue 26)."""
    database = str(tmp_path / "memory.db")
    with StrataGate.open(database, "busy", snapshot_every=10, block_turn_size=50) as memory:
        turns(memory, 25)  # 25+ rows of another namespace
    with StrataGate.open(database, "new", snapshot_every=10, block_turn_size=50) as memory:
        turns(memory, 3)
        writer = writer_of(memory)
        writer.join()
        assert writer.counters.written == 0
        turns(memory, 12)  # past snapshot_every of its own rows: now it asks
        writer.join()
        assert writer.counters.written >= 1


def test_the_writer_runs_no_garbage_collection_of_its_own(tmp_path: Path) -> None:
    """Its state is a second copy of the namespace's: a collection there walks every object of
    the process while holding the GIL, and the turns wait for it."""
    database = str(tmp_path / "memory.db")
    writing = threading.Event()
    collected: list[int] = []

    def noted(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and writing.is_set() and threading.current_thread() is not main:
            collected.append(info["generation"])

    main = threading.current_thread()
    with StrataGate.open(database, "w", snapshot_every=0, block_turn_size=3) as memory:
        turns(memory, 30)
        writer = writer_of(memory)
        write = writer._write

        def observed(generation: int) -> None:
            writing.set()
            try:
                write(generation)
            finally:
                writing.clear()

        writer._write = observed  # type: ignore[method-assign]
        thresholds = gc.get_threshold()
        gc.set_threshold(1, 1, 1)  # a collection of every generation at almost every allocation
        gc.callbacks.append(noted)
        try:
            assert writer.request()
            writer.join()
        finally:
            gc.callbacks.remove(noted)
            gc.set_threshold(*thresholds)
        assert writer.counters.written == 1 and writer.counters.failed == 0
        assert collected == []  # none while it folded, encoded and saved its state


def test_the_writer_indexes_what_the_dump_would_in_slices_and_saves_the_same_state(
    tmp_path: Path,
) -> None:
    """The search index defers its turns and cards to their first read, so a snapshot's dump
    indexed them all at once, holding the GIL while the turns waited. The writer's fold now
    indexes them a few at a time (``index_some``, between short pauses): nothing is left for the
    dump, and what it saves is what a replay holds."""
    database = str(tmp_path / "memory.db")
    with StrataGate.open(database, "w", snapshot_every=0, block_turn_size=3) as memory:
        turns_cards_turns(memory, 40, 20, 5)
        store = store_of(memory)
        state = writer_of(memory)._fold(NamespaceKeys(keyring_for(store), "w"), set())
        search = state.models["search"]
        assert isinstance(search, SearchIndex)
        assert not search._pending_raw and not search._pending_events
        assert state.digests() == replay(store, "w").digests()


def test_index_some_in_pieces_gives_the_postings_of_one_pass(tmp_path: Path) -> None:
    """Indexing the waiting turns and cards a few at a time leaves the same index, in the same
    order, as indexing them all on the first read."""
    database = str(tmp_path / "memory.db")
    with StrataGate.open(database, "w", snapshot_every=0, block_turn_size=3) as memory:
        turns_cards_turns(memory, 17, 7, 4, then_thread="other")
        pieces, whole = replay(store_of(memory), "w"), replay(store_of(memory), "w")
    search = pieces.models["search"]
    assert isinstance(search, SearchIndex) and search._pending_raw and search._pending_events
    steps = 0
    while search.index_some(3):
        steps += 1
    assert steps > 5 and not search._pending_raw and not search._pending_events
    assert search.snapshot() == whole.models["search"].snapshot()
