"""``stratagate serve`` with the MCP SDK's real client: over stdio (the server a subprocess) and
over streamable HTTP (a real server process on a free loopback port). The evidence-gate loop on
the bundled sample, typed errors, the namespace allow-list, the bearer token, the body limit and
a restart that resumes the same memory."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from stratagate.cli.demo import sample_turns
from stratagate.memory import StrataGate
from tests.support.cli import copy_db
from tests.support.mcp_client import (
    ENV,
    WORKTREE,
    HttpServer,
    append_sample,
    call,
    fail,
    running,
    serve_argv,
    stdio_client,
)

pytestmark = pytest.mark.slow

TOOL_NAMES = {
    "append_turn", "recall_context", "search_events", "search_elements", "search_raw_memory",
    "expand_event", "expand_element", "expand_block", "assess_retrieval", "record_memory_use",
    "pin_event", "forget_event", "history", "verify",
}  # fmt: skip
OFFLINE = {"summarizer": "offline", "extractor": "offline", "element_projector": "offline"}


async def gate_loop(client: Client) -> dict[str, Any]:
    """search → batch id → assess (partial) → raw search → assess (sufficient) → record use."""
    hits = await call(client, "search_events", query="pnpm lockfile")
    assert hits["batch_id"].startswith("batch_") and hits["hits"]
    card = hits["hits"][0]["id"]
    partial = await call(
        client, "assess_retrieval", batch_id=hits["batch_id"], verdict="partial",
        evidence_refs=[card, "evt_not_in_this_batch"], fit="the pnpm decision",
        missing="who asked for it", next_strategy="search_raw_memory",
    )  # fmt: skip
    assert partial["evidence_refs"] == [card] and partial["batch_id"] == hits["batch_id"]
    assert [r["reason"] for r in partial["rejected_evidence_refs"]] == ["not_in_batch"]
    expanded = await call(client, "expand_event", event_id=card)
    assert expanded["event"]["id"] == card and expanded["source_messages"]
    said = expanded["source_messages"][0]
    raw = await call(client, "search_raw_memory", query=said["content"][:300], limit=3)
    assert raw["batch_id"] != hits["batch_id"]
    [source] = [hit["id"] for hit in raw["hits"] if hit["id"] == said["id"]]
    final = await call(
        client, "assess_retrieval", batch_id=raw["batch_id"], verdict="sufficient",
        evidence_refs=[source], next_strategy="answer",
    )  # fmt: skip
    assert (final["verdict"], final["next_strategy"]) == ("sufficient", "answer")
    receipt = await call(
        client, "record_memory_use", receipt_id="answer-1", event_ids=[card],
        batch_id=raw["batch_id"], evidence_refs=[source],
    )  # fmt: skip
    assert receipt["reinforced_event_ids"] == [card]
    assert receipt["audit"]["batch_id"] == raw["batch_id"]
    again = await call(
        client, "record_memory_use", receipt_id="answer-1", event_ids=[card],
        batch_id=raw["batch_id"], evidence_refs=[source],
    )  # fmt: skip
    assert again == receipt  # the same receipt is a no-op
    recalled = await call(client, "recall_context", query="which package manager", max_events=2)
    assert recalled["batch_id"] and recalled["text"] and recalled["tokens"] <= 900
    assert (await call(client, "verify"))["ok"] is True
    return {"card": card, "batch": hits["batch_id"]}


async def typed_errors(client: Client, card: str) -> None:
    """Each failure is a tool error naming the typed error, never a bare 'error executing'."""
    unknown = await fail(client, "expand_event", event_id="evt_missing")
    assert unknown == "UnknownIdError: unknown event id 'evt_missing'"
    batch = await fail(
        client, "assess_retrieval", batch_id="batch_missing", verdict="partial",
        next_strategy="answer",
    )  # fmt: skip
    assert batch.startswith("UnknownIdError: unknown retrieval batch id")
    limit = await fail(client, "search_events", query="pnpm", limit=0)
    assert limit.startswith("InvalidInputError: search_events: limit: ")
    extra = await fail(client, "search_events", query="pnpm", colour="red")
    assert extra == "InvalidInputError: search_events: colour: Extra inputs are not permitted"
    verdict = await fail(
        client, "assess_retrieval", batch_id="b", verdict="maybe", next_strategy="answer"
    )
    assert verdict.startswith("InvalidInputError: assess_retrieval: verdict: ")
    ghost = await fail(client, "record_memory_use", receipt_id="r-ghost", event_ids=["evt_gone"])
    assert ghost == "UnknownIdError: unknown event id 'evt_gone'"
    reused = await fail(client, "record_memory_use", receipt_id="answer-1", event_ids=[])
    assert (
        reused
        == "ReceiptConflictError: receipt id 'answer-1' was already used for different memories"
    )
    refused = await fail(client, "search_events", query="pnpm", namespace="someone-else")
    assert refused.startswith("AccessDeniedError: namespace 'someone-else' is not served here")
    assert (await fail(client, "drop_tables")).startswith("UnknownIdError: no tool named")


def test_stdio_runs_the_gate_loop_on_the_sample_and_resumes_after_a_restart(
    tmp_path: Path,
) -> None:
    database = tmp_path / "memory.db"

    async def first_session() -> dict[str, Any]:
        async with stdio_client(
            database, "--namespaces", "default,team", "--models", "offline"
        ) as client:
            listed = (await client.list_tools()).tools
            assert {tool.name for tool in listed} == TOOL_NAMES
            for tool in listed:
                assert tool.description and tool.input_schema["type"] == "object"
                assert "namespace" in tool.input_schema["properties"]
                for name, spec in tool.input_schema["properties"].items():
                    assert spec.get("description"), (tool.name, name)
            appended = await append_sample(client)
            assert appended[-1]["turn"] == len(sample_turns())
            assert sum(len(a["extracted_event_ids"]) for a in appended) > 10
            loop = await gate_loop(client)
            await typed_errors(client, loop["card"])
            # another allowed namespace is another memory
            team = await call(client, "search_raw_memory", query="pnpm", namespace="team")
            assert team["hits"] == []
            await call(
                client, "append_turn", user="pnpm here too", assistant="ok", namespace="team"
            )
            pages = await call(client, "history", limit=5)
            assert len(pages["records"]) == 5 and pages["next_since"] is not None
            following = await call(client, "history", since=pages["next_since"], limit=5)
            assert following["records"][0]["position"] > pages["records"][-1]["position"]
            return {**loop, "revision_seen": following["records"][-1]["position"]}

    async def second_session(first: dict[str, Any]) -> None:
        async with stdio_client(
            database, "--namespaces", "default,team", "--models", "offline"
        ) as client:
            hits = await call(client, "search_events", query="pnpm lockfile")
            assert hits["hits"][0]["id"] == first["card"]
            turn = sample_turns()[0]
            duplicate = await call(
                client, "append_turn", user=turn.user, assistant=turn.assistant,
                thread_id=turn.thread_id, receipt_id=turn.receipt_id,
            )  # fmt: skip
            assert duplicate["duplicate"] is True
            batch = await call(
                client, "assess_retrieval", batch_id=first["batch"], verdict="sufficient",
                evidence_refs=[first["card"]], next_strategy="answer",
            )  # fmt: skip
            assert batch["evidence_refs"] == [first["card"]]  # a batch of the first session
            team = await call(client, "search_raw_memory", query="pnpm", namespace="team")
            assert team["hits"][0]["message"]["content"] == "pnpm here too"
            assert (await call(client, "verify"))["ok"] is True

    first = anyio.run(first_session)
    anyio.run(second_session, first)
    with StrataGate.open(database, "default") as memory:
        assert memory.verify().ok
        assert [r.id for r in memory.list_usage_receipts()] == ["answer-1"]


@pytest.fixture(scope="module")
def sample_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample ingested (offline models) into a SQLite file, closed."""
    database = tmp_path_factory.mktemp("sample") / "sample.db"
    turns = [
        {"user": t.user, "assistant": t.assistant, "created_at": t.created_at,
         "thread_id": t.thread_id, "receipt_id": t.receipt_id}
        for t in sample_turns()
    ]  # fmt: skip
    with StrataGate.open(database, "default", **OFFLINE) as memory:
        memory.append_turns(turns)
    return database


@pytest.fixture
def database(sample_database: Path, tmp_path: Path) -> Path:
    """A copy of the sample database for one test (with its write-ahead log and snapshots)."""
    return copy_db(sample_database, tmp_path / sample_database.name)


@pytest.fixture
def server(database: Path) -> Iterator[HttpServer]:
    with running(HttpServer(database)) as started:
        yield started


def test_http_runs_the_gate_loop_with_typed_errors(server: HttpServer) -> None:
    async def session() -> None:
        async with server.client() as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOL_NAMES
            loop = await gate_loop(client)
            await typed_errors(client, loop["card"])
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            assert resources == {"stratagate://default/context", "stratagate://default/elements"}
            cards = await client.read_resource("stratagate://default/elements")
            assert "Priya" in cards.contents[0].text  # type: ignore[union-attr]
            read = await client.read_resource("stratagate://default/context")
            context = orjson.loads(read.contents[0].text)  # type: ignore[union-attr]
            threads = [entry["thread_id"] for entry in context]
            assert list(dict.fromkeys(threads)) == ["field-notes", "hiring"]  # every thread
            assert all(entry["content"] for entry in context)

    anyio.run(session)


def test_http_refuses_a_missing_or_wrong_token_and_an_oversized_body(server: HttpServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for headers in ({}, server.headers("wrong-token"), {"Authorization": "Basic dGVzdA=="}):
        refused = httpx2.post(server.url, json=ping, headers=headers)
        assert refused.status_code == 401, headers
        assert refused.headers["www-authenticate"].startswith("Bearer")
    big = httpx2.post(server.url, content=b"x" * 1_048_577, headers=server.headers())
    assert big.status_code == 413

    async def wrong_token_client() -> None:
        async with server.client("wrong-token") as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as raised:  # the client gives up on the 401
        anyio.run(wrong_token_client)
    assert raised.group_contains(MCPError, match="error response")


def test_http_restart_resumes_the_same_memory(database: Path) -> None:
    server = HttpServer(database)

    async def first() -> dict[str, Any]:
        async with server.client() as client:
            loop = await gate_loop(client)
            await call(client, "pin_event", event_id=loop["card"])
            await call(client, "append_turn", user="One more: we ship Friday.", assistant="Noted.",
                       receipt_id="after-sample", thread_id="field-notes")  # fmt: skip
            return loop

    async def second(loop: dict[str, Any]) -> None:
        async with server.client() as client:
            expanded = await call(client, "expand_event", event_id=loop["card"])
            assert expanded["event"]["weight"]["pinned"] is True
            again = await call(client, "append_turn", user="One more: we ship Friday.",
                               assistant="Noted.", receipt_id="after-sample",
                               thread_id="field-notes")  # fmt: skip
            assert again["duplicate"] is True
            raw = await call(client, "search_raw_memory", query="we ship Friday")
            assert "Friday" in raw["hits"][0]["message"]["content"]
            assert (await call(client, "verify"))["ok"] is True

    with running(server):
        loop = anyio.run(first)
        assert server.stop() == 0  # SIGTERM closes the memory (snapshot, lease) first
    with running(server):
        anyio.run(second, loop)


def test_a_bind_beyond_loopback_needs_a_token(database: Path) -> None:
    done = subprocess.run(
        [*serve_argv(database, "--transport", "http", "--host", "0.0.0.0", "--port", "0")],
        capture_output=True, text=True, env={**ENV, "PATH": ""}, cwd=WORKTREE, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "reachable from other machines" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.ray
def test_stdio_serves_the_ray_runtime(tmp_path: Path) -> None:
    """The roles run as Ray actors; Ray's processes never write on the client's pipe."""
    database = tmp_path / "memory.db"

    async def session() -> None:
        async with stdio_client(
            database, "--runtime", "ray", "--block-turn-size", "2", "--models", "offline"
        ) as client:
            for turn in sample_turns()[:6]:
                await call(client, "append_turn", user=turn.user, assistant=turn.assistant,
                           created_at=turn.created_at, receipt_id=turn.receipt_id)  # fmt: skip
            raw = await call(client, "search_raw_memory", query="Fieldnotes")
            assert raw["batch_id"] and raw["hits"]
            assert (await call(client, "verify"))["ok"] is True

    anyio.run(session)
    # the server's Ray actors may still be winding down: an inline handle writes beside them
    with StrataGate.open(database, "default") as memory:
        assert memory.turn == 6 and memory.verify().ok


def test_http_answers_bad_resources_and_odd_ids_with_json_rpc_errors(server: HttpServer) -> None:
    """Issue 21, finding 8: ``resources/read`` of an unknown resource or namespace was error
    code 0 (and a traceback in the server's log); an object as the JSON-RPC id got 202 and no
    answer at all."""

    async def session() -> None:
        async with server.client() as client:
            for uri in ("stratagate://default/nope", "stratagate://mallory/context"):
                with pytest.raises(MCPError) as raised:
                    await client.read_resource(uri)
                assert raised.value.code == -32602, (uri, raised.value.code)
                assert "Error" in raised.value.message

    anyio.run(session)
    for odd in ({"a": 1}, [1], 1.5, True):
        body = {"jsonrpc": "2.0", "id": odd, "method": "ping"}
        answer = httpx2.post(
            server.url, json=body,
            headers={**server.headers(), "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
        assert answer.status_code == 400, (odd, answer.status_code, answer.text)
        error = answer.json()
        assert error["id"] is None and error["error"]["code"] == -32600, error


def cli(database: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI as its own process (beside the servers)."""
    command = [*serve_argv(database)[:3], *argv, "--database", str(database)]
    return subprocess.run(command, env={**ENV}, cwd=WORKTREE, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


def test_two_stdio_servers_and_the_cli_share_one_namespace(tmp_path: Path) -> None:
    """Two agent windows each start a server on one memory: both append, each finds the
    other's turn; `stratagate search` and `stratagate ingest` work while they run; a
    `--read-only` server reads beside them and refuses writes with a typed error."""
    database = tmp_path / "memory.db"
    turns = tmp_path / "turns.jsonl"
    turns.write_bytes(orjson.dumps({"user": "the CLI chose ruff", "assistant": "ok"}) + b"\n")

    async def windows() -> None:
        async with (
            stdio_client(database, "--block-turn-size", "2") as one,
            stdio_client(database, "--block-turn-size", "2") as two,
        ):
            await call(one, "append_turn", user="window one prefers pnpm", assistant="ok")
            await call(two, "append_turn", user="window two prefers yarn", assistant="ok")
            found = await call(one, "search_raw_memory", query="yarn")
            assert "window two prefers yarn" in found["hits"][0]["message"]["content"]
            found = await call(two, "search_raw_memory", query="pnpm")
            assert "window one prefers pnpm" in found["hits"][0]["message"]["content"]
            searched = cli(database, "search", "pnpm", "--kind", "raw")
            assert searched.returncode == 0 and "window one prefers pnpm" in searched.stdout
            ingested = cli(database, "ingest", str(turns))
            assert ingested.returncode == 0, ingested.stderr
            found = await call(two, "search_raw_memory", query="ruff")
            assert "the CLI chose ruff" in found["hits"][0]["message"]["content"]
            async with stdio_client(database, "--read-only") as reader:
                seen = await call(reader, "search_raw_memory", query="yarn")
                assert "window two prefers yarn" in seen["hits"][0]["message"]["content"]
                refused = await fail(reader, "append_turn", user="no", assistant="no")
                assert refused.startswith("ReadOnlyError"), refused
            for client in (one, two):
                assert (await call(client, "verify"))["ok"] is True

    anyio.run(windows)
    with StrataGate.open(database, "default", read_only=True) as memory:
        types = [r.type for r in memory.history()]
        assert types.count("TurnAppended") == 3 and memory.verify().ok
