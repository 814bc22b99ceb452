"""``StrataGateStore``, LangGraph's ``BaseStore`` on a namespace: LangGraph's own store test
expectations (ported from langgraph's tests/test_store.py, lexical search in place of their
character embeddings), InMemoryStore as an oracle for random operations, provenance in the
log, persistence across opens, and a real compiled graph that reads and writes it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from stratagate import StrataGate
from stratagate.integrations.langgraph.store import SOURCE, StrataGateStore


@pytest.fixture
def memory() -> Iterator[StrataGate]:
    with StrataGate.in_memory() as memory:
        yield memory


@pytest.fixture
def store(memory: StrataGate) -> StrataGateStore:
    return StrataGateStore(memory)


def put_all(store: BaseStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})


# -- LangGraph's expectations (langgraph libs/checkpoint/tests/test_store.py) ---------------


def test_list_namespaces_basic(store: StrataGateStore) -> None:
    put_all(
        store,
        [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
         ("a", "c", "f"), ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"),
         ("admin", "users", "789")],
    )  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(suffix=("f",))) == [
        ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [
        ("a", "b", "f"), ("a", "c", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"), ("a", "b", "d", "e"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"), ("a", "b", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [
        ("a", "b", "f"), ("a", "c", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [
        ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_with_wildcards(store: StrataGateStore) -> None:
    put_all(
        store,
        [("users", "123"), ("users", "456"), ("users", "789", "settings"),
         ("admin", "users", "789"), ("guests", "123"), ("guests", "456", "preferences")],
    )  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
        ("users", "123"), ("users", "456"), ("users", "789", "settings"),
    ]  # fmt: skip
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination_depth_and_emptiness(store: StrataGateStore) -> None:
    assert store.list_namespaces() == []
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": f"value_{i:02d}"})
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)
    ]
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=15) == [
        ("namespace", f"sub_{i:02d}") for i in range(15, 20)
    ]
    put_all(store, [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "g"), ("h", "i", "j", "k")])
    assert sorted(store.list_namespaces(max_depth=2)) == [
        ("a", "b"), ("a", "g"), ("h", "i"), ("namespace", "sub_00"), *[
            ("namespace", f"sub_{i:02d}") for i in range(1, 20)
        ],
    ]  # fmt: skip


def test_cannot_put_an_invalid_namespace(store: StrataGateStore) -> None:
    asyncio.run(invalid_namespaces(store))


async def invalid_namespaces(store: StrataGateStore) -> None:
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            await store.aput(namespace, "foo", doc)
    await store.aput(("foo", "langgraph", "foo"), "bar", doc)
    assert (await store.aget(("foo", "langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
    assert (await store.asearch(("foo", "langgraph", "foo")))[0].value == doc
    await store.adelete(("foo", "langgraph", "foo"), "bar")
    assert await store.aget(("foo", "langgraph", "foo"), "bar") is None
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public put: allowed
    assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


def test_search_ranks_by_the_query(store: StrataGateStore) -> None:
    docs = [
        ("doc1", {"text": "short text"}),
        ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}),
        ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "text in content field"}),
        ("doc6", {"body": "text in body field"}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    found = [r.key for r in store.search(("test",), query="longer document")]
    assert found[:2] == ["doc2", "doc3"] and sorted(found) == sorted(k for k, _ in docs)


def test_an_update_changes_what_the_query_finds(store: StrataGateStore) -> None:
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    initial = store.search(("test",), query="Zany Xerxes")
    assert initial[0].key == "doc1" and initial[0].score
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next(r.score for r in store.search(("test",), query="Zany Xerxes") if r.key == "doc1")
    assert after is None  # nothing of the old text is searched any more
    new = store.search(("test",), query="new text about dogs")
    assert new[0].key == "doc1" and new[0].score
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    ranked = store.search(("test",), query="new text about dogs", limit=3)
    assert not any(r.key == "doc4" for r in ranked)  # unindexed: never ranked
    assert [r.score for r in store.search(("test",), query="new dogs") if r.key == "doc4"] == [None]
    assert store.get(("test",), "doc4").value == {"text": "new text about dogs"}  # type: ignore[union-attr]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_search_with_filters(store: StrataGateStore, asynchronous: bool) -> None:
    def search(*args: Any, **kwargs: Any) -> Any:
        if asynchronous:
            return asyncio.run(store.asearch(*args, **kwargs))
        return store.search(*args, **kwargs)

    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    results = search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results] == ["doc1", "doc2"]
    results = search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results] == ["doc2", "doc1"]
    results = search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert sorted(r.key for r in results) == ["doc1", "doc3", "doc4"]
    results = search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [r.key for r in results] == ["doc3"]
    assert [r.key for r in search(("test",), filter={"score": {"$lte": 3.0}})] == ["doc2"]
    assert [r.key for r in search(("test",), filter={"color": {"$ne": "red"}})] == [
        "doc4", "doc3",
    ]  # fmt: skip


def test_search_pagination_and_edge_cases(store: StrataGateStore) -> None:
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2 and {r.key for r in page1}.isdisjoint(r.key for r in page2)
    assert len(store.search(("test",), query="test", limit=10)) == 5
    for query in ("", None, "test " * 100, "test!@#$%^&*()", "x" * 5000):
        assert len(store.search(("test",), query=query)) == 5


def test_a_batch_reads_first_and_the_last_write_wins(
    memory: StrataGate, store: StrataGateStore
) -> None:
    store.put(("a",), "k", {"v": 0})
    imports = len([h for h in memory.history() if h.type == "ExternalImportRecorded"])
    results = store.batch(
        [
            PutOp(("a",), "k", {"v": 1}),
            GetOp(("a",), "k"),
            PutOp(("a",), "k", {"v": 2}),
            PutOp(("b",), "k", {"v": 3}),
            SearchOp(("a",)),
        ]
    )
    assert results[1].value == {"v": 0}  # type: ignore[union-attr]
    assert [item.value for item in results[4]] == [{"v": 0}]  # type: ignore[union-attr]
    assert store.get(("a",), "k").value == {"v": 2}  # type: ignore[union-attr]
    assert store.get(("b",), "k").value == {"v": 3}  # type: ignore[union-attr]
    after = [h for h in memory.history() if h.type == "ExternalImportRecorded"]
    assert len(after) == imports + 1  # the batch's writes are one import


# -- provenance, persistence and the log ----------------------------------------------------


def test_items_are_documents_with_provenance(memory: StrataGate, store: StrataGateStore) -> None:
    store.put(("users", "alice"), "prefs", {"text": "prefers pnpm", "tags": ["tools"]})
    first = store.event_id(("users", "alice"), "prefs")
    store.put(("users", "alice"), "prefs", {"text": "switched to yarn"})
    current = store.event_id(("users", "alice"), "prefs")
    assert first and current and first != current
    old = memory.get_event(first)
    assert old.status == "superseded" and old.superseded_by == current
    expanded = memory.expand_event(current)
    [message] = expanded.source_messages
    [trace] = message.tool_calls or []
    assert trace.result["value"] == {"text": "switched to yarn"}
    assert trace.result["namespace"] == ["users", "alice"] and trace.result["key"] == "prefs"
    imports = [h for h in memory.history() if h.type == "ExternalImportRecorded"]
    assert {h.data["source"] for h in imports} == {SOURCE}
    store.delete(("users", "alice"), "prefs")
    assert memory.get_event(current).status == "forgotten"
    memory.restore_event(current)  # governance outside the store is seen by it
    assert store.get(("users", "alice"), "prefs").value == {"text": "switched to yarn"}  # type: ignore[union-attr]
    assert memory.verify().ok


def test_items_persist_across_opens(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    with StrataGate.open(database, "agent") as memory:
        store = StrataGateStore(memory)
        store.put(("memories", "u1"), "a", {"text": "likes hiking"})
        store.put(("memories", "u1"), "a", {"text": "likes hiking and climbing"})
        store.put(("memories", "u2"), "b", {"text": "likes chess"})
        created = store.get(("memories", "u1"), "a").created_at  # type: ignore[union-attr]
    with StrataGate.open(database, "agent") as memory:
        store = StrataGateStore(memory)
        item = store.get(("memories", "u1"), "a")
        assert item is not None and item.value == {"text": "likes hiking and climbing"}
        assert item.created_at == created and item.updated_at > created
        assert store.list_namespaces(prefix=("memories",)) == [
            ("memories", "u1"),
            ("memories", "u2"),
        ]
        assert [r.key for r in store.search(("memories",), query="climbing")][:1] == ["a"]
        assert memory.verify().ok


# -- InMemoryStore as the oracle ------------------------------------------------------------

LABELS = st.sampled_from(["a", "b", "c"])
NAMESPACES = st.lists(LABELS, min_size=1, max_size=3).map(tuple)
VALUES = st.fixed_dictionaries({"n": st.integers(0, 3), "color": st.sampled_from(["red", "blue"])})
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), NAMESPACES, st.sampled_from(["x", "y"]), VALUES),
        st.tuples(st.just("delete"), NAMESPACES, st.sampled_from(["x", "y"]), st.none()),
    ),
    max_size=12,
)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, probe=NAMESPACES, wanted=st.sampled_from(["red", "blue"]))
def test_random_operations_answer_like_the_in_memory_store(
    ops: list[tuple[Any, ...]], probe: tuple[str, ...], wanted: str
) -> None:
    oracle = InMemoryStore()
    with StrataGate.in_memory() as memory:
        store = StrataGateStore(memory)
        for kind, namespace, key, value in ops:
            for target in (oracle, store):
                if kind == "put":
                    target.put(namespace, key, value)
                else:
                    target.delete(namespace, key)
        # InMemoryStore lists a namespace that was only read, or emptied, as well: compare
        # with the namespaces that hold items.
        held = {hit.namespace for hit in oracle.search((), limit=1000)}
        assert store.list_namespaces() == sorted(held)
        assert store.list_namespaces(prefix=probe[:1], max_depth=2) == sorted(
            {ns[:2] for ns in held if ns[:1] == probe[:1]}
        )
        for key in ("x", "y"):
            ours, theirs = store.get(probe, key), oracle.get(probe, key)
            assert (ours and ours.value) == (theirs and theirs.value)

        def found(target: BaseStore, **kwargs: Any) -> list[tuple[Any, ...]]:
            hits = target.search(probe[:1], limit=100, **kwargs)
            return sorted((hit.namespace, hit.key, hit.value["n"]) for hit in hits)

        assert found(store) == found(oracle)
        assert found(store, filter={"color": wanted}) == found(oracle, filter={"color": wanted})
        assert found(store, filter={"n": {"$gte": 2}}) == found(oracle, filter={"n": {"$gte": 2}})


# -- a real graph ---------------------------------------------------------------------------


def test_a_compiled_graph_remembers_through_the_store(tmp_path: Path) -> None:
    """Two nodes: one looks up what the user says in the store, one then writes it there."""

    def remember(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        text = str(state["messages"][-2].content)  # the user's, before the answer
        count = len(store.search(("notes", "lin")))
        store.put(("notes", "lin"), f"note-{count}", {"text": text})
        return {}

    def recall(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        question = str(state["messages"][-1].content)
        hits = store.search(("notes", "lin"), query=question, limit=1)
        answer = hits[0].value["text"] if hits and hits[0].score else "nothing yet"
        return {"messages": [("ai", f"From the store: {answer}")]}

    database = tmp_path / "graph.db"
    with StrataGate.open(database, "agent") as memory:
        builder = StateGraph(MessagesState)
        builder.add_node("remember", remember)
        builder.add_node("recall", recall)
        builder.add_edge(START, "recall")
        builder.add_edge("recall", "remember")
        builder.add_edge("remember", END)
        graph = builder.compile(checkpointer=InMemorySaver(), store=StrataGateStore(memory))
        config = {"configurable": {"thread_id": "lin"}}
        graph.invoke({"messages": [("user", "We ship the beta on March 13.")]}, config)
        graph.invoke({"messages": [("user", "Priya designs the sync screen.")]}, config)
        out = graph.invoke({"messages": [("user", "When does the beta ship?")]}, config)
        assert out["messages"][-1].content == "From the store: We ship the beta on March 13."
        assert memory.verify().ok
    with StrataGate.open(database, "agent", read_only=True) as audit:
        sources = {h.data["source"] for h in audit.history() if h.type == "ExternalImportRecorded"}
        assert sources == {SOURCE} and len(audit.list_events()) == 3
