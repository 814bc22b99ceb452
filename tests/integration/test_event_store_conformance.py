"""One conformance suite for the event store, run unchanged on memory, SQLite file, PostgreSQL."""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import inspect, text

from stratagate.errors import (
    InvalidInputError,
    SchemaVersionError,
    StaleHandleError,
    StorageConflictError,
    StorageError,
    StrataGateError,
)
from stratagate.store import open_store, schema
from stratagate.store.records import (
    GENESIS_HASH,
    EventStore,
    Fence,
    NewEvent,
    Snapshot,
    StoredEvent,
)
from stratagate.store.sql import SqlEventStore, open_event_store

if TYPE_CHECKING:
    from conftest import Backend

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
PAYLOADS = JSON_VALUES.map(lambda value: orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())
NAMES = st.text(min_size=1, max_size=12).filter(lambda name: name.strip() and "\x00" not in name)


def new(event_id: str, payload: object = None, event_type: str = "Noted") -> NewEvent:
    """A NewEvent with canonical JSON of ``payload`` (defaults to the id)."""
    body = {"id": event_id} if payload is None else payload
    return NewEvent(
        event_id, event_type, 1, orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode()
    )


def batch(prefix: str, size: int) -> list[NewEvent]:
    return [new(f"{prefix}-{i}") for i in range(size)]


def poison(store: SqlEventStore) -> None:
    """Install a trigger that makes the database itself reject the row with id ``poison``."""
    with store.engine.begin() as conn:
        if store.engine.dialect.name == "postgresql":
            conn.execute(
                text(
                    "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    "IF NEW.event_id = 'poison' THEN RAISE EXCEPTION 'poisoned row'; END IF; "
                    "RETURN NEW; END $$"
                )
            )
            conn.execute(
                text(
                    "CREATE TRIGGER poison BEFORE INSERT ON stratagate_events "
                    "FOR EACH ROW EXECUTE FUNCTION poison()"
                )
            )
        else:
            conn.execute(
                text(
                    "CREATE TRIGGER poison BEFORE INSERT ON stratagate_events "
                    "WHEN NEW.event_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
                )
            )


# --- appending and reading -------------------------------------------------------------------


def test_satisfies_the_event_store_protocol(store: SqlEventStore) -> None:
    assert isinstance(store, EventStore)


def test_empty_store_reports_nothing(store: SqlEventStore) -> None:
    assert store.read("ns") == [] and store.read_all() == []
    assert (store.head("ns"), store.count("ns"), store.stream_version("ns", "s")) == (0, 0, 0)
    assert store.namespaces() == [] and store.global_head() == 0
    assert store.verify_chain("ns") is None


def test_append_numbers_rows_and_read_returns_them(store: SqlEventStore) -> None:
    first = store.append("ns", "ingest", batch("a", 3), 0)
    second = store.append("ns", "ingest", batch("b", 2), 3)
    rows = first + second
    assert [row.stream_version for row in rows] == [1, 2, 3, 4, 5]
    assert [row.global_position for row in rows] == sorted({row.global_position for row in rows})
    assert [row.event_id for row in rows] == ["a-0", "a-1", "a-2", "b-0", "b-1"]
    assert all(row.namespace == "ns" and row.stream == "ingest" for row in rows)
    assert [row.payload for row in rows] == [
        event.payload for event in batch("a", 3) + batch("b", 2)
    ]
    assert store.read("ns") == rows
    assert store.stream_version("ns", "ingest") == 5
    assert store.head("ns") == rows[-1].global_position == store.global_head()
    assert store.count("ns") == 5 and store.namespaces() == ["ns"]


def test_empty_batch_appends_nothing(store: SqlEventStore) -> None:
    assert store.append("ns", "s", [], 0) == []
    assert store.append("ns", "s", [], 7) == []
    assert store.count("ns") == 0 and store.namespaces() == []


def test_stale_expected_version_conflicts_naming_both_versions(store: SqlEventStore) -> None:
    store.append("ns", "s", batch("a", 2), 0)
    for stale in (0, 1, 3):
        with pytest.raises(StorageConflictError, match=rf"version 2.*expected version {stale}"):
            store.append("ns", "s", [new(f"late-{stale}")], stale)
    assert store.count("ns") == 2 and store.stream_version("ns", "s") == 2


def test_a_stale_writer_learns_where_and_appends_nothing(store: SqlEventStore) -> None:
    store.append("ns", "s", batch("a", 2), 0)
    with pytest.raises(StaleHandleError) as caught:
        store.append("ns", "s", [new("late")], 1)
    error = caught.value
    assert (error.namespace, error.stream) == ("ns", "s")
    assert (error.expected_version, error.actual_version) == (1, 2)
    assert store.count("ns") == 2


def test_a_fence_refuses_an_append_past_a_fenced_event(store: SqlEventStore) -> None:
    store.append("ns", "ingest", batch("a", 2), 0)
    seen = store.head("ns")
    fence = Fence(seen, frozenset({"ThreadErased"}))
    store.append("ns", "ingest", [new("fine")], 2, fence=fence)  # nothing fenced came after
    store.append("ns", "weights", [NewEvent("erase", "ThreadErased", 1, "{}")], 0)
    with pytest.raises(StaleHandleError, match=r"ThreadErased event .* after global position"):
        store.append("ns", "ingest", [new("late")], 3, fence=fence)
    assert store.stream_version("ns", "ingest") == 3
    assert store.stream_version("ns", "ingest", at=seen) == 2
    later = Fence(store.head("ns"), frozenset({"ThreadErased"}))
    assert store.append("ns", "ingest", [new("after")], 3, fence=later)[0].stream_version == 4


def test_expected_version_none_skips_the_check(store: SqlEventStore) -> None:
    store.append("ns", "s", batch("a", 2), 0)
    rows = store.append("ns", "s", [new("free")], None)
    assert rows[0].stream_version == 3


def test_streams_count_their_own_versions(store: SqlEventStore) -> None:
    store.append("ns", "ingest", batch("a", 2), 0)
    rows = store.append("ns", "weights", batch("b", 1), 0)
    assert rows[0].stream_version == 1
    assert (store.stream_version("ns", "ingest"), store.stream_version("ns", "weights")) == (2, 1)


def test_idempotent_retry_returns_the_stored_rows(store: SqlEventStore) -> None:
    rows = store.append("ns", "s", batch("a", 3), 0)
    store.append("ns", "s", batch("b", 1), 3)
    assert store.append("ns", "s", batch("a", 3), 0) == rows
    assert store.append("ns", "s", batch("a", 3), None) == rows
    assert store.count("ns") == 4 and store.stream_version("ns", "s") == 4


@pytest.mark.parametrize(
    "change",
    [
        lambda e: replace(e, payload='{"other":true}'),
        lambda e: replace(e, event_type="Other"),
        lambda e: replace(e, schema_version=2),
    ],
    ids=["payload", "event_type", "schema_version"],
)
def test_same_id_with_different_content_conflicts(
    store: SqlEventStore, change: Callable[[NewEvent], NewEvent]
) -> None:
    original = batch("a", 2)
    store.append("ns", "s", original, 0)
    with pytest.raises(StorageConflictError, match="a-1"):
        store.append("ns", "s", [original[0], change(original[1])], 2)
    assert store.count("ns") == 2


def test_same_ids_in_another_stream_or_namespace_conflict(store: SqlEventStore) -> None:
    store.append("ns", "s", batch("a", 2), 0)
    with pytest.raises(StorageConflictError):
        store.append("ns", "other", batch("a", 2), 0)
    with pytest.raises(StorageConflictError):
        store.append("ns2", "s", batch("a", 2), 0)
    assert store.namespaces() == ["ns"] and store.stream_version("ns", "other") == 0


def test_partly_stored_batch_conflicts_and_appends_nothing(store: SqlEventStore) -> None:
    store.append("ns", "s", batch("a", 2), 0)
    with pytest.raises(StorageConflictError, match="1 of the 2"):
        store.append("ns", "s", [new("a-1"), new("fresh")], 2)
    with pytest.raises(StorageConflictError, match="2 of the 3"):
        store.append("ns", "s", [*batch("a", 2), new("fresh")], 2)
    assert [row.event_id for row in store.read("ns")] == ["a-0", "a-1"]


def test_batch_failing_midway_leaves_nothing(store: SqlEventStore, sql_only: None) -> None:
    before = store.append("ns", "s", batch("a", 2), 0)
    poison(store)
    with pytest.raises(StrataGateError, match="poisoned row"):
        store.append("ns", "s", [new("b-0"), new("b-1"), new("poison"), new("b-3")], 2)
    assert store.read("ns") == before and store.read_all() == before
    assert (store.count("ns"), store.head("ns")) == (2, before[-1].global_position)
    assert store.stream_version("ns", "s") == 2 and store.verify_chain("ns") is None
    after = store.append("ns", "s", [new("b-0")], 2)
    assert after[0].prev_hash == before[-1].hash and store.verify_chain("ns") is None


@pytest.mark.parametrize(
    ("namespace", "stream", "events", "expected"),
    [
        ("", "s", [new("x")], 0),
        ("   ", "s", [new("x")], 0),
        ("ns", "", [new("x")], 0),
        ("ns\x00", "s", [new("x")], 0),
        ("ns\ud800", "s", [new("x")], 0),
        ("ns", "s", [new("x")], -1),
        ("ns", "s", [new("x")], True),
        ("ns", "s", [NewEvent("", "T", 1, "{}")], 0),
        ("ns", "s", [NewEvent("x", "", 1, "{}")], 0),
        ("ns", "s", [NewEvent("x", "T", 0, "{}")], 0),
        ("ns", "s", [NewEvent("x", "T", 1, "{not json")], 0),
        ("ns", "s", [NewEvent("x", "T", 1, b"{}")], 0),  # type: ignore[arg-type]
        ("ns", "s", [new("x"), new("y"), new("x")], 0),
        ("ns", "s", [{"event_id": "x"}], 0),
        ("ns", "s", "not a batch", 0),
    ],
)
def test_invalid_input_is_rejected_before_anything_is_stored(
    store: SqlEventStore, namespace: object, stream: object, events: object, expected: object
) -> None:
    with pytest.raises(InvalidInputError):
        store.append(namespace, stream, events, expected)  # type: ignore[arg-type]
    assert store.read_all() == [] and store.namespaces() == []


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.read("ns", after=-1),
        lambda s: s.read("ns", limit=-1),
        lambda s: s.read_all(after=1.5),
        lambda s: s.read("", 0),
        lambda s: s.stream_version("ns", ""),
        lambda s: s.head(""),
        lambda s: s.verify_chain(""),
    ],
)
def test_invalid_read_arguments_are_rejected(
    store: SqlEventStore, call: Callable[[SqlEventStore], object]
) -> None:
    with pytest.raises(InvalidInputError):
        call(store)


# --- namespaces and global order -------------------------------------------------------------


def test_namespaces_are_isolated(store: SqlEventStore) -> None:
    for i in range(3):
        store.append("left", "s", [new(f"l{i}")], i)
        store.append("right", "s", [new(f"r{i}")], i)
    store.append("le", "s", [new("prefix-trap")], 0)
    left, right = store.read("left"), store.read("right")
    assert [row.event_id for row in left] == ["l0", "l1", "l2"]
    assert [row.event_id for row in right] == ["r0", "r1", "r2"]
    assert {row.namespace for row in left} == {"left"} and {row.namespace for row in right} == {
        "right"
    }
    assert right[0].prev_hash == GENESIS_HASH and right[0].global_position == 2
    assert store.read("left", after=left[0].global_position, limit=1) == [left[1]]
    assert (store.count("left"), store.count("le"), store.count("nobody")) == (3, 1, 0)
    assert store.head("right") == right[-1].global_position
    assert store.namespaces() == ["le", "left", "right"]


def test_read_all_is_the_global_order(store: SqlEventStore) -> None:
    appended: list[StoredEvent] = []
    for i in range(4):
        appended += store.append(f"ns{i % 2}", "s", batch(f"g{i}", 2), None)
    assert store.read_all() == appended
    positions = [row.global_position for row in appended]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert store.read_all(after=positions[2], limit=3) == appended[3:6]
    assert store.read_all(after=positions[-1]) == []
    assert store.read_all(limit=0) == []


def test_paged_reads_cover_the_namespace_exactly_once(store: SqlEventStore) -> None:
    for i in range(5):
        store.append("ns", "s", batch(f"p{i}", 3), None)
        store.append("noise", "s", batch(f"n{i}", 1), None)
    pages, after = [], 0
    while page := store.read("ns", after=after, limit=4):
        pages.append(page)
        after = page[-1].global_position
    assert [len(page) for page in pages] == [4, 4, 4, 3]
    assert [row for page in pages for row in page] == store.read("ns")


# --- hash chain ------------------------------------------------------------------------------


def test_rows_chain_per_namespace_and_verify(store: SqlEventStore) -> None:
    store.append("a", "s", batch("a", 3), 0)
    store.append("b", "s", batch("b", 2), 0)
    store.append("a", "s", batch("c", 2), 3)
    for namespace in ("a", "b"):
        rows = store.read(namespace)
        assert rows[0].prev_hash == GENESIS_HASH
        assert all(later.prev_hash == earlier.hash for earlier, later in itertools.pairwise(rows))
        assert len({row.hash for row in rows}) == len(rows)
        assert store.verify_chain(namespace) is None


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("payload", '{"id":"forged"}'),
        ("event_type", "Forged"),
        ("recorded_at", "1999-01-01T00:00:00.000000Z"),
        ("stream", "forged"),
        ("stream_version", 99),
        ("schema_version", 7),
        ("event_id", "forged"),
        ("prev_hash", "f" * 64),
        ("hash", "e" * 64),
    ],
)
def test_a_row_edited_behind_the_stores_back_is_found_at_its_position(
    store: SqlEventStore, raw_sql: Callable[..., None], column: str, value: object
) -> None:
    store.append("ns", "s", batch("a", 3), 0)
    store.append("other", "s", batch("o", 2), 0)
    store.append("ns", "s", batch("b", 3), 3)
    target = store.read("ns")[3]
    raw_sql(
        f"UPDATE stratagate_events SET {column} = :value WHERE global_position = :position",
        value=value,
        position=target.global_position,
    )
    assert store.verify_chain("ns") == target.global_position
    assert store.verify_chain("other") is None


def test_a_deleted_row_is_found(store: SqlEventStore, raw_sql: Callable[..., None]) -> None:
    rows = store.append("ns", "s", batch("a", 5), 0)
    raw_sql("DELETE FROM stratagate_events WHERE global_position = :p", p=rows[2].global_position)
    assert store.verify_chain("ns") == rows[3].global_position
    raw_sql("DELETE FROM stratagate_events WHERE global_position >= :p", p=rows[2].global_position)
    # tail gone: the first position past the last row, where the heads record and rows part
    assert store.verify_chain("ns") == rows[2].global_position


def test_the_chain_continues_after_reopening(
    store: SqlEventStore, reopen: Callable[..., SqlEventStore]
) -> None:
    first = store.append("ns", "s", batch("a", 2), 0)
    again = reopen()
    assert again.read("ns") == first
    later = again.append("ns", "s", batch("b", 2), 2)
    assert (
        later[0].prev_hash == first[-1].hash
        and later[0].global_position > first[-1].global_position
    )
    assert again.verify_chain("ns") is None


def test_recorded_at_comes_from_the_clock(reopen: Callable[..., SqlEventStore]) -> None:
    clocked = reopen(
        clock=lambda: datetime(2024, 5, 7, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    )
    (row,) = clocked.append("ns", "s", [new("x")], 0)
    assert row.recorded_at == "2024-05-07T12:30:00.000000Z" == clocked.read("ns")[0].recorded_at


# --- layout version --------------------------------------------------------------------------


def test_a_newer_layout_is_refused(
    store: SqlEventStore, raw_sql: Callable[..., None], reopen: Callable[..., SqlEventStore]
) -> None:
    newer = schema.LAYOUT_VERSION + 1
    raw_sql("UPDATE stratagate_meta SET value = :v WHERE key = 'layout_version'", v=str(newer))
    with pytest.raises(
        SchemaVersionError, match=rf"layout {newer}, newer than layout {schema.LAYOUT_VERSION}"
    ):
        reopen()


def test_an_older_layout_is_upgraded_in_one_transaction(
    store: SqlEventStore, sql_only: None
) -> None:
    def add_table(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute(text("CREATE TABLE upgraded_marker (id INTEGER PRIMARY KEY)"))

    def add_table_then_fail(conn) -> None:  # type: ignore[no-untyped-def]
        add_table(conn)
        raise RuntimeError("step failed")

    current = schema.LAYOUT_VERSION
    with pytest.raises(RuntimeError), store.engine.begin() as conn:
        schema.ensure_layout(
            conn, create=True, target=current + 1, upgrades={current: add_table_then_fail}
        )
    with store.engine.connect() as conn:
        assert not inspect(conn).has_table("upgraded_marker")
        assert conn.execute(text("SELECT value FROM stratagate_meta")).scalar() == str(current)
    with pytest.raises(StorageError, match="no upgrade"), store.engine.begin() as conn:
        schema.ensure_layout(conn, create=True, target=current + 1, upgrades={})
    with store.engine.begin() as conn:
        found = schema.ensure_layout(
            conn, create=True, target=current + 1, upgrades={current: add_table}
        )
    assert found == current
    with store.engine.connect() as conn:
        assert inspect(conn).has_table("upgraded_marker")
        assert conn.execute(text("SELECT value FROM stratagate_meta")).scalar() == str(current + 1)


def test_head_sees_another_stores_appends_at_once(
    store: SqlEventStore, reopen: Callable[..., SqlEventStore], sql_only: None
) -> None:
    """The head probe a handle asks before deciding never answers from an old snapshot."""
    other = reopen()
    assert store.head("ns") == 0
    for n in range(1, 4):
        rows = other.append("ns", "s", [new(f"e{n}")], n - 1)
        assert store.head("ns") == rows[-1].global_position
        assert store.stream_version("ns", "s") == n


def test_taking_turns_lets_one_writer_decide_at_a_time(
    store: SqlEventStore, reopen: Callable[..., SqlEventStore]
) -> None:
    other = reopen()
    order: list[str] = []

    def second() -> None:
        with other.taking_turns("ns"):
            order.append("second")

    with store.taking_turns("ns"):
        waiting = threading.Thread(target=second)
        waiting.start()
        waiting.join(0.3)
        assert waiting.is_alive()  # it waits for its turn
        order.append("first")
    waiting.join(10)
    assert order == ["first", "second"]
    with store.taking_turns("ns"), store.taking_turns("ns"):
        pass  # the holder takes it again freely (a flow's stages do)


def test_create_false_refuses_an_empty_database(backend: Backend, sql_only: None) -> None:
    with pytest.raises(StorageError):
        open_event_store(backend.database, create=False)


def test_create_false_opens_an_existing_store(
    store: SqlEventStore, reopen: Callable[..., SqlEventStore]
) -> None:
    store.append("ns", "s", batch("a", 1), 0)
    assert reopen(create=False).count("ns") == 1


# --- snapshots, closing, threads -------------------------------------------------------------


def test_snapshots_round_trip_and_replace(store: SqlEventStore) -> None:
    first = Snapshot("ns", "search", 10, "d1", 1, b"\x00\xffbytes", "2024-01-01T00:00:00.000000Z")
    store.save_snapshot(first)
    assert store.load_snapshot("ns", "search") == first
    second = replace(first, position=20, digest="d2", model_version=2, payload=b"newer" * 1000)
    store.save_snapshot(second)
    assert store.load_snapshot("ns", "search") == second
    assert store.load_snapshot("ns", "elements") is None
    assert store.load_snapshot("other", "search") is None
    with pytest.raises(InvalidInputError):
        store.save_snapshot(replace(first, position=-1))
    with pytest.raises(InvalidInputError):
        store.save_snapshot(replace(first, payload="text"))  # type: ignore[arg-type]


def test_a_closed_store_refuses_work(backend: Backend) -> None:
    store = open_store(backend.database)
    store.close()
    with pytest.raises(StorageError, match="closed"):
        store.append("ns", "s", [new("x")], 0)
    with pytest.raises(StorageError, match="closed"):
        store.read("ns")


def test_threads_appending_to_one_stream_lose_nothing(store: SqlEventStore) -> None:
    def writer(name: str) -> None:
        for i in range(10):
            while True:
                try:
                    store.append("ns", "s", [new(f"{name}-{i}")], store.stream_version("ns", "s"))
                    break
                except StorageConflictError:
                    continue

    threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = store.read("ns")
    assert sorted(row.event_id for row in rows) == sorted(
        f"t{n}-{i}" for n in range(4) for i in range(10)
    )
    assert [row.stream_version for row in rows] == list(range(1, 41))
    assert store.verify_chain("ns") is None


# --- properties ------------------------------------------------------------------------------


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(namespace=NAMES, stream=NAMES, event_type=NAMES, event_id=NAMES, payload=PAYLOADS)
def test_any_text_round_trips_exactly(
    store: SqlEventStore, namespace: str, stream: str, event_type: str, event_id: str, payload: str
) -> None:
    namespace, event_id = f"{namespace}/{uuid.uuid4().hex}", f"{event_id}/{uuid.uuid4().hex}"
    event = NewEvent(event_id, event_type, 1, payload)
    rows = store.append(namespace, stream, [event], 0)
    (row,) = store.read(namespace)
    assert row == rows[0]
    assert (row.namespace, row.stream, row.event_type, row.event_id, row.payload) == (
        namespace,
        stream,
        event_type,
        event_id,
        payload,
    )
    assert store.verify_chain(namespace) is None


def test_random_appends_keep_the_log_consistent(store: SqlEventStore) -> None:
    """Random appends, stale writers and retries across namespaces and streams."""
    run_state_machine_as_test(
        lambda: LogMachine(store),
        settings=settings(max_examples=12, stateful_step_count=10, deadline=None),
    )


class LogMachine(RuleBasedStateMachine):
    """The model is the list of rows appended so far; the store must agree with it."""

    STREAMS = ("ingest", "weights")

    def __init__(self, store: SqlEventStore) -> None:
        super().__init__()
        self.store = store
        self.tag = uuid.uuid4().hex[:8]
        self.start = store.global_head()
        self.rows: list[StoredEvent] = []
        self.batches: list[tuple[str, str, list[NewEvent], list[StoredEvent]]] = []
        self.serial = 0

    def namespace(self, index: int) -> str:
        return f"{self.tag}-ns{index}"

    def fresh(self, payload: str) -> NewEvent:
        self.serial += 1
        return NewEvent(f"{self.tag}-{self.serial}", "Noted", 1, payload)

    def version(self, namespace: str, stream: str) -> int:
        return sum(1 for row in self.rows if (row.namespace, row.stream) == (namespace, stream))

    @rule(
        index=st.integers(0, 2),
        stream=st.sampled_from(STREAMS),
        payloads=st.lists(PAYLOADS, max_size=4),
        checked=st.booleans(),
    )
    def append(self, index: int, stream: str, payloads: list[str], checked: bool) -> None:
        namespace = self.namespace(index)
        events = [self.fresh(payload) for payload in payloads]
        current = self.version(namespace, stream)
        rows = self.store.append(namespace, stream, events, current if checked else None)
        assert [(row.event_id, row.payload) for row in rows] == [
            (event.event_id, event.payload) for event in events
        ]
        assert [row.stream_version for row in rows] == list(
            range(current + 1, current + 1 + len(events))
        )
        last = self.rows[-1].global_position if self.rows else self.start
        assert all(row.global_position > last for row in rows)
        self.rows += rows
        if events:
            self.batches.append((namespace, stream, events, rows))

    @rule(
        index=st.integers(0, 2),
        stream=st.sampled_from(STREAMS),
        payload=PAYLOADS,
        delta=st.sampled_from([-2, -1, 1, 3]),
    )
    def stale_append(self, index: int, stream: str, payload: str, delta: int) -> None:
        namespace = self.namespace(index)
        expected = self.version(namespace, stream) + delta
        if expected < 0:
            return
        with pytest.raises(StorageConflictError):
            self.store.append(namespace, stream, [self.fresh(payload)], expected)

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        namespace, stream, events, rows = data.draw(st.sampled_from(self.batches))
        assert self.store.append(namespace, stream, events, 0) == rows

    @precondition(lambda self: self.batches)
    @rule(data=st.data(), how=st.sampled_from(["payload", "stream", "extra", "subset_plus_new"]))
    def bad_retry(self, data: st.DataObject, how: str) -> None:
        namespace, stream, events, _ = data.draw(st.sampled_from(self.batches))
        if how == "payload":
            changed = '{"changed":1}' if events[0].payload != '{"changed":1}' else "[]"
            events = [replace(events[0], payload=changed), *events[1:]]
        elif how == "stream":
            stream = "other" if stream != "other" else "ingest"
        elif how == "extra":
            events = [*events, self.fresh("{}")]
        else:
            events = [events[-1], self.fresh("{}")]
        with pytest.raises(StorageConflictError):
            self.store.append(namespace, stream, events, None)

    @invariant()
    def the_store_agrees_with_the_model(self) -> None:
        for index in range(3):
            namespace = self.namespace(index)
            expected = [row for row in self.rows if row.namespace == namespace]
            assert self.store.read(namespace) == expected
            assert self.store.count(namespace) == len(expected)
            assert self.store.head(namespace) == (expected[-1].global_position if expected else 0)
            assert self.store.verify_chain(namespace) is None
            for stream in self.STREAMS:
                versions = [row.stream_version for row in expected if row.stream == stream]
                assert versions == list(range(1, len(versions) + 1))
                assert self.store.stream_version(namespace, stream) == len(versions)
        assert self.store.read_all(after=self.start) == self.rows


# --- opening ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "database",
    [
        "mysql://user@localhost/db",
        "postgresql+psycopg2://u@h/db",
        "sqlite+aiosqlite:///x.db",
        "://",
    ],
)
def test_unsupported_or_malformed_urls_raise_storage_error(database: str) -> None:
    with pytest.raises(StorageError):
        open_event_store(database)


def test_an_unreachable_server_raises_storage_error_with_the_cause() -> None:
    with pytest.raises(StorageError) as caught:
        open_event_store("postgresql://postgres@127.0.0.1:1/test")
    assert caught.value.__cause__ is not None


def test_sqlite_paths_urls_and_pathlike_open_the_same_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "nested" / "dir" / "log.db"
    with open_event_store(path) as first:
        first.append("ns", "s", [new("x")], 0)
    with open_event_store(f"sqlite:///{path}") as second:
        assert second.count("ns") == 1
    with open_event_store(str(path), create=False) as third:
        assert [row.event_id for row in third.read("ns")] == ["x"]
    with pytest.raises(StorageError):
        open_event_store(tmp_path / "missing.db", create=False)


def test_in_memory_stores_are_private() -> None:
    with open_event_store(":memory:") as one, open_event_store(":memory:") as two:
        one.append("ns", "s", [new("x")], 0)
        assert two.count("ns") == 0


@pytest.mark.postgres
def test_postgres_scheme_aliases_use_psycopg(postgres_schema_url: str) -> None:
    alias = postgres_schema_url.replace("postgresql+psycopg://", "postgres://", 1)
    with open_event_store(alias) as store:
        assert store.url.startswith("postgresql+psycopg://")
        store.append("ns", "s", [new("x")], 0)
        assert store.count("ns") == 1
