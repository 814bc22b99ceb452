"""The key table and purges behave alike on every backend: keys are kept apart from the log,
a shred leaves tombstones and no snapshot, a purge deletes a namespace's rows and keeps an
audit record — and none of it touches another namespace or the chain."""

from __future__ import annotations

from typing import Any

from stratagate.store import DataKey, NewEvent, Snapshot

AT = "2026-12-01T00:00:00Z"


def key(namespace: str, key_id: str, material: bytes = b"k" * 32) -> DataKey:
    return DataKey(namespace, key_id, material, None, AT)


def fill(store: Any, namespace: str) -> None:
    store.append(
        namespace, "s", [NewEvent(f"{namespace}:{i}", "Noted", 1, "{}") for i in range(3)], 0
    )
    store.save_snapshot(Snapshot(namespace, "inline", 3, "d", 2, b"payload", AT))
    store.put_keys([key(namespace, "thread:a@1"), key(namespace, "thread:b@1")])


def test_keys_are_stored_once_and_listed_per_namespace(store: Any) -> None:
    fill(store, "one")
    fill(store, "two")
    # an id already stored is kept, and named: another writer made that key first
    assert store.put_keys([key("one", "thread:a@1", b"x" * 32), key("one", "thread:c@1")]) == [
        "thread:a@1"
    ]
    keys = store.load_keys("one")
    assert [k.key_id for k in keys] == ["thread:a@1", "thread:b@1", "thread:c@1"]
    assert keys[0].material == b"k" * 32 and keys[0].destroyed_at is None


def test_shred_leaves_tombstones_and_no_snapshot(store: Any) -> None:
    fill(store, "one")
    fill(store, "two")
    assert store.shred("one", ["thread:a@1"], AT) == 1
    assert store.shred("one", ["thread:a@1"], AT) == 0  # idempotent
    keys = {k.key_id: k for k in store.load_keys("one")}
    assert keys["thread:a@1"].material is None and keys["thread:a@1"].destroyed_at == AT
    assert keys["thread:b@1"].material is not None
    assert store.load_snapshot("one", "inline") is None
    assert store.load_snapshot("two", "inline") is not None
    assert store.shred("one", None, AT) == 1
    assert all(k.material is None for k in store.load_keys("one"))
    assert all(k.material is not None for k in store.load_keys("two"))
    assert store.verify_chain("one") is None and store.count("one") == 3


def test_purge_deletes_one_namespace_and_keeps_an_audit_record(store: Any) -> None:
    fill(store, "one")
    fill(store, "two")
    last = store.read("one")[-1].hash
    record = store.purge_namespace("one", reason="tenant left", at=AT)
    assert (record.namespace, record.rows, record.last_hash, record.reason) == (
        "one",
        3,
        last,
        "tenant left",
    )
    assert store.purges() == [record]
    assert store.namespaces() == ["two"]
    assert store.read("one") == [] and store.load_keys("one") == []
    assert store.load_snapshot("one", "inline") is None
    assert store.count("two") == 3 and store.verify_chain("two") is None
    store.append("two", "s", [NewEvent("two:9", "Noted", 1, "{}")], 3)  # the log goes on
    assert store.verify_chain("two") is None
