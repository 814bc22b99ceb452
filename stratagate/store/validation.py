"""Checks of what callers hand the store, shared by every backend: names, batches, snapshots,
and the rule that tells a retried batch from a clash."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from stratagate.errors import InvalidInputError, StaleHandleError, StorageConflictError
from stratagate.store.records import EncodedEvent, Fence, NewEvent, Snapshot, StoredEvent


def replayed(
    namespace: str, stream: str, batch: list[NewEvent], stored: dict[str, StoredEvent]
) -> list[StoredEvent]:
    """The stored rows of a retried batch, or ``StorageConflictError`` if it is not a retry."""
    if len(stored) != len(batch):
        raise StorageConflictError(
            f"{len(stored)} of the {len(batch)} event ids of this batch are already stored; "
            "a retry must resend exactly a stored batch"
        )
    for new in batch:
        old = stored[new.event_id]
        if (old.namespace, old.stream, old.event_type, old.schema_version, old.payload) != (
            namespace,
            stream,
            new.event_type,
            new.schema_version,
            new.payload,
        ):
            raise StorageConflictError(
                f"event id {new.event_id!r} is already stored with different content "
                f"(namespace {old.namespace!r}, stream {old.stream!r}, type {old.event_type!r})"
            )
    return [stored[new.event_id] for new in batch]


def stale_version(namespace: str, stream: str, expected: int, actual: int) -> StaleHandleError:
    """The error of an append that expected ``stream`` at a version it has moved past."""
    return StaleHandleError(
        f"stream {stream!r} of namespace {namespace!r} is at version {actual}, but the writer "
        f"expected version {expected}: another writer appended first, nothing was appended "
        "(refresh and decide again)",
        namespace=namespace,
        stream=stream,
        expected_version=expected,
        actual_version=actual,
    )


def fence_crossed(namespace: str, stream: str, fence: Fence, found: str) -> StaleHandleError:
    """The error of an append whose fence another writer's event crossed."""
    return StaleHandleError(
        f"a {found} event was appended to namespace {namespace!r} after global position "
        f"{fence.position}, where this writer decided: nothing was appended "
        "(refresh and decide again)",
        namespace=namespace,
        stream=stream,
        position=fence.position,
    )


def check_fence(fence: object) -> None:
    if fence is None:
        return
    if not isinstance(fence, Fence) or not is_count(fence.position):
        raise InvalidInputError(f"fence must be a Fence with a position >= 0, not {fence!r}")
    for name in fence.event_types:
        if not isinstance(name, str) or not name.isidentifier():
            raise InvalidInputError(f"fence event types must be type names, not {name!r}")


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_name(what: str, value: object) -> None:
    if isinstance(value, str) and _usual(value):
        return
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, not {value!r}")
    check_storable(what, value)


def _usual(name: str) -> bool:
    """The usual name: non-blank ASCII (so valid UTF-8) text without NUL."""
    return name.isascii() and name != "" and not name.isspace() and "\x00" not in name


def check_storable(what: str, value: str) -> None:
    if "\x00" in value:
        raise InvalidInputError(f"{what} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode text: {exc.reason}") from exc


def check_batch(events: Sequence[NewEvent]) -> list[NewEvent]:
    if type(events) is not list and (  # a list needs no ABC check
        isinstance(events, str | bytes) or not isinstance(events, Sequence)
    ):
        raise InvalidInputError("events must be a sequence of NewEvent")
    batch = list(events)
    seen: set[str] = set()
    for new in batch:
        if not isinstance(new, NewEvent):
            raise InvalidInputError(f"events must be NewEvent instances, not {type(new).__name__}")
        check_name("event_id", new.event_id)
        check_name("event_type", new.event_type)
        if not is_count(new.schema_version) or new.schema_version < 1:
            raise InvalidInputError(
                f"schema_version of {new.event_id!r} must be an int >= 1, "
                f"not {new.schema_version!r}"
            )
        if not isinstance(new.payload, str):
            raise InvalidInputError(f"payload of {new.event_id!r} must be JSON text")
        try:
            if type(new) is not EncodedEvent:  # the codec's text is JSON by construction
                orjson.loads(new.payload)
        except orjson.JSONDecodeError as exc:
            raise InvalidInputError(
                f"payload of {new.event_id!r} is not valid JSON: {exc}"
            ) from exc
        if new.event_id in seen:
            raise InvalidInputError(f"event id {new.event_id!r} appears twice in one batch")
        seen.add(new.event_id)
    return batch


def check_snapshot(snapshot: Snapshot) -> None:
    if not isinstance(snapshot, Snapshot):
        raise InvalidInputError(f"expected a Snapshot, not {type(snapshot).__name__}")
    check_name("namespace", snapshot.namespace)
    check_name("key", snapshot.key)
    if not is_count(snapshot.position) or not is_count(snapshot.model_version):
        raise InvalidInputError("snapshot position and model_version must be ints >= 0")
    if not isinstance(snapshot.digest, str) or not isinstance(snapshot.created_at, str):
        raise InvalidInputError("snapshot digest and created_at must be strings")
    check_storable("snapshot digest", snapshot.digest)
    check_storable("snapshot created_at", snapshot.created_at)
    if not isinstance(snapshot.payload, bytes | bytearray | memoryview):
        raise InvalidInputError("snapshot payload must be bytes")


__all__ = [
    "check_batch",
    "check_fence",
    "check_name",
    "check_snapshot",
    "check_storable",
    "fence_crossed",
    "is_count",
    "replayed",
    "stale_version",
]
