"""Rebuilding read models from the log: full replay, snapshot + tail, and replay up to a position.

Snapshots are disposable caches: each carries the position it covers and the digest the state
had; a snapshot whose data no longer has that digest, whose model versions moved, or that is
missing is ignored and the state is rebuilt by full replay.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from projections.state import NamespaceState, resolve_components, snapshot_digest
from stratagate.core.timeutil import format_utc, utc_now
from stratagate.errors import LogIntegrityError
from stratagate.events import Recorded, decode
from stratagate.events.keyring import keys_for
from stratagate.store import EventStore, Snapshot

PAGE_SIZE = 2000
SNAPSHOT_FORMAT = 2
"""Version of the snapshot payload envelope (model versions are checked separately); 2: records
as pydantic JSON text, index arrays as base64."""


def iter_records(
    store: EventStore, namespace: str, *, after: int = 0, until: int | None = None
) -> Iterator[Recorded]:
    """Decoded events of a namespace with ``after < position <= until``, in order, paged."""
    position = after
    keys = keys_for(store, namespace)
    while True:
        rows = store.read(namespace, after=position, limit=PAGE_SIZE)
        for row in rows:
            if until is not None and row.global_position > until:
                return
            yield decode(row, keys)
        if len(rows) < PAGE_SIZE:
            return
        position = rows[-1].global_position


def catch_up(state: NamespaceState, store: EventStore, *, until: int | None = None) -> int:
    """Fold every event after the state's position (up to ``until``); returns how many."""
    count = 0
    for recorded in iter_records(store, state.namespace, after=state.position, until=until):
        state.apply(recorded)
        count += 1
    return count


def replay(
    store: EventStore,
    namespace: str,
    *,
    until: int | None = None,
    components: Iterable[str] | None = None,
) -> NamespaceState:
    """A fresh state folded from position 0 (up to ``until``)."""
    state = NamespaceState(namespace, components)
    catch_up(state, store, until=until)
    return state


def _compress(data: dict[str, Any]) -> bytes:
    return zlib.compress(orjson.dumps({"format": SNAPSHOT_FORMAT, "state": data}), 1)


def _decompress(payload: bytes) -> dict[str, Any]:
    body = orjson.loads(zlib.decompress(payload))
    if body.get("format") != SNAPSHOT_FORMAT:
        raise ValueError(f"snapshot format {body.get('format')} is not {SNAPSHOT_FORMAT}")
    state: dict[str, Any] = body["state"]
    return state


def save_snapshot(store: EventStore, state: NamespaceState, key: str) -> Snapshot:
    """Store the state as the snapshot ``key`` of its namespace (one serialisation serves the
    payload and the digest)."""
    data = state.snapshot()
    snapshot = Snapshot(
        namespace=state.namespace,
        key=key,
        position=state.position,
        digest=snapshot_digest(data),
        model_version=SNAPSHOT_FORMAT,
        payload=keys_for(store, state.namespace).seal_blob(f"snapshot:{key}", _compress(data)),
        created_at=format_utc(utc_now()),
    )
    store.save_snapshot(snapshot)
    return snapshot


def load_snapshot(
    store: EventStore, namespace: str, key: str, components: Iterable[str] | None = None
) -> NamespaceState | None:
    """The snapshot's state if its data still has the recorded digest and holds the wanted
    models. The digest is taken over the stored data, not the restored models: that restores
    are exact is what the replay state machine test checks after every step."""
    snapshot = store.load_snapshot(namespace, key)
    if snapshot is None or snapshot.model_version != SNAPSHOT_FORMAT:
        return None
    try:
        payload = keys_for(store, namespace).open_blob(snapshot.payload)
    except LogIntegrityError:  # a damaged snapshot is only a cache: replay instead
        return None
    if payload is None:  # its key was destroyed: the snapshot is gone with it
        return None
    try:
        data = _decompress(payload)
        if snapshot_digest(data) != snapshot.digest:
            return None
        state = NamespaceState.restore(data)
    except (ValueError, KeyError, TypeError, zlib.error, orjson.JSONDecodeError):
        return None
    if state.components != resolve_components(components):
        return None
    return state


def hydrate(
    store: EventStore, namespace: str, key: str, components: Iterable[str] | None = None
) -> tuple[NamespaceState, bool]:
    """Snapshot + log tail when a usable snapshot exists, else full replay; says which."""
    state = load_snapshot(store, namespace, key, components)
    from_snapshot = state is not None
    if state is None:
        state = NamespaceState(namespace, components)
    catch_up(state, store)
    return state, from_snapshot


__all__ = [
    "catch_up",
    "hydrate",
    "iter_records",
    "load_snapshot",
    "replay",
    "save_snapshot",
]
