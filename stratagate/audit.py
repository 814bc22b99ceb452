"""Verifying a namespace's log: the hash chain, the heads record, every stored snapshot and a
full replay — reported, never raised. An audit only reads: it appends nothing and takes no lease.

Whatever the damage (edited, deleted, inserted or reordered rows, a lost heads record, a
truncated log under a snapshot, undecodable payloads, unknown event types, events that name
what the log does not hold, a forged snapshot), ``verify_log`` returns a ``VerifyReport`` with
``ok=False``, the first bad global position and a one-line reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from projections.replay import PAGE_SIZE, apply_at, decode_at, restore_snapshot
from projections.state import NamespaceState
from stratagate.anchors import Anchor, anchor_fault, checkpoint_key, make_anchor
from stratagate.errors import InvalidInputError, LogIntegrityError, MasterKeyError
from stratagate.events import LogCheckpointed
from stratagate.events.codec import open_data
from stratagate.events.encryption import ENCRYPTED, is_encrypted
from stratagate.results import HistoryRecord, VerifyReport
from stratagate.store import EventStore
from stratagate.store.keys import blob_key_id, keys_for
from stratagate.store.records import LogFault
from stratagate.timeutil import format_utc, parse_datetime

HISTORY_PAGE = 2000
"""Rows read from the log per page while collecting history."""
SNAPSHOT_KEYS = ("inline", "sealer", "extractor", "projector", "weights")
"""The snapshots runtimes keep of a namespace: the inline runtime's, and one per Ray role."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Read-model digests some host claims for the log up to ``position``."""

    position: int
    digests: dict[str, str]
    label: str
    """``"live"`` for an open memory's models, else the snapshot's name."""


def namespace_exists(store: EventStore, namespace: str) -> bool:
    """Whether anything of ``namespace`` is stored: a row, a heads record or a snapshot (after
    damage any of them may be the only trace left)."""
    if store.read(namespace, limit=1) or store.count(namespace):
        return True
    return any(store.load_snapshot(namespace, key) is not None for key in SNAPSHOT_KEYS)


def refuse_damaged_log(store: EventStore, namespace: str) -> None:
    """Raise ``LogIntegrityError`` at the first bad position unless the whole chain verifies
    (what a writable open checks: a snapshot restores the models without folding the rows
    under it, so damage there would otherwise be appended to). One walk of the log, hashing
    every row: docs/BENCHMARKS.md, "Opening a memory", has its cost."""
    fault = store.find_fault(namespace)
    if fault is not None:
        raise LogIntegrityError(
            f"the log of namespace {namespace!r} is damaged at global position "
            f"{fault.position}: {fault.reason}; nothing was appended — run verify",
            fault.position,
        )


def take_anchor(store: EventStore, namespace: str, at: datetime) -> Anchor:
    """The anchor of the namespace's head now, signed when a checkpoint key is set. The head
    is checked against the last row first: a broken head is no anchor."""
    store.check_head(namespace)
    head = store.head(namespace)
    rows = store.read(namespace, after=head - 1, limit=1) if head else []
    return make_anchor(
        namespace, rows[0] if rows else None, store.count(namespace), at, checkpoint_key()
    )


def verify_log(
    store: EventStore,
    namespace: str,
    live: Sequence[tuple[int, dict[str, str]]] = (),
    *,
    anchor: Anchor | None = None,
    snapshot_keys: Iterable[str] = SNAPSHOT_KEYS,
) -> VerifyReport:
    """The chain and heads record, the ``anchor`` when given (the log must still extend it),
    then every usable snapshot and the ``live`` models (each host's position and digests)
    compared with a full replay of the log."""
    fault = store.find_fault(namespace)
    if fault is None and anchor is not None:
        fault = _anchor_fault(store, namespace, anchor)
    if fault is not None:
        return _failed(
            fault.position,
            f"the log breaks at global position {fault.position}: {fault.reason}",
            chain_ok=False,
        )
    key_fault = _key_fault(store, namespace)
    if key_fault is not None:
        return _failed(key_fault.position, key_fault.reason)
    checkpoints = [Checkpoint(position, dict(d), "live") for position, d in live]
    for key in snapshot_keys:
        found = _snapshot_checkpoint(store, namespace, key)
        if isinstance(found, VerifyReport):
            return found
        if found is not None:
            checkpoints.append(found)
    return _replay_against(store, namespace, checkpoints)


ERASURE_TYPES = frozenset({"ThreadErased", "EventErased", "NamespaceErased"})
"""The events that record destroyed data keys (their ``keys`` member, covered by the chain)."""


def _key_fault(store: EventStore, namespace: str) -> LogFault | None:
    """The first row whose sealed content lost its key behind the log's back: a key row the
    log uses that is missing, destroyed (NULL) with no ``…Erased`` event naming it, or whose
    wrapped material no longer unwraps with the master key that wrapped it. (Bare material
    that was changed shows as content that does not decrypt, in the replay.)"""
    used: dict[str, int] = {}
    erased: set[str] = set()
    after = 0
    while True:
        rows = store.read(namespace, after=after, limit=PAGE_SIZE)
        for row in rows:
            if row.event_type in ERASURE_TYPES:
                erased.update(_member(row.payload, "keys", list))
            elif is_encrypted(row.payload):
                for key_id in _member(row.payload, ENCRYPTED, dict):
                    used.setdefault(str(key_id), row.global_position)
        if len(rows) < PAGE_SIZE:
            break
        after = rows[-1].global_position
    if not used:
        return None
    table = {row.key_id: row for row in store.load_keys(namespace)}
    keyring = keys_for(store, namespace).keyring
    faults: list[LogFault] = []
    for key_id, position in used.items():
        key_row = table.get(key_id)
        since = f"data key {key_id!r}, used from global position {position},"
        if key_row is None:
            faults.append(LogFault(position, f"{since} is missing from the key table"))
        elif key_row.material is None and key_id not in erased:
            faults.append(
                LogFault(
                    position,
                    f"{since} was destroyed (its key row is NULL) but no erasure event in the "
                    "log names it: content was destroyed behind the log's back",
                )
            )
        elif (
            key_row.material is not None
            and key_row.wrapped is not None
            and keyring.master is not None
        ):
            try:
                keyring.unwrap(key_row, key_row.material)
            except MasterKeyError:
                if key_row.wrapped == keyring.master.fingerprint:
                    faults.append(
                        LogFault(position, f"{since} no longer unwraps: its key row was changed")
                    )
    return min(faults, key=lambda fault: fault.position, default=None)


def _member(payload: str, name: str, kind: type[list[Any]] | type[dict[str, Any]]) -> Iterable[Any]:
    """A top-level member of a stored payload when it has the expected JSON type, else nothing
    (a payload that does not parse is the replay's to report)."""
    try:
        value = orjson.loads(payload).get(name)
    except (orjson.JSONDecodeError, AttributeError, TypeError):
        return ()
    return value if isinstance(value, kind) else ()


def _anchor_fault(store: EventStore, namespace: str, anchor: Anchor) -> LogFault | None:
    if anchor.namespace != namespace:
        raise InvalidInputError(
            f"the anchor is of namespace {anchor.namespace!r}, not {namespace!r}"
        )
    rows = store.read(namespace, after=max(0, anchor.position - 1), limit=1)
    found = rows[0] if rows and rows[0].global_position == anchor.position else None
    return anchor_fault(anchor, found, store.head(namespace), checkpoint_key())


def _snapshot_checkpoint(
    store: EventStore, namespace: str, key: str
) -> Checkpoint | VerifyReport | None:
    """The digests a stored snapshot claims, or the report of why it cannot be right."""
    snapshot = store.load_snapshot(namespace, key)
    if snapshot is None:
        return None  # a snapshot is a cache: never having written one is normal
    state = restore_snapshot(snapshot, keys_for(store, namespace))
    if state is None:
        from projections.replay import SNAPSHOT_FORMAT

        if snapshot.model_version != SNAPSHOT_FORMAT:
            return None  # an older format, ignored by every open
        key_id = blob_key_id(bytes(snapshot.payload))
        if key_id is not None:
            row = next((k for k in store.load_keys(namespace) if k.key_id == key_id), None)
            if row is None or row.material is None:
                lost = "is missing from the key table" if row is None else "was destroyed"
                return _failed(
                    snapshot.position,
                    f"snapshot {key!r} at global position {snapshot.position} cannot be read: "
                    f"its data key {key_id!r} {lost}; opens ignore it and replay the log "
                    "(the next snapshot gets a new key)",
                )
        return _failed(
            snapshot.position,
            f"snapshot {key!r} at global position {snapshot.position} is corrupt (its data does "
            "not decode or no longer has its digest); opens ignore it, delete it to clear this",
        )
    rows = store.read(namespace, after=max(0, snapshot.position - 1), limit=1)
    if snapshot.position and (not rows or rows[0].global_position != snapshot.position):
        return _failed(
            snapshot.position,
            f"snapshot {key!r} covers global position {snapshot.position}, which the log no "
            "longer holds (the log was truncated or rewritten)",
            chain_ok=False,
        )
    return Checkpoint(snapshot.position, state.digests(), f"snapshot {key!r}")


def _replay_against(
    store: EventStore, namespace: str, checkpoints: list[Checkpoint]
) -> VerifyReport:
    """Replay the whole log once, comparing each checkpoint's digests at its position."""
    names = {name for checkpoint in checkpoints for name in checkpoint.digests}
    state = NamespaceState(namespace, names or None)
    pending = sorted(checkpoints, key=lambda checkpoint: checkpoint.position)
    mismatched: set[str] = set()
    checked, after = 0, 0
    keys = keys_for(store, namespace)
    try:
        while True:
            rows = store.read(namespace, after=after, limit=PAGE_SIZE)
            for row in rows:
                while pending and pending[0].position < row.global_position:
                    failure = _compare(state, pending.pop(0), mismatched)
                    if failure is not None:
                        return failure
                recorded = decode_at(row, keys)
                apply_at(state, recorded)
                checked += 1
                if isinstance(recorded.event, LogCheckpointed):
                    fault = _signed_fault(store, namespace, recorded.event)
                    if fault is not None:
                        return _failed(fault.position, fault.reason, chain_ok=False)
            if len(rows) < PAGE_SIZE:
                break
            after = rows[-1].global_position
    except LogIntegrityError as exc:
        position = exc.position if exc.position is not None else state.position
        return _failed(
            position, f"replay fails at global position {position}: {exc}", checked=checked
        )
    for checkpoint in pending:
        failure = _compare(state, checkpoint, mismatched)
        if failure is not None:
            return failure
    ok = not mismatched
    return VerifyReport(
        ok=ok,
        first_bad_position=None,
        chain_ok=True,
        replay_ok=ok,
        events_checked=checked,
        mismatched_models=sorted(mismatched),
        detail=""
        if ok
        else f"live read models differ from the replay: {', '.join(sorted(mismatched))}",
    )


def _signed_fault(store: EventStore, namespace: str, signed: LogCheckpointed) -> LogFault | None:
    """A logged checkpoint must still name the row at its position (and, with the key, carry
    the right signature): otherwise the log up to it was rewritten and re-hashed."""
    anchor = Anchor(
        namespace=namespace,
        position=signed.position,
        head_hash=signed.head_hash,
        event_count=0,
        created_at=format_utc(signed.at),
        seal=signed.seal,
    )
    rows = store.read(namespace, after=max(0, signed.position - 1), limit=1)
    found = rows[0] if rows and rows[0].global_position == signed.position else None
    fault = anchor_fault(anchor, found, store.head(namespace), checkpoint_key())
    if fault is None:
        return None
    return LogFault(fault.position, f"a logged checkpoint fails: {fault.reason}")


def _compare(
    state: NamespaceState, checkpoint: Checkpoint, mismatched: set[str]
) -> VerifyReport | None:
    """Record a live mismatch; a snapshot that disagrees with the replay fails at once."""
    rebuilt = state.digests()
    wrong = sorted(name for name, d in checkpoint.digests.items() if rebuilt.get(name) != d)
    if not wrong or checkpoint.label == "live":
        mismatched.update(wrong)
        return None
    return VerifyReport(
        ok=False,
        first_bad_position=checkpoint.position,
        chain_ok=True,
        replay_ok=False,
        events_checked=0,
        mismatched_models=wrong,
        detail=(
            f"{checkpoint.label} at global position {checkpoint.position} differs from the "
            f"replay ({', '.join(wrong)}): the snapshot was forged or the log rewritten"
        ),
    )


def _failed(position: int, detail: str, *, chain_ok: bool = True, checked: int = 0) -> VerifyReport:
    return VerifyReport(
        ok=False,
        first_bad_position=position,
        chain_ok=chain_ok,
        replay_ok=False,
        events_checked=checked,
        detail=" ".join(detail.split()),
    )


def read_history(
    store: EventStore,
    namespace: str,
    since: int = 0,
    *,
    limit: int | None = None,
    event_type: str | None = None,
) -> list[HistoryRecord]:
    """The namespace's logged domain events after a global position (of ``event_type`` when
    given, at most ``limit``), read from the log with their content opened."""
    records: list[HistoryRecord] = []
    position = since
    keys = keys_for(store, namespace)
    while limit is None or len(records) < limit:
        page = HISTORY_PAGE
        if limit is not None and event_type is None:  # every row is kept: read no more
            page = min(page, limit - len(records))
        rows = store.read(namespace, after=position, limit=page)
        for row in rows:
            if event_type is not None and row.event_type != event_type:
                continue
            records.append(
                HistoryRecord(
                    position=row.global_position,
                    namespace=row.namespace,
                    stream=row.stream,
                    stream_version=row.stream_version,
                    type=row.event_type,
                    schema_version=row.schema_version,
                    recorded_at=row.recorded_at,
                    data=open_data(row.event_type, row.payload, keys),
                )
            )
            if limit is not None and len(records) == limit:
                break
        if len(rows) < page:
            break
        position = rows[-1].global_position
    return records


def last_event_at(store: EventStore, namespace: str) -> datetime | None:
    """When the namespace's last event was recorded (``None`` for an empty namespace)."""
    head = store.head(namespace)
    last = store.read(namespace, after=head - 1, limit=1) if head else []
    return parse_datetime(last[0].recorded_at) if last else None


__all__ = [
    "SNAPSHOT_KEYS",
    "Checkpoint",
    "last_event_at",
    "namespace_exists",
    "read_history",
    "refuse_damaged_log",
    "take_anchor",
    "verify_log",
]
