"""``EventStore.import_log`` on every backend: all or nothing, positions kept only when free,
rows chained anew otherwise, and the log goes on growing from the imported head."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate.errors import LogIntegrityError, StorageConflictError
from stratagate.store import open_store
from stratagate.store.records import DataKey, EventStore, NewEvent, StoredEvent

KEY = DataKey("src", "thread:t@1", b"k" * 32, None, "2026-01-01T00:00:00.000000Z")


def appended(store: EventStore, namespace: str, streams: list[str]) -> list[StoredEvent]:
    """One event per entry of ``streams``, appended in that order."""
    rows: list[StoredEvent] = []
    for number, stream in enumerate(streams):
        payload = orjson.dumps({"n": number, "ns": namespace}).decode()
        new = NewEvent(f"{namespace}-{number}", "Noted", 1, payload)
        rows += store.append(namespace, stream, [new], None)
    return rows


def source_rows(streams: list[str], *, namespace: str = "src") -> list[StoredEvent]:
    with open_store("memory://") as source:
        return appended(source, namespace, streams)


def test_rows_keep_positions_and_hashes(store: EventStore) -> None:
    rows = source_rows(["a", "b", "a", "a"])
    done = store.import_log("src", rows, [KEY], keep_positions=True)
    assert done.positions_kept and done.rows == 4 and done.head_hash == rows[-1].hash
    assert store.read("src") == rows
    assert store.find_fault("src") is None and store.head("src") == rows[-1].global_position
    assert (
        store.stream_version("src", "a") == 3 and store.load_keys("src")[0].material == KEY.material
    )
    [later] = store.append("src", "b", [NewEvent("later", "Noted", 1, "{}")], 1)
    assert later.prev_hash == rows[-1].hash and later.stream_version == 2
    assert store.find_fault("src") is None


def test_rows_are_chained_anew_when_positions_are_taken(store: EventStore) -> None:
    appended(store, "busy", ["x"] * 6)
    rows = source_rows(["a", "b", "a"])
    with pytest.raises(StorageConflictError, match="cannot be kept"):
        store.import_log("src", rows, [KEY], keep_positions=True)
    assert store.read("src") == [] and store.load_keys("src") == []
    done = store.import_log("copy", rows, [KEY], keep_positions=False)
    copied = store.read("copy")
    assert not done.positions_kept and [r.global_position for r in copied] == [7, 8, 9]
    assert [(r.stream, r.stream_version, r.payload, r.recorded_at) for r in copied] == [
        (r.stream, r.stream_version, r.payload, r.recorded_at) for r in rows
    ]
    assert store.find_fault("copy") is None and done.head_hash == copied[-1].hash


def test_an_import_is_all_or_nothing(store: EventStore) -> None:
    rows = source_rows(["a"] * 2500)  # more than one page

    def failing() -> Iterator[StoredEvent]:
        yield from rows[:2200]
        raise ValueError("line 2203 is forged")

    with pytest.raises(ValueError, match="forged"):
        store.import_log("src", failing(), [KEY], keep_positions=True)
    assert store.read("src") == [] and store.namespaces() == [] and store.load_keys("src") == []
    assert store.count("src") == 0
    store.import_log("src", rows, [KEY], keep_positions=True)
    assert store.count("src") == 2500


def test_occupied_namespaces_and_stored_ids_are_refused(store: EventStore) -> None:
    rows = source_rows(["a", "a"])
    appended(store, "busy", ["a"])
    with pytest.raises(StorageConflictError, match="already holds"):
        store.import_log("busy", rows, [], keep_positions=False)
    store.put_keys([DataKey("keyed", "k@1", b"k" * 32, None, KEY.created_at)])
    with pytest.raises(StorageConflictError, match="already holds"):
        store.import_log("keyed", rows, [], keep_positions=False)
    store.import_log("one", rows, [], keep_positions=False)
    with pytest.raises(StorageConflictError, match="stored already"):
        store.import_log("two", rows, [], keep_positions=False)
    assert store.namespaces() == ["busy", "one"]


def test_rows_that_are_not_a_log_from_its_start_do_not_keep_positions(store: EventStore) -> None:
    rows = source_rows(["a", "a", "a"])
    with pytest.raises(LogIntegrityError, match="do not keep their hashes"):
        store.import_log("src", rows[1:], [], keep_positions=True)
    assert store.read("src") == []


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streams=st.lists(st.sampled_from(["ingest", "extraction", "weights"]), max_size=12))
def test_a_rebased_copy_verifies_whatever_the_log(store: Any, streams: list[str]) -> None:
    rows = source_rows(streams or ["ingest"], namespace=f"src{len(store.namespaces())}")
    target = f"copy{len(store.namespaces())}"
    appended(store, f"pad{target}", ["x"])
    store.import_log(target, rows, [], keep_positions=False)
    assert store.find_fault(target) is None
    copied = store.read(target)
    assert [(r.stream, r.stream_version, r.event_id) for r in copied] == [
        (r.stream, r.stream_version, r.event_id) for r in rows
    ]
