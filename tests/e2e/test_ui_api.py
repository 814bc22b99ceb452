"""``stratagate ui``'s JSON API, asked over HTTP of a real server process on a free loopback port:
every route, paging, typed errors, GET only, redaction of planted secrets, the token and the
Host/Origin checks, reads that follow another process's appends, and nothing ever appended."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratagate.memory import StrataGate
from tests.support.ui_server import (
    OFFLINE,
    SECRET_KEY,
    SECRET_TOKEN,
    WORKTREE,
    UiServer,
    build_memory,
    running,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("ui") / "memory.db"
    return path, build_memory(path)


@pytest.fixture(scope="module")
def server(database: tuple[Path, dict[str, Any]]) -> Iterator[UiServer]:
    with running(UiServer(database[0])) as started:
        yield started


def revision(path: Path) -> int:
    with StrataGate.open(path, "default", read_only=True) as memory:
        return memory.revision


def test_namespaces_report_health(server: UiServer) -> None:
    listed = server.get("/namespaces")
    [ns] = listed["items"]
    assert listed["total"] == 1 and listed["next"] is None
    assert ns["namespace"] == "default" and ns["turns"] == 103 and ns["blocks"] > 10
    assert ns["events"] > 20 and ns["elements"] > 5 and ns["receipts"] == 1
    assert ns["jobs"]["failed"] == 0 and ns["head"] == ns["revision"] > 100
    one = server.get("/namespaces/default")
    assert {t["thread_id"] for t in one["thread_list"]} == {"field-notes", "hiring", "ops"}


def test_blocks_carry_six_views_and_their_decay_level(server: UiServer) -> None:
    first = server.get("/namespaces/default/blocks", limit=3)
    assert len(first["items"]) == 3 and first["next"] == 3 and first["total"] > 10
    block = first["items"][0]
    assert [v["level"] for v in block["views"]] == [0, 1, 2, 3, 4, 5]
    assert block["views"][0]["content"].startswith(block["l0_title"])
    assert 0 <= block["pointer_current_level"] <= 5 and block["message_ids"]
    assert "l5_raw" not in block and "l4_readable" not in block  # sent once, as views
    levels = {
        b["pointer_current_level"]
        for b in server.get("/namespaces/default/blocks", limit=500)["items"]
    }
    assert len(levels) > 1  # older blocks decayed, newer ones did not
    second = server.get("/namespaces/default/blocks", offset=3, limit=3)
    assert not {b["id"] for b in first["items"]} & {b["id"] for b in second["items"]}
    ops = server.get("/namespaces/default/blocks", thread="ops")["items"]
    assert ops and {b["thread_id"] for b in ops} == {"ops"}


def test_events_list_filter_and_search_without_logging(
    server: UiServer, database: tuple[Path, dict[str, Any]]
) -> None:
    path = database[0]
    listed = server.get("/namespaces/default/events", limit=500)
    cards = listed["items"]
    assert listed["total"] == len(cards) and listed["next"] is None
    card = next(c for c in cards if c["temporal"])
    assert {"mentioned_at", "happened_start", "happened_end", "status"} <= set(card["temporal"])
    assert card["source_block_id"] and card["source_message_ids"] and "memory_weight" in card
    superseded = server.get("/namespaces/default/events", status="superseded")["items"]
    assert superseded and all(
        c["status"] == "superseded" and c["superseded_by"] for c in superseded
    )
    before = revision(path)
    hits = server.get("/namespaces/default/events", q="pnpm")["items"]
    assert any("pnpm" in h["title"].lower() for h in hits) and all("score" in h for h in hits)
    server.get("/namespaces/default/elements", q="pnpm")
    server.get("/namespaces/default/sources", q="pnpm")
    assert revision(path) == before  # the UI's searches logged no retrieval batch


def test_elements_as_of_a_time_and_the_graph(server: UiServer) -> None:
    elements = server.get("/namespaces/default/elements", limit=500)["items"]
    assert elements and all("fact_count" in e and "facts" not in e for e in elements)
    changed = max(elements, key=lambda e: e["superseded_facts"])
    assert changed["superseded_facts"] > 0
    card = server.get(f"/namespaces/default/elements/{changed['id']}")
    assert any(f["status"] == "superseded" and f["valid_to"] for f in card["facts"])
    earliest = min(f["valid_from"] for f in card["facts"] if f["valid_from"])
    then = server.get(f"/namespaces/default/elements/{changed['id']}", at="2000-01-01T00:00:00Z")
    assert len(then["facts"]) < len(card["facts"]) and earliest > "2000"
    hits = server.get("/namespaces/default/elements", q="pnpm")["items"]
    assert hits and all(h["fact"]["key"] for h in hits)
    graph = server.get("/namespaces/default/graph", limit=500)
    ids = {n["id"] for n in graph["nodes"]}
    assert len(ids) == len(elements)
    assert graph["edges"] and all(e["source"] in ids for e in graph["edges"])
    assert any(e["target_id"] in ids for e in graph["edges"])


def test_sources_of_every_kind_of_memory(
    server: UiServer, database: tuple[Path, dict[str, Any]]
) -> None:
    event_id = database[1]["event_id"]
    event = next(
        e
        for e in server.get("/namespaces/default/events", limit=500)["items"]
        if e["id"] == event_id
    )
    element = server.get("/namespaces/default/elements", limit=1)["items"][0]
    block = server.get("/namespaces/default/blocks", limit=1)["items"][0]
    fact = server.get(f"/namespaces/default/elements/{element['id']}")["facts"][0]
    message = block["message_ids"][0]
    ids = ",".join([event_id, element["id"], fact["id"], block["id"], message])
    found = {i["id"]: i for i in server.get("/namespaces/default/sources", ids=ids)["items"]}
    assert [m["id"] for m in found[event_id]["messages"]] == event["source_message_ids"]
    assert found[event_id]["kind"] == "event" and found[element["id"]]["kind"] == "element"
    assert found[element["id"]]["messages"] and found[fact["id"]]["messages"]
    assert [m["id"] for m in found[block["id"]]["messages"]] == block["message_ids"]
    assert [m["id"] for m in found[message]["messages"]] == [message]
    raw = server.get("/namespaces/default/sources", q="pnpm", limit=3)["items"]
    assert raw and all(
        "pnpm" in (h["message"]["content"] + "".join(m["content"] for m in h["nearby"])).lower()
        for h in raw
    )


def test_receipt_chain_from_answer_to_source_messages(
    server: UiServer, database: tuple[Path, dict[str, Any]]
) -> None:
    ids = database[1]
    [listed] = server.get("/namespaces/default/receipts")["items"]
    assert listed["id"] == "answer-1" and listed["verdict"] == "sufficient"
    assert listed["batch_id"] == ids["batch_id"]
    chain = server.get("/namespaces/default/receipts/answer-1")
    assert chain["batch"]["query"] == "pnpm lockfile" and ids["event_id"] in chain["batch"]["refs"]
    assert [a["assessment"]["verdict"] for a in chain["assessments"]] == ["sufficient"]
    [used] = chain["memories"]
    assert used["id"] == ids["event_id"] and used["reinforced"] and used["messages"]


def test_log_pages_cover_the_log_once(
    server: UiServer, database: tuple[Path, dict[str, Any]]
) -> None:
    seen: list[int] = []
    after: int | None = 0
    while after is not None:
        page = server.get("/namespaces/default/log", after=after, limit=97)
        seen += [r["position"] for r in page["items"]]
        after = page["next"]
    with StrataGate.open(database[0], "default", read_only=True) as memory:
        assert seen == [r.position for r in memory.history()]
    first = server.get("/namespaces/default/log", limit=2)["items"]
    assert first[0]["type"] == "SettingsChanged" and "data" in first[0]


def test_verify_and_state_at_a_past_position(server: UiServer) -> None:
    report = server.get("/namespaces/default/verify")
    assert report["ok"] and report["chain_ok"] and report["replay_ok"] and report["current"]
    assert server.get("/namespaces")["items"][0]["last_verify"]["ok"]
    now = server.get("/namespaces/default/state")
    log = server.get("/namespaces/default/log", limit=500)["items"]
    [_, second, *_] = [r["position"] for r in log if r["type"] == "ExtractionSucceeded"]
    sealed = [r["position"] for r in log if r["type"] == "BlockSealed"]
    past = server.get("/namespaces/default/state", at=second, kind="events", limit=500)
    assert past["position"] == second and 0 < past["stats"]["events"] < now["stats"]["events"]
    assert len(past["items"]) == past["stats"]["events"]
    newest = server.get("/namespaces/default/state", at=second, order="newest", limit=1)
    assert newest["items"][0]["id"] == past["items"][-1]["id"]
    blocks = server.get("/namespaces/default/state", at=sealed[2], kind="blocks")
    assert blocks["stats"]["blocks"] == blocks["total"] == 3 < now["stats"]["blocks"]
    earlier = server.get("/namespaces/default/state", at=second - 1)  # a fold from the start
    assert earlier["stats"]["events"] < past["stats"]["events"]
    assert server.get("/namespaces/default/state", at=0)["stats"]["turns"] == 0


@pytest.mark.parametrize(
    ("path", "status", "kind"),
    [
        ("/api/v1/namespaces/nope/events", 404, "UnknownIdError"),
        ("/api/v1/namespaces/default/elements/elem_nope", 404, "UnknownIdError"),
        ("/api/v1/namespaces/default/receipts/nope", 404, "UnknownIdError"),
        ("/api/v1/namespaces/default/sources?ids=evt_nope", 404, "UnknownIdError"),
        ("/api/v1/namespaces/default/nothing", 404, "NotFound"),
        ("/api/v1/elsewhere", 404, "NotFound"),
        ("/api/v1/namespaces/default/events?limit=0", 400, "InvalidInputError"),
        ("/api/v1/namespaces/default/events?limit=x", 400, "InvalidInputError"),
        ("/api/v1/namespaces/default/log?after=-1", 400, "InvalidInputError"),
        ("/api/v1/namespaces/default/state?at=1&kind=weird", 400, "InvalidInputError"),
        ("/api/v1/namespaces/default/elements/elem_x?at=not-a-time", 404, "UnknownIdError"),
        ("/api/v1/namespaces/default/sources", 400, "InvalidInputError"),
    ],
)
def test_errors_are_typed_json(server: UiServer, path: str, status: int, kind: str) -> None:
    answer = server.request(path)
    assert answer.status == status and answer.headers["content-type"] == "application/json"
    assert answer.json["error"]["type"] == kind and answer.json["error"]["message"]


def test_unknown_namespace_is_not_told_apart_from_an_unserved_one(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    for name in ("seen", "hidden"):
        with StrataGate.open(path, name) as memory:
            memory.append_turn("hello", "hi")
    with running(UiServer(path, "--namespace", "seen")) as server:
        assert [n["namespace"] for n in server.get("/namespaces")["items"]] == ["seen"]
        hidden = server.request("/api/v1/namespaces/hidden/events")
        missing = server.request("/api/v1/namespaces/missing/events")
        assert hidden.status == missing.status == 404
        assert hidden.json["error"]["message"].replace("hidden", "X") == missing.json["error"][
            "message"
        ].replace("missing", "X")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_only_get(server: UiServer, method: str) -> None:
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/default/events", "/"):
        answer = server.request(path, method=method)
        assert answer.status == 405 and answer.json["error"]["type"] == "MethodNotAllowed"
        assert "GET" in answer.headers["allow"]


def test_planted_secrets_never_leave_the_server(server: UiServer) -> None:
    bodies = [
        server.request(path).body
        for path in (
            "/api/v1/namespaces/default/blocks?thread=ops",
            "/api/v1/namespaces/default/sources?ids="
            + ",".join(
                b["id"] for b in server.get("/namespaces/default/blocks", thread="ops")["items"]
            ),
            "/api/v1/namespaces/default/sources?q=deploy",
            "/api/v1/namespaces/default/log?limit=500",
            "/api/v1/namespaces/default/state?kind=blocks&limit=500",
        )
    ]
    for body in bodies:
        assert SECRET_KEY.encode() not in body and SECRET_TOKEN.encode() not in body
    assert all(b"[redacted:" in body for body in bodies)
    ops = ",".join(b["id"] for b in server.get("/namespaces/default/blocks", thread="ops")["items"])
    said = [
        m
        for i in server.get("/namespaces/default/sources", ids=ops)["items"]
        for m in i["messages"]
    ]
    message = next(m for m in said if m["tool_calls"])
    assert "[redacted:bearer]" in message["tool_calls"][0]["result"]["headers"]
    user = next(m for m in said if "Deploy" in m["content"])
    assert "[redacted:" in user["content"] and "then check pnpm" in user["content"]


def test_security_headers_and_no_cors(server: UiServer) -> None:
    for path in ("/", "/static/app.js", "/api/v1/namespaces"):
        answer = server.request(path, headers={"Origin": server.url})
        assert answer.status == 200
        assert "default-src 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert not any(h.lower().startswith("access-control-") for h in answer.headers)
    assert server.request("/static/nothing.js").status == 404


def test_host_and_origin_checks(server: UiServer) -> None:
    rebound = server.request("/api/v1/namespaces", headers={"Host": "evil.example:8766"})
    assert rebound.status == 421
    assert server.request("/", headers={"Host": "evil.example"}).status == 421
    foreign = server.request("/api/v1/namespaces", headers={"Origin": "http://evil.example"})
    assert foreign.status == 403
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}"):
        assert server.request("/api/v1/namespaces", headers={"Host": host}).status == 200


def test_token_guards_the_api_not_the_page(database: tuple[Path, dict[str, Any]]) -> None:
    with running(UiServer(database[0], token="ui-secret-token")) as server:
        assert server.request("/api/v1/namespaces", token="").status == 401
        assert server.request("/api/v1/namespaces", token="wrong-token").status == 401
        assert server.request("/api/v1/namespaces").status == 200
        assert server.request("/", token="").status == 200
        assert server.request("/static/app.js", token="").status == 200


def test_reads_follow_another_processes_appends(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    with StrataGate.open(path, "default") as memory:
        memory.append_turn("We picked pnpm.", "Noted.")
    with running(UiServer(path)) as server:
        assert server.get("/namespaces/default")["turns"] == 1
        code = (
            "from stratagate import StrataGate\n"
            f"with StrataGate.open({str(path)!r}, 'default', **{OFFLINE!r}) as m:\n"
            "    m.append_turn('Zanzibar is the codename.', 'Got it.')\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, cwd=WORKTREE, timeout=120)
        assert server.get("/namespaces/default")["turns"] == 2
        hits = server.get("/namespaces/default/sources", q="Zanzibar")["items"]
        assert hits and "Zanzibar" in hits[0]["message"]["content"]
        assert server.get("/namespaces/default/state")["stats"]["turns"] == 2


def test_an_erasure_elsewhere_reaches_the_page(tmp_path: Path) -> None:
    path = tmp_path / "erased.db"
    with StrataGate.open(path, "default", block_turn_size=1) as memory:
        memory.append_turn("The vault code is Zanzibar.", "Noted.", thread_id="secret")
        memory.append_turn("Something else.", "Sure.", thread_id="kept")
        head = memory.history()[-1].position
    with running(UiServer(path)) as server:
        assert server.get("/namespaces/default/sources", q="Zanzibar")["items"]
        assert "Zanzibar" in str(server.get("/namespaces/default/state", at=head, kind="blocks"))
        with StrataGate.open(path, "default") as memory:
            memory.erase_thread("secret", reason="test")
        assert not server.get("/namespaces/default/sources", q="Zanzibar")["items"]
        past = server.get("/namespaces/default/state", at=head, kind="blocks")
        assert "Zanzibar" not in str(past) and "[erased]" in str(past)
        body = server.request("/api/v1/namespaces/default/log?limit=500").body
        assert b"Zanzibar" not in body and b"[erased]" in body


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stratagate", "ui", *args],
        capture_output=True,
        text=True,
        cwd=WORKTREE,
        timeout=60,
    )


def test_cli_refuses_what_it_cannot_serve(
    tmp_path: Path, database: tuple[Path, dict[str, Any]]
) -> None:
    missing = run_cli("--database", str(tmp_path / "none.db"))
    assert missing.returncode == 3 and missing.stderr.count("\n") == 1
    open_bind = run_cli("--database", str(database[0]), "--host", "0.0.0.0")
    assert open_bind.returncode == 2 and "token" in open_bind.stderr
    unknown = run_cli("--database", str(database[0]), "--namespace", "nope")
    assert unknown.returncode == 3 and "nope" in unknown.stderr
    for result in (missing, open_bind, unknown):
        assert result.stderr.startswith("stratagate: error: ") and "Traceback" not in result.stderr


def test_the_ui_beside_the_mcp_server(tmp_path: Path) -> None:
    """``serve --transport http --ui``: one server, MCP at /mcp and the UI beside it, under one
    token; the UI sees what an agent appends through MCP."""
    import anyio

    from tests.support.mcp_client import HttpServer, call
    from tests.support.mcp_client import running as serving

    path = tmp_path / "served.db"
    with serving(HttpServer(path, "--ui", token="served-token")) as mcp:
        ui = UiServer(path, token="served-token")
        ui.port = mcp.port
        assert ui.request("/api/v1/namespaces", token="").status == 401
        assert ui.request("/api/v1/namespaces/default").status == 404  # no event logged yet
        assert ui.request("/").status == 200

        async def append() -> None:
            async with mcp.client() as client:
                await call(client, "append_turn", user="Zanzibar is the codename.", assistant="Ok.")

        anyio.run(append)
        assert ui.get("/namespaces/default")["turns"] == 1
        assert ui.get("/namespaces/default/sources", q="Zanzibar")["items"]
