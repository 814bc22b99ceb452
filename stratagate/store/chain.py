"""The per-namespace hash chain of ``stratagate_events``, written down for auditors.

Every row carries ``prev_hash`` and ``hash``. ``prev_hash`` is the ``hash`` of the previous row
of the same namespace in ``global_position`` order (``GENESIS_HASH``, 64 zeros, for the first).
``hash`` is computed in two steps:

1. The canonical row: a JSON object holding every column except ``prev_hash`` and ``hash`` —
   ``event_id``, ``event_type``, ``global_position``, ``namespace``, ``payload``,
   ``recorded_at``, ``schema_version``, ``stream``, ``stream_version`` — keys sorted, no
   whitespace, non-ASCII characters unescaped, UTF-8 encoded. ``payload`` enters as a JSON
   string holding the stored text verbatim, so even re-formatting the payload breaks the chain.
   Python's ``json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
   produces the same text as the ``orjson`` call used here.
2. ``hash = sha256(prev_hash + "\\n" + canonical_row)`` over the UTF-8 bytes, as lower-case hex.

Editing any column of a row changes its hash, so the row fails to verify at its own position;
deleting a row breaks the ``prev_hash`` link of the row after it. Everything here is pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from stratagate.store.records import GENESIS_HASH, NewEvent, StoredEvent

CHAINED_COLUMNS = (
    "event_id",
    "event_type",
    "global_position",
    "namespace",
    "payload",
    "recorded_at",
    "schema_version",
    "stream",
    "stream_version",
)
"""The columns a row's hash covers: all of them but ``prev_hash`` and ``hash``."""


def canonical_row(event: StoredEvent) -> bytes:
    """The canonical UTF-8 JSON text of ``event``'s chained columns (sorted keys, no spaces)."""
    return _canonical(_chained_fields(event))


def row_hash(prev_hash: str, event: StoredEvent) -> str:
    """The hex SHA-256 that chains ``event`` onto the row whose hash is ``prev_hash``."""
    return _hash(prev_hash, _chained_fields(event))


def seal_batch(
    events: Sequence[NewEvent],
    *,
    namespace: str,
    stream: str,
    first_version: int,
    recorded_at: str,
    prev_hash: str,
    first_position: int | None = None,
    positions: Sequence[int] | None = None,
) -> list[StoredEvent]:
    """Turn ``events`` into rows chained onto ``prev_hash``, ready to insert: at consecutive
    positions from ``first_position``, or at the increasing ``positions`` given."""
    if positions is None:
        if first_position is None:
            raise ValueError("seal_batch needs first_position or positions")
        positions = range(first_position, first_position + len(events))
    if len(positions) != len(events):
        raise ValueError("one position per event is needed")
    sealed: list[StoredEvent] = []
    for offset, (new, position) in enumerate(zip(events, positions, strict=True)):
        fields: dict[str, Any] = {
            "event_id": new.event_id,
            "event_type": new.event_type,
            "global_position": position,
            "namespace": namespace,
            "payload": new.payload,
            "recorded_at": recorded_at,
            "schema_version": new.schema_version,
            "stream": stream,
            "stream_version": first_version + offset,
        }
        digest = _hash(prev_hash, fields)
        sealed.append(_row(fields, prev_hash, digest))
        prev_hash = digest
    return sealed


def _row(fields: dict[str, Any], prev_hash: str, digest: str) -> StoredEvent:
    """The row of chained ``fields``, its arguments by position (a keyword spread of the
    fields costs a frozen dataclass's build about as much as the build itself)."""
    return StoredEvent(
        fields["global_position"],
        fields["namespace"],
        fields["stream"],
        fields["stream_version"],
        fields["event_id"],
        fields["event_type"],
        fields["schema_version"],
        fields["recorded_at"],
        fields["payload"],
        prev_hash,
        digest,
    )


def rechain(
    rows: Iterable[StoredEvent], *, namespace: str, positions: Iterable[int], prev_hash: str
) -> list[StoredEvent]:
    """Rows of another log chained onto ``prev_hash`` as rows of ``namespace`` at ``positions``:
    stream, stream version, event id, type, schema version, ``recorded_at`` and payload are
    kept, ``prev_hash`` and ``hash`` are recomputed (equal to the originals exactly when the
    namespace, the positions and the previous hash are the originals')."""
    chained: list[StoredEvent] = []
    for row, position in zip(rows, positions, strict=True):
        fields: dict[str, Any] = {
            "event_id": row.event_id,
            "event_type": row.event_type,
            "global_position": position,
            "namespace": namespace,
            "payload": row.payload,
            "recorded_at": row.recorded_at,
            "schema_version": row.schema_version,
            "stream": row.stream,
            "stream_version": row.stream_version,
        }
        digest = _hash(prev_hash, fields)
        chained.append(_row(fields, prev_hash, digest))
        prev_hash = digest
    return chained


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """Outcome of walking a namespace's rows: the first bad position (and why) and where the
    walk ended."""

    first_bad_position: int | None
    last_position: int
    last_hash: str
    count: int
    reason: str = ""


def check_chain(events: Iterable[StoredEvent], *, prev_hash: str = GENESIS_HASH) -> ChainCheck:
    """Walk one namespace's rows in position order; stop at the first row that does not verify.

    A row fails when its ``prev_hash`` is not the previous row's ``hash`` (``prev_hash`` for the
    first row walked: ``GENESIS_HASH`` from the start of the log), when its own ``hash``
    differs from ``row_hash`` of its columns, or when its columns cannot even be hashed (a
    value of the wrong type written behind the store's back).
    """
    expected_prev, last_position, count = prev_hash, 0, 0
    for event in events:
        reason = row_fault(expected_prev, event)
        if reason:
            return ChainCheck(event.global_position, last_position, expected_prev, count, reason)
        expected_prev, last_position, count = event.hash, event.global_position, count + 1
    return ChainCheck(None, last_position, expected_prev, count)


def row_fault(expected_prev: str, event: StoredEvent) -> str:
    """Why ``event`` does not chain onto a row whose hash is ``expected_prev`` ("" if it does)."""
    if event.prev_hash != expected_prev:
        return "its prev_hash is not the previous row's hash (a row was deleted, inserted or moved)"
    try:
        digest = row_hash(expected_prev, event)
    except (TypeError, ValueError, UnicodeError) as exc:
        return f"its columns cannot be hashed ({type(exc).__name__}: a value of the wrong type)"
    if event.hash != digest:
        return "its hash does not match its columns (the row was edited)"
    return ""


def _chained_fields(event: StoredEvent) -> dict[str, Any]:
    """The ``CHAINED_COLUMNS`` of ``event`` (one dict display: every row of a replay is hashed)."""
    return {
        "event_id": event.event_id,
        "event_type": event.event_type,
        "global_position": event.global_position,
        "namespace": event.namespace,
        "payload": event.payload,
        "recorded_at": event.recorded_at,
        "schema_version": event.schema_version,
        "stream": event.stream,
        "stream_version": event.stream_version,
    }


def _canonical(fields: dict[str, Any]) -> bytes:
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def _hash(prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + b"\n" + _canonical(fields)).hexdigest()


__all__ = [
    "CHAINED_COLUMNS",
    "ChainCheck",
    "canonical_row",
    "check_chain",
    "rechain",
    "row_fault",
    "row_hash",
    "seal_batch",
]
