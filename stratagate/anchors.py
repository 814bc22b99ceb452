"""Anchors: a namespace's head written down elsewhere, so a rewritten log cannot pass for it.

The hash chain finds any edit that was not followed by re-hashing every later row. Someone who
can write the database can re-hash, though, or cut the tail and fix the heads record. An
anchor — the namespace, a global position, the chain hash of the row there, the time — kept
outside the database (a ticket, a log shipper, another machine) turns both into findable
damage: the log still extends the anchor only if its row at that position has that hash.

With a key (``STRATAGATE_CHECKPOINT_KEY``) an anchor is also signed: an HMAC-SHA256 over its
fields, kept in its ``seal`` field (the name the ``stratagate.anchor.v1`` format stores), so an
anchor cannot be forged without the key either. Everything here is pure but
the environment read of ``checkpoint_key``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from stratagate.errors import InvalidInputError
from stratagate.models import Model
from stratagate.store.records import LogFault, StoredEvent
from stratagate.timeutil import format_utc

KEY_VARIABLE = "STRATAGATE_CHECKPOINT_KEY"
"""The environment variable holding the key that signs anchors and checkpoint events."""

ANCHOR_FORMAT: Literal["stratagate.anchor.v1"] = "stratagate.anchor.v1"


class Anchor(Model):
    """A namespace's head at one moment: keep it outside the database, verify against it."""

    format: Literal["stratagate.anchor.v1"] = ANCHOR_FORMAT
    namespace: str
    position: int
    """The global position of the namespace's last row when the anchor was taken (0: empty)."""
    head_hash: str
    """The chain hash of that row: it commits to every row up to it."""
    event_count: int
    created_at: str
    seal: str | None = None
    """The signature: HMAC-SHA256 of the other fields under the checkpoint key, when one was
    set (the field keeps the format's name)."""


def checkpoint_key() -> bytes | None:
    """The signing key from ``STRATAGATE_CHECKPOINT_KEY`` (``None`` when unset or empty)."""
    value = os.environ.get(KEY_VARIABLE, "")
    return value.encode("utf-8", "surrogateescape") if value else None


def sign(key: bytes, namespace: str, position: int, head_hash: str) -> str:
    """The HMAC-SHA256 (hex) that binds a head to its namespace under ``key``."""
    message = orjson.dumps([namespace, position, head_hash])
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def make_anchor(
    namespace: str, last: StoredEvent | None, count: int, at: datetime, key: bytes | None
) -> Anchor:
    """The anchor of a namespace whose last row is ``last`` (``None``: empty)."""
    position = last.global_position if last else 0
    head_hash = last.hash if last else "0" * 64
    return Anchor(
        namespace=namespace,
        position=position,
        head_hash=head_hash,
        event_count=count,
        created_at=format_utc(at),
        seal=sign(key, namespace, position, head_hash) if key else None,
    )


def parse_anchor(value: Anchor | Mapping[str, Any] | str | bytes) -> Anchor:
    """An anchor from its JSON text or mapping; anything else is an ``InvalidInputError``."""
    if isinstance(value, Anchor):
        return value
    try:
        data = orjson.loads(value) if isinstance(value, str | bytes) else dict(value)
        return Anchor.model_validate(data)
    except (orjson.JSONDecodeError, ValidationError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"not a stratagate anchor: {exc}".splitlines()[0]) from exc


def anchor_fault(
    anchor: Anchor, at_position: StoredEvent | None, last_position: int, key: bytes | None
) -> LogFault | None:
    """Why the log no longer extends ``anchor`` (``None`` if it does), given the namespace's
    row at the anchor's position (if any) and its last position now."""
    if anchor.seal is not None and key is not None:
        expected = sign(key, anchor.namespace, anchor.position, anchor.head_hash)
        if not hmac.compare_digest(expected, anchor.seal):
            return LogFault(
                anchor.position,
                "the anchor's seal (its signature) does not match (forged or wrong key)",
            )
    if anchor.position == 0:
        return None
    if at_position is None or at_position.global_position != anchor.position:
        first_gone = min(anchor.position, last_position + 1)
        return LogFault(
            first_gone,
            f"the log no longer holds the row at global position {anchor.position} that the "
            f"anchor of {anchor.created_at} names (it was truncated)",
        )
    if at_position.hash != anchor.head_hash:
        return LogFault(
            anchor.position,
            f"the row at global position {anchor.position} no longer has the hash the anchor of "
            f"{anchor.created_at} recorded: the log up to it was rewritten and re-hashed",
        )
    return None


__all__ = [
    "ANCHOR_FORMAT",
    "KEY_VARIABLE",
    "Anchor",
    "anchor_fault",
    "checkpoint_key",
    "make_anchor",
    "parse_anchor",
    "sign",
]
