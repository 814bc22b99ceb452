"""Folding stored or hand-made events into a fresh ``NamespaceState`` without a store: the
frozen fixtures' rows, or a few events at chosen positions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from projections.state import NamespaceState
from stratagate.events import DomainEvent, Recorded, decode_payload

FIXTURES = Path(__file__).parents[1] / "fixtures" / "events"
FROZEN_LOG = FIXTURES / "log.v1.jsonl"


def frozen_log_rows() -> list[dict[str, Any]]:
    """The frozen v1 session's rows, as ``freeze_events.py`` wrote them."""
    return [orjson.loads(line) for line in FROZEN_LOG.read_bytes().splitlines() if line]


def fold_rows(rows: Iterable[Mapping[str, Any]], namespace: str = "fixture") -> NamespaceState:
    """Decode each stored row (upcasting older versions) and fold it, in order."""
    state = NamespaceState(namespace)
    for row in rows:
        event = decode_payload(row["event_type"], row["schema_version"], row["payload"])
        state.apply(
            Recorded(
                position=row["position"],
                namespace=namespace,
                stream=row["stream"],
                stream_version=row["stream_version"],
                event=event,
            )
        )
    return state


def fold_events(
    state: NamespaceState, events: Sequence[DomainEvent], *, last_position: int
) -> None:
    """Fold ``events`` into ``state`` at consecutive positions ending at ``last_position``."""
    first = last_position - len(events) + 1
    for offset, event in enumerate(events):
        state.apply(
            Recorded(
                position=first + offset,
                namespace=state.namespace,
                stream=event.stream,
                stream_version=offset + 1,
                event=event,
            )
        )
