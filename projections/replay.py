"""Rebuilding read models from the log: full replay, snapshot + tail, and replay up to a position.

Snapshots are disposable caches: each carries the position it covers and the digest the state
had; a snapshot whose data no longer has that digest, whose model versions moved, or that is
missing is ignored and the state is rebuilt by full replay.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import hashlib
import threading
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from projections.lazy import pack, unpack
from projections.sealed_turns import TURN, sealed_turn
from projections.state import NamespaceState, combined_digest, resolve_components
from stratagate.errors import LogIntegrityError, MasterKeyError, StorageError
from stratagate.events import Recorded, decode
from stratagate.store import GENESIS_HASH, EventStore, Snapshot, StoredEvent
from stratagate.store.chain import row_fault
from stratagate.store.keys import BLOB_MAGIC, NamespaceKeys, keys_for
from stratagate.timeutil import format_utc, utc_now

PAGE_SIZE = 2000
SNAPSHOT_FORMAT = 4
"""Version of the snapshot payload envelope (model versions are checked separately); 2: records
as pydantic JSON text, index arrays as base64; 3: each model's canonical text once (hashed
for the digest as stored, so a restore hashes bytes instead of serialising the state again);
4: each model's keys as separately compressed sections, long lists in chunks, the whole
payload hashed, so a restore parses a section only when it is first needed."""


def iter_records(
    store: EventStore,
    namespace: str,
    *,
    after: int = 0,
    until: int | None = None,
    keys: NamespaceKeys | None = None,
    sealed_turns: bool = False,
) -> Iterator[Recorded]:
    """Decoded events of a namespace with ``after < position <= until``, in order, paged.

    The rows are checked to chain onto each other and onto the row at ``after`` (the log's
    start when 0); a row that does not chain or decode raises ``LogIntegrityError`` naming its
    position, so nothing is ever folded from a damaged stretch of the log. With
    ``sealed_turns``, turns come as ``SealedTurn`` where they can (their content opened when
    a read model first reads it: see ``projections.sealed_turns``).
    """
    prev_hash = GENESIS_HASH if after == 0 else _hash_at(store, namespace, after)
    position = after
    keys = keys or keys_for(store, namespace)
    strings: dict[str, str] = {}
    while True:
        rows = store.read(namespace, after=position, limit=PAGE_SIZE)
        for row in rows:
            if until is not None and row.global_position > until:
                return
            fault = row_fault(prev_hash, row)
            if fault:
                raise LogIntegrityError(
                    f"the log of namespace {namespace!r} is damaged at global position "
                    f"{row.global_position}: {fault} — run verify",
                    row.global_position,
                )
            prev_hash = row.hash
            if sealed_turns and row.event_type == TURN:
                yield sealed_turn(row, keys, strings) or decode_at(row, keys)
            else:
                yield decode_at(row, keys)
        if len(rows) < PAGE_SIZE:
            return
        position = rows[-1].global_position


def _hash_at(store: EventStore, namespace: str, position: int) -> str:
    """The hash of the namespace's row at ``position`` (a snapshot's or a state's position)."""
    rows = store.read(namespace, after=position - 1, limit=1)
    if not rows or rows[0].global_position != position:
        raise LogIntegrityError(
            f"the log of namespace {namespace!r} no longer holds the row at global position "
            f"{position}, which a snapshot or state covers (the log was truncated?) — run verify",
            position,
        )
    return rows[0].hash


def decode_at(row: StoredEvent, keys: NamespaceKeys | None = None) -> Recorded:
    """``decode(row, keys)``, with a row that does not decode reported as log damage at its
    position (a missing or wrong master key stays a ``MasterKeyError``: the log is sound)."""
    try:
        return decode(row, keys)
    except MasterKeyError:
        raise
    except Exception as exc:  # any way a payload fails to decode is damage, never a crash
        raise LogIntegrityError(
            f"the {_type_name(row)} event at global position {row.global_position} cannot be "
            f"decoded: {one_line(exc)}",
            row.global_position,
        ) from exc


def apply_at(state: NamespaceState, recorded: Recorded) -> None:
    """``state.apply(recorded)``, with an event the read models cannot fold (it names what the
    log does not hold, say) reported as log damage at its position."""
    try:
        state.apply(recorded)
    except Exception as exc:
        raise LogIntegrityError(
            f"the {recorded.event.type} event at global position {recorded.position} cannot be "
            f"replayed: {one_line(exc)} (an event it depends on is missing or altered)",
            recorded.position,
        ) from exc


def one_line(exc: BaseException) -> str:
    """An exception as one short line: its type and first line."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:199] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _type_name(row: StoredEvent) -> str:
    return row.event_type if isinstance(row.event_type, str) else repr(row.event_type)


def catch_up(state: NamespaceState, store: EventStore, *, until: int | None = None) -> int:
    """Fold every event after the state's position (up to ``until``); returns how many.
    Damage in what is folded raises ``LogIntegrityError`` (see ``iter_records``)."""
    count = 0
    with paused_gc():
        records = iter_records(
            store, state.namespace, after=state.position, until=until, sealed_turns=True
        )
        for recorded in records:
            apply_at(state, recorded)
            count += 1
    if count >= PAGE_SIZE:
        release_free_memory()
    return count


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; a no-op where
    there is none). A replay frees its decoded pages and a restore its snapshot text — tens
    to hundreds of MiB in large blocks, which glibc otherwise keeps as resident memory
    (measured: a fresh restore resident at 1.5x the state it holds)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):  # no C library to open by that name (Windows)
        return None


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off while read models are folded, restored or dumped.

    Those make millions of long-lived objects and no garbage cycles; each automatic full
    collection would walk the whole growing state (measured: a quarter of a replay's time,
    almost half of a restore's). Nested and concurrent pauses (the background snapshot
    writer) count: the collector is on again when the last one ends, if it was on before.
    The young objects (what the pause made, mostly) are then moved to the oldest generation as
    they stand (``freeze`` then ``unfreeze``: no walk), where a full collection still finds any
    cycle among them; left young, the first allocation after the pause would walk them all
    (measured: 0.13–0.18 s at the end of a 30k-event replay, about 4% of it)."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.freeze()
                gc.unfreeze()
                gc.enable()


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


def _encode(state: NamespaceState) -> tuple[bytes, str]:
    """A state as a snapshot payload (before sealing) and its digest.

    Each model's data is serialised once, canonically, a top-level key at a time, each piece
    compressed on its own and hashed into the model's digest (``projections.lazy.pack``), so a
    restore can leave a key unread until it is needed. The payload is a line with the SHA-256
    of the rest, one JSON header line (namespace, position, each model's version, digest and
    sections with their compressed sizes and, for the keys a model lists in
    ``keyed_sections``, its rows' keys), then the compressed pieces."""
    pieces: list[bytes] = []
    header: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "namespace": state.namespace,
        "position": state.position,
        "models": [],
    }
    digests: dict[str, str] = {}
    for name, model in state.models.items():
        digest, sections, packed = pack(model.snapshot(), type(model).keyed_sections)
        pieces.extend(packed)
        digests[name] = digest
        header["models"].append([name, type(model).version, digest, sections])
    body = b"".join([orjson.dumps(header), b"\n", *pieces])
    return b"".join([hashlib.sha256(body).hexdigest().encode(), b"\n", body]), combined_digest(
        digests
    )


def _decode(payload: bytes, digest: str, *, authenticated: bool = False) -> NamespaceState:
    """The state of a snapshot payload that still has its hash and whose models' digests
    combine to ``digest``; raises ``ValueError`` (or a decoding error) otherwise. Only the
    header is parsed here: each model takes its sections when it restores (``Sections``).
    An ``authenticated`` payload (opened from its AES-GCM seal, whose tag covers every byte
    of it, hash line included) is not hashed again."""
    view = memoryview(payload)
    first = payload.index(b"\n")
    if not authenticated and (
        hashlib.sha256(view[first + 1 :]).hexdigest().encode() != payload[:first]
    ):
        raise ValueError("snapshot payload no longer has its hash")
    second = payload.index(b"\n", first + 1)
    header = orjson.loads(view[first + 1 : second])
    if header.get("format") != SNAPSHOT_FORMAT:
        raise ValueError(f"snapshot format {header.get('format')} is not {SNAPSHOT_FORMAT}")
    start = second + 1
    models: dict[str, dict[str, Any]] = {}
    digests: dict[str, str] = {}
    for name, version, model_digest, stored in header["models"]:
        sections, start = unpack(stored, view, start)
        models[name] = {"version": version, "data": sections}
        digests[name] = model_digest
    if start != len(payload):
        raise ValueError("snapshot payload has trailing bytes")
    if combined_digest(digests) != digest:
        raise ValueError("snapshot models' digests do not make its digest")
    return NamespaceState.restore(
        {"namespace": header["namespace"], "position": header["position"], "models": models}
    )


def save_snapshot(store: EventStore, state: NamespaceState, key: str) -> Snapshot:
    """Store the state as the snapshot ``key`` of its namespace (one serialisation serves the
    payload and the digest)."""
    with paused_gc():
        body, digest = _encode(state)
    snapshot = Snapshot(
        namespace=state.namespace,
        key=key,
        position=state.position,
        digest=digest,
        model_version=SNAPSHOT_FORMAT,
        payload=keys_for(store, state.namespace).encrypt_blob(f"snapshot:{key}", body),
        created_at=format_utc(utc_now()),
    )
    store.save_snapshot(snapshot)
    return snapshot


def load_snapshot(
    store: EventStore,
    namespace: str,
    key: str,
    components: Iterable[str] | None = None,
    keys: NamespaceKeys | None = None,
) -> NamespaceState | None:
    """The snapshot's state if its data still has the recorded digest and holds the wanted
    models. The digest is taken over the stored data, not the restored models: that restores
    are exact is what the replay state machine test checks after every step."""
    snapshot = store.load_snapshot(namespace, key)
    keys = keys or keys_for(store, namespace)
    state = None if snapshot is None else restore_snapshot(snapshot, keys)
    if state is None or state.components != resolve_components(components):
        return None
    return state


def restore_snapshot(snapshot: Snapshot, keys: NamespaceKeys) -> NamespaceState | None:
    """The state a snapshot holds (opened with ``keys``), or ``None`` when it is of another
    format, its key was destroyed, or its data does not decode or no longer has the recorded
    digest (a snapshot is a cache: never trusted)."""
    if snapshot.model_version != SNAPSHOT_FORMAT:
        return None
    try:
        payload = keys.open_blob(snapshot.payload)
    except MasterKeyError:  # the log's content needs the master key too: say so
        raise
    except StorageError:  # a damaged snapshot, or its key row gone: only a cache, replay
        return None
    if payload is None:  # its key was destroyed: the snapshot is gone with it
        return None
    sealed = snapshot.payload.startswith(BLOB_MAGIC)  # opened, so its tag checked out
    try:
        with paused_gc():
            state = _decode(payload, snapshot.digest, authenticated=sealed)
    except (ValueError, KeyError, TypeError, zlib.error, orjson.JSONDecodeError):
        return None
    finally:
        del payload
        release_free_memory()
    if state.namespace != snapshot.namespace or state.position != snapshot.position:
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
    "apply_at",
    "catch_up",
    "decode_at",
    "hydrate",
    "iter_records",
    "load_snapshot",
    "one_line",
    "paused_gc",
    "release_free_memory",
    "replay",
    "restore_snapshot",
    "save_snapshot",
]
