"""Snapshots are caches that must never change what a memory knows: a damaged one is ignored."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import orjson
import pytest

from projections.lazy import CHUNK_ITEMS
from projections.replay import hydrate, load_snapshot, replay, save_snapshot
from stratagate import StrataGate
from stratagate.core.filters import EventFilters, RawFilters
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


def rehashed(body: bytes) -> bytes:
    """A payload of ``body`` (header line and sections) under its own hash."""
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


@pytest.mark.parametrize("damage", ["content", "sealed", "truncated", "format", "digest"])
def test_a_damaged_snapshot_is_ignored_and_the_log_replayed(database: str, damage: str) -> None:
    with open_event_store(database) as store:
        snapshot = store.load_snapshot("default", KEY)
        assert snapshot is not None
        clear = keys_for(store, "default").open_blob(snapshot.payload)  # snapshots are sealed
        assert clear is not None and clear != snapshot.payload
        hash_line, body = clear.split(b"\n", 1)
        header, sections = body.split(b"\n", 1)
        if damage == "content":  # same length and shape, but not what the hash was taken over
            at = len(sections) - 1  # in the last section, which a restore leaves unread
            sections = sections[:at] + bytes([sections[at] ^ 1]) + sections[at + 1 :]
            payload = hash_line + b"\n" + header + b"\n" + sections
        elif damage == "sealed":  # a sealed payload is not hashed again: its seal must catch it
            at = len(snapshot.payload) // 2
            payload = (
                snapshot.payload[:at]
                + bytes([snapshot.payload[at] ^ 1])
                + snapshot.payload[at + 1 :]
            )
        elif damage == "truncated":
            payload = snapshot.payload[: len(snapshot.payload) // 2]
        elif damage == "format":
            head = orjson.loads(header)
            head["format"] = 999
            payload = rehashed(orjson.dumps(head) + b"\n" + sections)
        else:  # a model's digest is not the one the snapshot's digest was made of
            head = orjson.loads(header)
            head["models"][0][2] = "0" * 64
            payload = rehashed(orjson.dumps(head) + b"\n" + sections)
        rewrite(store, snapshot, payload)
        assert load_snapshot(store, "default", KEY) is None
        state, from_snapshot = hydrate(store, "default", KEY)
        assert not from_snapshot
        assert state.digests() == replay(store, "default").digests()


def test_a_restore_read_a_chunk_at_a_time_reads_as_the_replay(tmp_path: Path) -> None:
    """More blocks and messages than one stored chunk holds: a restored state, read
    piecemeal (a late message, an early block) and after a tail, equals the replayed one."""
    path = str(tmp_path / "memory.db")
    with StrataGate.open(
        path, "default", block_turn_size=2, summarizer="offline", extractor="offline"
    ) as memory:
        turns = [
            {"user": f"On day {i} we used tool{i} for the build.", "assistant": f"Noted {i}."}
            for i in range(700)
        ]
        memory.append_turns(turns[:600])
    with open_event_store(path) as store:
        save_snapshot(store, replay(store, "default"), "chunks")
    with StrataGate.open(path, "default", summarizer="offline", extractor="offline") as memory:
        memory.append_turns(turns[600:])
    with open_event_store(path) as store:
        state, from_snapshot = hydrate(store, "default", "chunks")
        replayed = replay(store, "default")
        assert from_snapshot
        first, last = next(iter(replayed.blocks.messages)), list(replayed.blocks.messages)[-1]
        assert state.blocks.message(last) == replayed.blocks.message(last)
        assert state.blocks.block_at(None, 3) == replayed.blocks.block_at(None, 3)
        assert state.blocks.message(first) == replayed.blocks.message(first)
        assert len(state.blocks.blocks) == len(replayed.blocks.blocks) > CHUNK_ITEMS
        assert state.search.search_raw(
            "tool42 build", limit=5, filters=RawFilters()
        ) == replayed.search.search_raw("tool42 build", limit=5, filters=RawFilters())
        assert state.digests() == replayed.digests()


def test_a_tail_folded_before_the_event_index_is_read_reads_as_the_replay(database: str) -> None:
    """Cards and named speakers added, and cards forgotten, by the tail wait for the restored
    event postings and tables, which are read only when a search or a digest needs them: the
    results are the replay's."""
    with open_event_store(database) as store:
        save_snapshot(store, replay(store, "default"), "early")
    with StrataGate.open(
        database, "default", block_turn_size=2, summarizer="offline", extractor="offline"
    ) as memory:
        block = memory.list_events()[0].source_block_id
        added = [
            memory.add_event(
                {
                    "title": f"Alice and Bob tried tool{i}",
                    "summary": f"They tried tool{i} for the build.",
                    "source_block_id": block,
                    "temporal": {
                        "happened_start": f"2024-03-{i:02d}",
                        "participants": ["Alice", "Bob"],
                        "event_type": "trial",
                    },
                }
            )
            for i in range(1, 4)
        ]
        for i in range(8, 12):
            memory.append_turn({"content": f"I used tool{i} today.", "name": "Alice"}, "Noted.")
        memory.forget_event(added[1].id)
        memory.forget_event(memory.list_events()[0].id)
    with open_event_store(database) as store:
        state, from_snapshot = hydrate(store, "default", "early")
        replayed = replay(store, "default")
        assert from_snapshot
        assert state.search.events._stored is not None  # the tail did not read the postings
        for query, filters in [
            ("tool3 build", EventFilters()),
            ("tool2 build", EventFilters(participants=["Alice"], event_type="trial")),
            ("", EventFilters(happened_from="2024-03-01", happened_to="2024-03-31")),
        ]:
            assert state.search.search_events(
                query, limit=5, filters=filters
            ) == replayed.search.search_events(query, limit=5, filters=filters)
        assert state.digests() == replayed.digests()


def test_an_erasure_after_a_restore_leaves_no_waiting_terms_of_the_erased_card(
    database: str,
) -> None:
    """A card added and erased while the restored event postings and tables are still unread:
    its terms and names leave memory with the erasure, not when a search first reads them."""
    with open_event_store(database) as store:
        save_snapshot(store, replay(store, "default"), KEY)
    with StrataGate.open(
        database, "default", block_turn_size=2, summarizer="offline", extractor="offline"
    ) as memory:
        search = memory._runtime.live.state.search
        assert search.events._stored is not None  # restored, not yet read
        block = memory.list_events()[0].source_block_id
        card = memory.add_event(
            {
                "title": "Mallory fed the zebrafinch",
                "summary": "Mallory fed the zebrafinch at noon.",
                "source_block_id": block,
                "temporal": {"participants": ["Mallory"], "event_type": "feeding"},
            }
        )
        memory.erase_event(card.id, reason="asked to")
        waiting = [change for change in search.events._waiting if isinstance(change, tuple)]
        assert not [counts for _, counts in waiting if "zebrafinch" in counts]
        tables = (search._participants, search._event_types)
        assert not [c for table in tables for c in table._changes if c[1] in ("mallory", "feeding")]
        assert "zebrafinch" not in search.events.postings
