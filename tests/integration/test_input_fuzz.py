"""Every public input, fuzzed: any value hypothesis can make — huge and negative integers,
floats, lone surrogates, bytes, nested containers — either gives a valid result or raises a
``StrataGateError``; never a ``TypeError``, ``OverflowError``, ``KeyError`` or the like. A call
that raises leaves the log as it was (the revision does not move)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stratagate import StrataGate, StrataGateError

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0, 1, -1, 2**63, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=4),
    st.sampled_from(["", " ", "render", "L3", "next", "2026-05-01", "evt_1", "\x00", "x" * 5000]),
    st.binary(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def known_ids(memory: StrataGate) -> st.SearchStrategy[Any]:
    """Real ids mixed in, so the fuzz reaches past 'unknown id'."""
    ids = [e.id for e in memory.list_events()] + [b.id for b in memory.list_blocks()]
    ids += [e.id for e in memory.list_elements()]
    return st.sampled_from(ids) | VALUES if ids else VALUES


CALLS: dict[str, Callable[[StrataGate, st.DataObject], Any]] = {}


def call(name: str) -> Callable[[Callable[[StrataGate, st.DataObject], Any]], Any]:
    def register(fn: Callable[[StrataGate, st.DataObject], Any]) -> Any:
        CALLS[name] = fn
        return fn

    return register


def draw(data: st.DataObject, strategy: st.SearchStrategy[Any] = VALUES) -> Any:
    return data.draw(strategy)


@call("append_turn")
def _append_turn(m: StrataGate, d: st.DataObject) -> Any:
    return m.append_turn(
        draw(d), draw(d), created_at=draw(d), thread_id=draw(d), receipt_id=draw(d),
        user_tool_calls=draw(d), defer_processing=True,
    )  # fmt: skip


@call("append_turns")
def _append_turns(m: StrataGate, d: st.DataObject) -> Any:
    return m.append_turns(draw(d, st.lists(VALUES, max_size=3)), defer_processing=True)


@call("search_events")
def _search_events(m: StrataGate, d: st.DataObject) -> Any:
    return m.search_events(
        draw(d), limit=draw(d), temporal_intent=draw(d), participants=draw(d),
        event_type=draw(d), happened_from=draw(d), happened_to=draw(d),
    )  # fmt: skip


@call("search_elements")
def _search_elements(m: StrataGate, d: st.DataObject) -> Any:
    return m.search_elements(draw(d), limit=draw(d), name=draw(d), type=draw(d))


@call("search_raw_memory")
def _search_raw(m: StrataGate, d: st.DataObject) -> Any:
    return m.search_raw_memory(draw(d), limit=draw(d), thread_id=draw(d))


@call("recall_context")
def _recall(m: StrataGate, d: st.DataObject) -> Any:
    return m.recall_context(
        draw(d), thread_id=draw(d), max_events=draw(d), max_elements=draw(d),
        token_budget=draw(d),
    )  # fmt: skip


@call("history")
def _history(m: StrataGate, d: st.DataObject) -> Any:
    return m.history(draw(d))


@call("state_at")
def _state_at(m: StrataGate, d: st.DataObject) -> Any:
    return m.state_at(draw(d)).stats(0)


@call("verify")
def _verify(m: StrataGate, d: st.DataObject) -> Any:
    return m.verify(anchor=draw(d))


@call("ids")
def _ids(m: StrataGate, d: st.DataObject) -> Any:
    ident = draw(d, known_ids(m))
    method = draw(d, st.sampled_from(
        ["get_event", "get_block", "expand_event", "expand_element", "event_weight",
         "pin_event", "forget_event", "restore_event", "archive_event", "undo_import",
         "has_ingestion_receipt", "list_blocks", "list_open_tail", "get_block_context"]
    ))  # fmt: skip
    return getattr(m, method)(ident)


@call("expand_block")
def _expand_block(m: StrataGate, d: st.DataObject) -> Any:
    return m.expand_block(draw(d, known_ids(m)), draw(d), source=draw(d))


@call("expand_element")
def _expand_element(m: StrataGate, d: st.DataObject) -> Any:
    return m.expand_element(draw(d, known_ids(m)), at=draw(d))


@call("add_event")
def _add_event(m: StrataGate, d: st.DataObject) -> Any:
    return m.add_event(draw(d))


@call("record_memory_use")
def _record_use(m: StrataGate, d: st.DataObject) -> Any:
    return m.record_memory_use(
        event_ids=draw(d), element_ids=draw(d), receipt_id=draw(d), audit=draw(d)
    )


@call("assess_retrieval")
def _assess(m: StrataGate, d: st.DataObject) -> Any:
    return m.assess_retrieval(draw(d), draw(d))


@call("import_external_memory")
def _import(m: StrataGate, d: st.DataObject) -> Any:
    return m.import_external_memory(draw(d), top_k=draw(d))


@pytest.fixture(scope="module")
def memory() -> Iterator[StrataGate]:
    with StrataGate.in_memory(
        summarizer="offline", extractor="offline", element_projector="offline", block_turn_size=2
    ) as mem:
        for user in ("We moved hosting to Render on Tuesday.", "Marta reviews the designs.") * 2:
            mem.append_turn(user, "Noted.")
        yield mem


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_input_is_a_result_or_a_typed_error(
    memory: StrataGate, name: str, data: st.DataObject
) -> None:
    revision = memory.revision
    try:
        CALLS[name](memory, data)
    except StrataGateError:
        assert memory.revision == revision, "a refused call changed the log"


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(database=VALUES, namespace=VALUES, read_only=VALUES)
@example(database="\ud800", namespace="ns", read_only=False)  # a lone surrogate: once a traceback
def test_open_takes_any_database_and_namespace(
    tmp_path: Path, database: Any, namespace: Any, read_only: Any
) -> None:
    if isinstance(database, str) and database and "://" not in database and database != ":memory:":
        database = str(tmp_path / "fuzz" / database.replace("/", "_").replace("\x00", "_"))
    with contextlib.suppress(StrataGateError):
        StrataGate.open(database, namespace, read_only=read_only).close()
