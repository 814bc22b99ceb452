"""Snapshot sections read on first use read as the data they were packed from, and a lazy map
reads as the dict it stands for, whatever is read, written or removed first; a pending value
reads as the value changed at once."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.lazy import CHUNK_ITEMS, LazyMap, Pending, Section, keyed_of, pack, unpack
from projections.read_model import data_digest

scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
values = scalars | st.lists(scalars, max_size=8) | st.dictionaries(st.text(), scalars)
sizes = st.integers(0, 2 * CHUNK_ITEMS + 3)
"""Lengths of the long lists, on both sides of a chunk's size."""


@settings(max_examples=60, deadline=None)
@given(
    data=st.dictionaries(st.text(min_size=1, max_size=8), values, max_size=4),
    rows=sizes,
    long=sizes,
    value=scalars,
)
def test_packed_sections_read_as_the_data_and_hash_as_its_digest(
    data: dict[str, Any], rows: int, long: int, value: Any
) -> None:
    data = {**data, "rows": [[f"r{i}", i, value] for i in range(rows)], "long": [value] * long}
    digest, entries, pieces = pack(data, frozenset({"rows"}))
    assert digest == data_digest(data)  # the digest a model's snapshot data has
    sections, end = unpack(entries, memoryview(b"".join(pieces)), 0)
    assert end == sum(len(piece) for piece in pieces)
    with patch.object(Section, "chunk", side_effect=AssertionError("a section was parsed")):
        assert "rows" in sections and "missing" not in sections  # asking parses nothing
    assert {key: sections[key] for key in sections} == data
    lazy = keyed_of(sections, "rows", tuple)
    assert dict(lazy.items()) == {row[0]: tuple(row) for row in data["rows"]}


operations = st.lists(
    st.tuples(st.sampled_from(["get", "set", "del", "in", "iter", "values"]), st.integers(0, 600)),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(size=st.integers(0, 3 * CHUNK_ITEMS), ops=operations)
def test_a_lazy_map_reads_as_the_dict_it_stands_for(size: int, ops: list[tuple[str, int]]) -> None:
    keys = [f"k{i}" for i in range(size)]
    built: list[int] = []

    def load(number: int) -> list[str]:
        built.append(number)
        return [f"v{key}" for key in keys[number * CHUNK_ITEMS : (number + 1) * CHUNK_ITEMS]]

    lazy = LazyMap.stored(keys, load)
    plain = {key: f"v{key}" for key in keys}
    assert not built  # nothing is built before it is read
    for op, n in ops:
        key = f"k{n}"
        if op == "get":
            assert lazy.get(key) == plain.get(key)
        elif op == "set":
            lazy[key] = plain[key] = f"new{n}"
        elif op == "del" and key in plain:
            del lazy[key], plain[key]
        elif op == "in":
            assert (key in lazy) == (key in plain)
        elif op == "iter":
            assert list(lazy) == list(plain) and list(reversed(lazy)) == list(reversed(plain))
        elif op == "values":
            assert list(lazy.values()) == list(plain.values())
        assert len(lazy) == len(plain)
    assert len(built) == len(set(built))  # a chunk is built once at most
    assert dict(lazy.items()) == plain


def _add(table: dict[str, set[int]], key: str, item: int) -> None:
    table.setdefault(key, set()).add(item)


def _discard(table: dict[str, set[int]], key: str, item: int) -> None:
    table.get(key, set()).discard(item)
    if not table.get(key, True):
        del table[key]


@settings(max_examples=80, deadline=None)
@given(
    stored=st.dictionaries(st.sampled_from("abcd"), st.sets(st.integers(0, 5)), max_size=4),
    changes=st.lists(st.tuples(st.booleans(), st.sampled_from("abcde"), st.integers(0, 5))),
)
def test_a_pending_value_reads_as_the_value_changed_at_once(
    stored: dict[str, set[int]], changes: list[tuple[bool, str, int]]
) -> None:
    loads: list[bool] = []

    def load() -> dict[str, set[int]]:
        loads.append(True)
        return {key: set(items) for key, items in stored.items()}

    pending = Pending.stored(load)
    at_once = {key: set(items) for key, items in stored.items()}
    for add, key, item in changes:
        pending.change(_add if add else _discard, key, item)
        (_add if add else _discard)(at_once, key, item)
    assert not loads  # nothing is restored before it is read
    assert pending.value == at_once and list(pending.value) == list(at_once)  # order too
    assert loads == [True]
    pending.change(_add, "z", 9)  # once read, a change applies at once
    assert pending.value["z"] == {9} and loads == [True]
