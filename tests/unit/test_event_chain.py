"""The hash chain as documented for auditors, checked against a stdlib recomputation."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.store.chain import (
    CHAINED_COLUMNS,
    canonical_row,
    check_chain,
    row_hash,
    seal_batch,
)
from stratagate.store.records import GENESIS_HASH, NewEvent, StoredEvent

TEXT = st.text(max_size=30)
NEW_EVENTS = st.lists(
    st.builds(
        NewEvent, event_id=TEXT, event_type=TEXT, schema_version=st.integers(1, 9), payload=TEXT
    ),
    min_size=1,
    max_size=6,
)


def seal(events: list[NewEvent], prev_hash: str = GENESIS_HASH) -> list[StoredEvent]:
    return seal_batch(
        events,
        namespace="ns",
        stream="s",
        first_position=5,
        first_version=1,
        recorded_at="2024-01-01T00:00:00.000000Z",
        prev_hash=prev_hash,
    )


def auditor_hash(prev_hash: str, event: StoredEvent) -> str:
    """The recipe of the chain module docstring, written with the standard library only."""
    row = {column: getattr(event, column) for column in CHAINED_COLUMNS}
    canonical = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + "\n" + canonical).encode("utf-8")).hexdigest()


@given(events=NEW_EVENTS, namespace=TEXT, position=st.integers(1, 2**62))
def test_the_documented_recipe_reproduces_every_hash(
    events: list[NewEvent], namespace: str, position: int
) -> None:
    rows = seal_batch(
        events,
        namespace=namespace,
        stream="s",
        first_position=position,
        first_version=1,
        recorded_at="2024-01-01T00:00:00.000000Z",
        prev_hash=GENESIS_HASH,
    )
    prev = GENESIS_HASH
    for row in rows:
        assert row.prev_hash == prev
        assert row.hash == auditor_hash(prev, row) == row_hash(prev, row)
        prev = row.hash


def test_the_canonical_row_leaves_out_exactly_the_hashes() -> None:
    (row,) = seal([NewEvent("e", "T", 1, '{"a": 1}')])
    assert set(json.loads(canonical_row(row))) == set(CHAINED_COLUMNS)
    assert json.loads(canonical_row(row))["payload"] == '{"a": 1}'
    assert set(CHAINED_COLUMNS) | {"prev_hash", "hash"} == set(StoredEvent.__dataclass_fields__)


def test_sealed_rows_are_consecutive_and_chained() -> None:
    rows = seal([NewEvent(f"e{i}", "T", 1, "{}") for i in range(3)], prev_hash="a" * 64)
    assert [(row.global_position, row.stream_version) for row in rows] == [(5, 1), (6, 2), (7, 3)]
    assert rows[0].prev_hash == "a" * 64
    assert [row.prev_hash for row in rows[1:]] == [row.hash for row in rows[:-1]]


def test_an_intact_chain_reports_its_end() -> None:
    rows = seal([NewEvent(f"e{i}", "T", 1, "{}") for i in range(4)])
    check = check_chain(rows)
    assert (check.first_bad_position, check.last_position, check.last_hash, check.count) == (
        None,
        rows[-1].global_position,
        rows[-1].hash,
        4,
    )
    assert check_chain([]).first_bad_position is None


@pytest.mark.parametrize("column", [*CHAINED_COLUMNS, "prev_hash", "hash"])
def test_any_edited_column_is_found_at_its_row(column: str) -> None:
    rows = seal([NewEvent(f"e{i}", "T", 1, '{"i":0}') for i in range(4)])
    value = getattr(rows[2], column)
    edited = value + 1000 if isinstance(value, int) else value + " "
    rows[2] = replace(rows[2], **{column: edited})
    assert check_chain(rows).first_bad_position == rows[2].global_position


def test_a_missing_row_is_found_at_the_next_one() -> None:
    rows = seal([NewEvent(f"e{i}", "T", 1, "{}") for i in range(4)])
    assert check_chain(rows[:1] + rows[2:]).first_bad_position == rows[2].global_position
    assert check_chain(rows[1:]).first_bad_position == rows[1].global_position
