"""Issue 21, finding 6: every public method validates its arguments once, at the edge. Any
value of any type — wrong types, None or scalars where lists go, lone surrogates, NUL, huge
ids, 5,000-deep nesting — gives a result or a ``StrataGateError`` (an ``InvalidInputError``
naming the argument for a bad input), never a raw ``TypeError``/``RecursionError``; a refused
call leaves the revision where it was. The method table is ``scripts/bad_inputs.py``'s (the
campaign that counted 99 raw errors in 1,500 calls on the issue's main)."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate import InvalidInputError, StrataGate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bad_inputs import HOSTILE, calls, outcome


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StrataGate, dict[str, str]]]:
    path = tmp_path_factory.mktemp("edges") / "edges.db"
    memory = StrataGate.open(path, "edges", block_turn_size=1, summarizer="offline")
    memory.append_turn("We decided to move hosting to Render.", "Noted.", thread_id="t")
    block = memory.list_blocks()[0].id
    card = memory.add_event(
        {"title": "Render", "summary": "hosting", "source_block_id": block,
         "source_message_ids": []}
    )  # fmt: skip
    try:
        yield memory, {"event": card.id, "block": block, "element": "elem_none"}
    finally:
        memory.close()


ANY = st.recursive(
    st.one_of(
        st.sampled_from([v for k, v in HOSTILE.items() if not k.startswith("deep")]),
        st.none(), st.booleans(), st.integers(), st.floats(),
        st.text(max_size=12), st.binary(max_size=8),
        st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=5,
)  # fmt: skip
NAMES = sorted(calls({"event": "e", "block": "b", "element": "x"}))


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, 20), value=ANY)
def test_any_value_for_any_argument_is_a_result_or_a_typed_error(
    memory: tuple[StrataGate, dict[str, str]], name: str, which: int, value: Any
) -> None:
    mem, ids = memory
    call, valid = calls(ids)[name]
    argument = list(valid)[which % len(valid)]
    assert outcome(mem, call, {**valid, argument: value}) in ("ok", "typed"), (name, argument)


def test_the_whole_hostile_table_has_no_raw_error(
    memory: tuple[StrataGate, dict[str, str]],
) -> None:
    mem, ids = memory
    raw = [
        f"{name}({argument}={label}): {result}"
        for name, (call, valid) in calls(ids).items()
        for argument in valid
        for label, value in HOSTILE.items()
        if (result := outcome(mem, call, {**valid, argument: value})) not in ("ok", "typed")
    ]
    assert raw == []


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda m, v: m.append_turn("u", "a", wait=v), "wait"),
        (lambda m, v: m.append_turn("u", "a", defer_processing=v), "defer_processing"),
        (lambda m, v: m.append_turns([{"user": "u", "assistant": "a"}], wait=v), "wait"),
        (lambda m, v: m.resume_pending_work(retry_skipped=v), "retry_skipped"),
        (lambda m, v: m.state_at(1, search=v), "search"),
    ],
)
def test_switches_take_booleans_only(
    memory: tuple[StrataGate, dict[str, str]], call: Any, argument: str
) -> None:
    mem, _ = memory
    before = mem.revision
    for value in (1, 0, "yes", "", None, [True]):
        with pytest.raises(InvalidInputError, match=argument):
            call(mem, value)
    assert mem.revision == before


def test_pinned_and_drain_timeout_are_not_coerced(
    memory: tuple[StrataGate, dict[str, str]],
) -> None:
    mem, ids = memory
    before = mem.revision
    for value in (1, "false", None):
        with pytest.raises(InvalidInputError, match="pinned"):
            mem.pin_event(ids["event"], value)  # type: ignore[arg-type]
    for timeout in ("x", -1, math.nan, True, [1]):
        with pytest.raises(InvalidInputError, match="timeout"):
            mem.drain(timeout)  # type: ignore[arg-type]
    assert mem.revision == before


@pytest.mark.parametrize(
    "database", ["sqlite", "memory", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_ids_have_a_length_limit_and_no_nul_on_every_backend(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    if database == "postgres":  # a NUL was a StorageError there, stored on SQLite
        mem = StrataGate.open(request.getfixturevalue("postgres_schema_url"), "ids")
    elif database == "sqlite":
        mem = StrataGate.open(tmp_path / "ids.db", "ids")
    else:
        mem = StrataGate.in_memory("ids")
    with mem:
        for bad in ("t\x00x", "x" * 10_000):
            for call, argument in (
                (lambda v: mem.append_turn("u", "a", thread_id=v), "thread_id"),
                (lambda v: mem.append_turn("u", "a", receipt_id=v), "receipt_id"),
                (lambda v: mem.record_memory_use(event_ids=[], receipt_id=v), "receipt_id"),
            ):
                with pytest.raises(InvalidInputError, match=argument):
                    call(bad)
        assert mem.revision == 0
        mem.append_turn("u", "a", thread_id="x" * 256, receipt_id="r" * 256)  # the limit itself
