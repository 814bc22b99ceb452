"""Rebuilding read models from the log: full replay, snapshot + tail, and replay up to a position.

Snapshots are disposable caches: each carries the position it covers and the digest the state
had; a snapshot whose restored digest differs, whose model versions moved, or that is missing
is ignored and the state is rebuilt by full replay.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

import orjson

from projections.state import NamespaceState
from stratagate.events import EventStore, Recorded, Snapshot, decode
from stratagate.timeutil import format_utc, utc_now

PAGE_SIZE = 2000
SNAPSHOT_FORMAT = 1
"""Version of the snapshot payload envelope (model versions are checked separately)."""


def iter_records(
    store: EventStore, namespace: str, *, after: int = 0, until: int | None = None
) -> Iterator[Recorded]:
    """Decoded events of a namespace with ``after < position <= until``, in order, paged."""
    position = after
    while True:
        rows = store.read(namespace, after=position, limit=PAGE_SIZE)
        for row in rows:
            if until is not None and row.global_position > until:
                return
            yield decode(row)
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


def encode_snapshot(state: NamespaceState) -> bytes:
    """The compressed snapshot payload of a state."""
    body = orjson.dumps({"format": SNAPSHOT_FORMAT, "state": state.snapshot()})
    return zlib.compress(body, 1)


def decode_snapshot(payload: bytes) -> NamespaceState:
    """The state a payload holds; ``ValueError`` when its format or versions do not fit."""
    body = orjson.loads(zlib.decompress(payload))
    if body.get("format") != SNAPSHOT_FORMAT:
        raise ValueError(f"snapshot format {body.get('format')} is not {SNAPSHOT_FORMAT}")
    return NamespaceState.restore(body["state"])


def save_snapshot(store: EventStore, state: NamespaceState, key: str) -> Snapshot:
    """Store the state as the snapshot ``key`` of its namespace."""
    snapshot = Snapshot(
        namespace=state.namespace,
        key=key,
        position=state.position,
        digest=state.digest(),
        model_version=SNAPSHOT_FORMAT,
        payload=encode_snapshot(state),
        created_at=format_utc(utc_now()),
    )
    store.save_snapshot(snapshot)
    return snapshot


def load_snapshot(
    store: EventStore, namespace: str, key: str, components: Iterable[str] | None = None
) -> NamespaceState | None:
    """The snapshot's state if it restores to its recorded digest with the wanted models."""
    snapshot = store.load_snapshot(namespace, key)
    if snapshot is None or snapshot.model_version != SNAPSHOT_FORMAT:
        return None
    try:
        state = decode_snapshot(snapshot.payload)
    except (ValueError, KeyError, zlib.error, orjson.JSONDecodeError):
        return None
    fresh = NamespaceState(namespace, components)
    if state.components != fresh.components or state.digest() != snapshot.digest:
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
    "decode_snapshot",
    "encode_snapshot",
    "hydrate",
    "iter_records",
    "load_snapshot",
    "replay",
    "save_snapshot",
]
