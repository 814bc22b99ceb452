"""Stored schemas cannot drift: frozen payloads of every event type decode, upcast and replay.

The files under ``tests/fixtures/events`` were written once by ``tests/fixtures/freeze_events.py``
and are never regenerated: they stand for rows already in users' databases. A change to what
an event stores (a field added, renamed, retyped or dropped, in the event or in a payload model
of ``stratagate.events.payloads``) without a ``schema_version`` bump fails here, because the
current-version fixture no longer re-encodes to its own text; a bump without a new fixture
fails the coverage test; a bump without an upcaster fails the decode of the older fixture.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stratagate.events import EVENT_TYPES, decode_payload, encode
from tests.support.folding import FIXTURES, fold_rows, frozen_log_rows

PAYLOADS = sorted(FIXTURES.glob("*.v*.json"))


def load(path: Path) -> dict[str, object]:
    record: dict[str, object] = orjson.loads(path.read_bytes())
    return record


def test_every_current_event_version_has_a_frozen_payload() -> None:
    frozen = {(str(load(p)["event_type"]), int(str(load(p)["schema_version"]))) for p in PAYLOADS}
    current = {(name, cls.schema_version) for name, cls in EVENT_TYPES.items()}
    assert current - frozen == set(), (
        "freeze the new versions: python -m tests.fixtures.freeze_events"
    )
    for name, version in frozen:
        assert name in EVENT_TYPES and version <= EVENT_TYPES[name].schema_version


@pytest.mark.parametrize("path", PAYLOADS, ids=[p.stem for p in PAYLOADS])
def test_a_frozen_payload_decodes_and_upcasts(path: Path) -> None:
    record = load(path)
    name, version, payload = (
        str(record["event_type"]),
        int(str(record["schema_version"])),
        str(record["payload"]),
    )
    event = decode_payload(name, version, payload)
    assert type(event) is EVENT_TYPES[name]
    again = encode(event, "fixture:0")
    assert decode_payload(name, again.schema_version, again.payload) == event
    if version == EVENT_TYPES[name].schema_version:
        # the stored shape of this version is exactly what the code writes today
        assert again.payload == payload


def test_the_frozen_log_replays() -> None:
    """A real session's log (every role, failures, the gate, governance, an import and its
    undo) decodes row by row to the same text and folds into every read model."""
    rows = frozen_log_rows()
    for row in rows:
        event = decode_payload(row["event_type"], row["schema_version"], row["payload"])
        if row["schema_version"] == type(event).schema_version:
            assert encode(event, "x").payload == row["payload"], row["position"]
    state = fold_rows(rows)
    assert state.position == rows[-1]["position"]
    assert len(state.blocks.blocks) > 10 and state.events.records and state.elements.elements
