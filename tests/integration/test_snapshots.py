"""Snapshots are caches that must never change what a memory knows: a damaged one is ignored."""

from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path

import orjson
import pytest

from projections.replay import hydrate, load_snapshot, replay
from stratagate import StrataGate
from stratagate.core.filters import EventFilters
from stratagate.store import EventStore, Snapshot
from stratagate.store.keys import keys_for
from stratagate.store.sql import open_event_store

KEY = "inline"


@pytest.fixture
def database(tmp_path: Path) -> str:
    """A memory with sealed blocks, a forgotten event (a removal from the index) and a snapshot."""
    path = str(tmp_path / "memory.db")
    with StrataGate.open(
        path, "default", block_turn_size=2, summarizer="offline", extractor="offline"
    ) as memory:
        for i in range(8):
            memory.append_turn(f"We decided to use tool{i} for the build on day {i}.", "Noted.")
        events = memory.list_events()
        assert events
        memory.forget_event(events[0].id)
    return path


def rewrite(store: EventStore, snapshot: Snapshot, payload: bytes) -> None:
    store.save_snapshot(dataclasses.replace(snapshot, payload=payload))


def test_a_saved_snapshot_restores_to_the_replayed_state(database: str) -> None:
    with open_event_store(database) as store:
        state, from_snapshot = hydrate(store, "default", KEY)
        assert from_snapshot
        assert state.digests() == replay(store, "default").digests()
        assert state.search.search_events("tool3 build", limit=3, filters=EventFilters()) == replay(
            store, "default"
        ).search.search_events("tool3 build", limit=3, filters=EventFilters())


@pytest.mark.parametrize("damage", ["content", "truncated", "format"])
def test_a_damaged_snapshot_is_ignored_and_the_log_replayed(database: str, damage: str) -> None:
    with open_event_store(database) as store:
        snapshot = store.load_snapshot("default", KEY)
        assert snapshot is not None
        clear = keys_for(store, "default").open_blob(snapshot.payload)  # snapshots are sealed
        assert clear is not None and clear != snapshot.payload
        header, texts = zlib.decompress(clear).split(b"\n", 1)
        if damage == "content":  # same length and shape, but not what the digest was taken over
            at = texts.index(b'"turn":') + len(b'"turn":')
            digit = b"1" if texts[at : at + 1] != b"1" else b"2"
            texts = texts[:at] + digit + texts[at + 1 :]
            payload = zlib.compress(header + b"\n" + texts)
        elif damage == "truncated":
            payload = snapshot.payload[: len(snapshot.payload) // 2]
        else:
            body = orjson.loads(header)
            body["format"] = 999
            payload = zlib.compress(orjson.dumps(body) + b"\n" + texts)
        rewrite(store, snapshot, payload)
        assert load_snapshot(store, "default", KEY) is None
        state, from_snapshot = hydrate(store, "default", KEY)
        assert not from_snapshot
        assert state.digests() == replay(store, "default").digests()
