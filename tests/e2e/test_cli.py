"""The ``stratagate`` command line, end to end on real SQLite files.

Most tests call ``main([...])`` in this process (fast; output read with capsys); a few run
``python -m stratagate`` as a real subprocess to check exit statuses and stderr as a shell sees
them, and the demo from a temporary working directory.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
from pathlib import Path
from typing import Any

import pytest

from stratagate import StrataGate
from stratagate.cli.app import build_parser, main
from tests.support.chat_server import ChatServer, error
from tests.support.cli import (
    ALPHA,
    LOCOMO,
    cli_process,
    copy_db,
    db_rows,
    jsonl_lines,
    quiet_main,
    run,
    run_json,
    unwrap,
    write_turns,
)


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with the 16 test turns in namespace ``default`` (blocks of 4 turns)."""
    root = tmp_path_factory.mktemp("cli")
    database = root / "memory.db"
    turns = write_turns(root / "turns.jsonl")
    assert (
        quiet_main(
            "ingest",
            "--models",
            "offline",
            str(turns),
            "--database",
            str(database),
            "--block-turn-size",
            "4",
        )
        == 0
    )
    return database


@pytest.fixture
def db(shared_db: Path) -> list[str]:
    return ["--database", str(shared_db)]


# -- options and help ------------------------------------------------------------------------


def subcommand_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones (``hook install``) included."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {k}": v for k, v in subcommand_parsers(sub).items()})
    return found


def test_version_is_the_installed_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"stratagate {importlib.metadata.version('stratagate')}\n"


def test_every_argument_says_what_it_is_and_its_default() -> None:
    for name, sub in subcommand_parsers(build_parser()).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = (name, action.dest)
            assert action.help and action.help.strip(), f"no help: {where}"
            if action.default not in (None, False):
                assert "%(default)s" in action.help, f"default not shown: {where}"
        assert "%(default)s" not in sub.format_help()  # every placeholder was filled in


def test_database_and_namespace_default_to_the_environment(
    shared_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATAGATE_DATABASE", str(shared_db))
    monkeypatch.setenv("STRATAGATE_NAMESPACE", "default")
    assert run_json(capsys, "stats")["turns"] == 16
    monkeypatch.setenv("STRATAGATE_NAMESPACE", "elsewhere")
    code, _, err = run(capsys, "stats")
    assert code == 3 and "unknown namespace 'elsewhere'" in err
    assert run_json(capsys, "stats", "--namespace", "default")["turns"] == 16  # flags win
    help_text = subcommand_parsers(build_parser())["stats"].format_help()
    assert str(shared_db) in help_text and "STRATAGATE_DATABASE" in help_text
    demo = subcommand_parsers(build_parser())["demo"].parse_args([])
    assert demo.database == "stratagate-demo.db"  # --fresh deletes it: never the user's database


# -- ingest ----------------------------------------------------------------------------------


def test_ingest_jsonl_is_resumable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns = write_turns(tmp_path / "turns.jsonl")
    database = ["--database", str(tmp_path / "m.db"), "--block-turn-size", "4"]

    first = run_json(capsys, "ingest", "--models", "offline", str(turns), *database, "--limit", "5")
    [file] = first["files"]
    assert (file["kind"], file["namespace"], file["file"]) == ("jsonl", "default", str(turns))
    assert first["turns"] == file["turns"] == {"total": 5, "appended": 5, "skipped": 0}

    code, out, _ = run(capsys, "ingest", "--models", "offline", str(turns), *database)
    assert code == 0
    assert "11 appended, 5 skipped (already in), 16 in all" in out
    header, row = out.splitlines()[1:3]
    assert header.split() == [
        "NAMESPACE", "TURNS", "APPENDED", "SKIPPED", "BLOCKS", "EVENTS", "ELEMENTS", "REVISION",
        "FILE",
    ]  # fmt: skip
    assert row.split()[:6] == ["default", "16", "11", "5", "4", "(+3)"]

    revision = run_json(capsys, "stats", "--database", str(tmp_path / "m.db"))["revision"]
    [again] = run_json(capsys, "ingest", "--models", "offline", str(turns), *database)["files"]
    assert again["turns"] == {"total": 16, "appended": 0, "skipped": 16}
    assert again["revision"] == {"before": revision, "after": revision}

    appended = run_json(
        capsys, "history", "--database", str(tmp_path / "m.db"), "--type", "TurnAppended"
    )
    receipts = [record["data"]["receipt_id"] for record in appended]
    assert receipts[:3] == ["alpha-1", "turns.jsonl:2", "alpha-3"]  # file name + line number
    assert len(set(receipts)) == 16


def test_ingest_locomo_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = ["--database", str(tmp_path / "l.db")]
    [report] = run_json(
        capsys, "ingest", "--models", "offline", str(LOCOMO), *database, "--limit", "40"
    )["files"]
    assert report["kind"] == "locomo"
    assert report["turns"] == {"total": 40, "appended": 40, "skipped": 0}
    assert report["blocks"]["added"] == 3 and report["events"]["total"] > 0

    [again] = run_json(
        capsys, "ingest", "--models", "offline", str(LOCOMO), *database, "--limit", "40"
    )["files"]
    assert again["turns"] == {"total": 40, "appended": 0, "skipped": 40}
    assert again["revision"]["after"] == report["revision"]["after"]

    turns = run_json(capsys, "history", *database, "--type", "TurnAppended", "--limit", "2")
    assert [t["data"]["receipt_id"] for t in turns] == ["conv-26:D1:1", "conv-26:D1:3"]
    assert {t["data"]["thread_id"] for t in turns} == {"conv-26"}
    assert turns[0]["data"]["messages"][0]["id"] == "conv-26:D1:1"

    forced = run_json(
        capsys,
        "ingest",
        str(LOCOMO),
        *database,
        "--limit",
        "2",
        "--thread",
        "t",
        "--namespace",
        "b",
    )
    assert forced["turns"]["appended"] == 2
    threads = run_json(capsys, "history", *database, "--namespace", "b", "--type", "TurnAppended")
    assert {t["data"]["thread_id"] for t in threads} == {"t"}


def test_ingest_with_no_models_extracts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = write_turns(tmp_path / "turns.jsonl")
    database = ["--database", str(tmp_path / "n.db")]
    [report] = run_json(
        capsys, "ingest", "--models", "offline", str(turns), *database, "--models", "none"
    )["files"]
    assert report["blocks"]["total"] == 1  # alpha's 12 turns; beta's 4 stay in the open tail
    assert report["events"]["total"] == 0 and report["elements"]["total"] == 0


def test_model_failure_exits_5_and_a_rerun_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = write_turns(tmp_path / "turns.jsonl")
    database = ["--database", str(tmp_path / "f.db")]
    with ChatServer(fallback=error(400, "no such model")) as server:
        monkeypatch.setenv("STRATAGATE_MODEL_BASE_URL", server.url)
        monkeypatch.setenv("STRATAGATE_MODEL", "test-model")
        code, _, err = run(
            capsys,
            "ingest",
            "--models",
            "offline",
            str(turns),
            *database,
            "--models",
            "openai",
            "--block-turn-size",
            "1",
        )
    assert code == 5 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(
        "stratagate: error: turns.jsonl line 1 to turns.jsonl line 16: model call failed after "
        "these turns were stored"
    )
    assert run_json(capsys, "stats", *database)["turns"] == 16  # the turns are durable

    [resumed] = run_json(
        capsys,
        "ingest",
        "--models",
        "offline",
        str(turns),
        *database,
        "--models",
        "none",
        "--limit",
        "1",
    )["files"]
    assert resumed["turns"]["skipped"] == 1
    assert resumed["blocks"]["total"] == 16  # the failed seals were retried


def test_openai_models_need_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("STRATAGATE_MODEL_BASE_URL", "OPENAI_BASE_URL", "STRATAGATE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    turns = write_turns(tmp_path / "turns.jsonl")
    code, _, err = run(
        capsys,
        "ingest",
        "--models",
        "offline",
        str(turns),
        "--database",
        str(tmp_path / "o.db"),
        "--models",
        "openai",
    )
    assert code == 2 and "model base URL missing" in err
    assert not (tmp_path / "o.db").exists()


# -- looking ---------------------------------------------------------------------------------


def test_search_every_kind(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "pnpm", *db)
    assert code == 0
    assert out.splitlines()[0].split() == ["SCORE", "EVENT", "TITLE"]
    assert "Let's switch to pnpm then" in out and "hit(s) · logged as retrieval batch" in out
    assert all(len(line) <= 100 for line in out.splitlines())

    events = run_json(capsys, "search", "pnpm", *db, "--limit", "1")
    assert events["kind"] == "events" and events["batch_id"].startswith("batch")
    [hit] = events["hits"]
    assert "pnpm" in hit["event"]["title"] and hit["event"]["source_message_ids"]
    assert hit["event"]["id"] in out

    facts = run_json(capsys, "search", "Heroku", *db, "--kind", "elements")
    assert facts["hits"] and {"element_id", "name", "fact", "score"} <= set(facts["hits"][0])

    raw = run_json(capsys, "search", "job post", *db, "--kind", "raw", "--thread", "beta")
    assert raw["hits"] and {h["thread_id"] for h in raw["hits"]} == {"beta"}
    assert "job post" in raw["hits"][0]["message"]["content"].lower()

    code, out, _ = run(capsys, "search", "zzzqqq", *db)
    assert code == 0 and out.startswith("no events match")


def test_context_prints_recall_text(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "context", "beta next week", *db, "--thread", "alpha")
    assert code == 0 and "Plan: ship the beta next week" in out and "of 900 tokens" in out
    packed = run_json(capsys, "context", "beta", *db, "--max-events", "1", "--budget", "300")
    assert packed["token_budget"] == 300 and len(packed["events"]) <= 1
    assert packed["text"] and packed["tokens"] <= 300


def test_expand_event_shows_its_source_messages(
    db: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    [hit] = run_json(capsys, "search", "pnpm", *db, "--limit", "1")["hits"]
    event_id = hit["event"]["id"]
    code, out, _ = run(capsys, "expand", "event", event_id, *db)
    assert code == 0
    assert f"event {event_id}" in out and "source messages (1):" in out
    assert hit["event"]["source_message_ids"][0] in out
    assert "npm installs are too slow on CI" in out  # the cited message itself
    expanded = run_json(capsys, "expand", "event", event_id, *db)
    assert expanded["source_block"]["id"] == hit["event"]["source_block_id"]
    assert [m["id"] for m in expanded["source_messages"]] == hit["event"]["source_message_ids"]


def test_expand_element_now_and_as_of(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    hits = run_json(capsys, "search", "Heroku", *db, "--kind", "elements")["hits"]
    project = next(h for h in hits if h["name"] == "Tidepool")
    now = run_json(capsys, "expand", "element", project["element_id"], *db)
    assert now["current_state"] and now["facts"]
    before = run_json(capsys, "expand", "element", project["element_id"], *db, "--at", "2026-04-01")
    assert before["facts"] == [] and before["current_state"] == {}
    code, out, _ = run(capsys, "expand", "element", project["element_id"], *db)
    assert code == 0 and "Tidepool (project)" in out
    assert "STATUS" in out and "since 2026-05-0" in out


def test_expand_block_lifts_its_level(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    [block] = run_json(capsys, "replay", "--until", "20", *db)["blocks"][:1]
    lowered = run_json(capsys, "expand", "block", block["id"], *db, "--level", "1")
    assert lowered["context"]["level"] == 1 and lowered["block"]["last_lift_source"] == "user"
    lifted = run_json(capsys, "expand", "block", block["id"], *db)
    assert lifted["context"]["level"] == 2  # "next": one level more detailed
    code, out, _ = run(capsys, "expand", "block", block["id"], *db, "--level", "L5")
    assert code == 0 and "L5 raw" in out and ALPHA[0][0] in out


def test_history_filters(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "history", *db, "--limit", "3")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["POSITION", "STREAM", "TYPE", "GIST"]
    assert len(lines) == 4 and "TurnAppended" in lines[2] and "Tidepool" in lines[2]
    sealed = run_json(capsys, "history", *db, "--type", "BlockSealed")
    assert sealed and {r["type"] for r in sealed} == {"BlockSealed"}
    later = run_json(capsys, "history", *db, "--since", str(sealed[0]["position"]), "--limit", "2")
    assert [r["position"] for r in later] == [sealed[0]["position"] + 1, sealed[0]["position"] + 2]


def test_replay_shows_the_past(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    appended = run_json(capsys, "history", *db, "--type", "TurnAppended")
    sixth = appended[5]["position"]
    past = run_json(capsys, "replay", "--until", str(sixth), *db)
    # ingest appends a chunk of turns in one commit before it seals any block
    assert past["stats"]["turns"] == 6 and past["stats"]["blocks"] == 0
    first_seal = run_json(capsys, "history", *db, "--type", "BlockSealed")[0]["position"]
    sealed = run_json(capsys, "replay", "--until", str(first_seal), *db)
    assert sealed["stats"]["blocks"] == 1
    assert sealed["events"] == []  # block 1 waits for block 2 before it is extracted
    now = run_json(capsys, "stats", *db)
    assert now["turns"] == 16 and now["events"] > 0
    code, out, _ = run(capsys, "replay", "--until", str(sixth), *db)
    assert code == 0 and f"as of global position {sixth}" in out and "6 turns · 0 blocks" in out


def test_stats_and_namespaces(db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    stats = run_json(capsys, "stats", *db)
    assert (stats["namespace"], stats["turns"], stats["threads"]) == ("default", 16, 2)
    code, out, _ = run(capsys, "stats", *db)
    assert code == 0 and f"revision           {stats['revision']}" in out
    found = run_json(capsys, "namespaces", *db)
    assert [n["namespace"] for n in found] == ["default"]
    assert found[0]["revision"] >= stats["revision"]


def test_history_of_an_unknown_type_names_the_known_ones(
    db: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "history", *db, "--type", "Nope")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "unknown event type 'Nope'" in err and "TurnAppended" in err and "BlockSealed" in err


def test_an_empty_query_is_an_input_error(
    db: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    revision = run_json(capsys, "stats", *db)["revision"]
    for query in ("", "   ", "?!"):
        for kind in ("events", "elements", "raw"):
            code, out, err = run(capsys, "search", query, *db, "--kind", kind)
            assert (code, out) == (2, ""), (query, kind, out)
            assert err.startswith("stratagate: error: ") and "no words to search for" in err
    assert run_json(capsys, "stats", *db)["revision"] == revision  # no batch was logged


def test_a_past_element_state_is_not_labelled_now(
    db: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    hits = run_json(capsys, "search", "Heroku", *db, "--kind", "elements")["hits"]
    project = next(h for h in hits if h["name"] == "Tidepool")["element_id"]
    code, out, _ = run(capsys, "expand", "element", project, *db, "--at", "2026-05-05")
    assert code == 0 and "as of 2026-05-05" in out
    assert "package_manager: npm" in out and " now " not in out
    assert "  then     package_manager: npm" in out
    code, out, _ = run(capsys, "expand", "element", project, *db)
    assert "  now      package_manager: pnpm" in out


def test_event_hits_explain_their_weight(
    shared_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = copy_db(shared_db, tmp_path / "weights.db")
    db = ["--database", str(database)]
    code, out, _ = run(capsys, "search", "pnpm", *db)
    details = [line for line in out.splitlines() if "weight" in line]
    assert code == 0 and details
    assert all(
        re.search(r"weight \d\.\d\d \(never used, created \d+ turns ago\)", d) for d in details
    )
    [hit] = run_json(capsys, "search", "pnpm", *db, "--limit", "1")["hits"]
    with StrataGate.open(database, "default") as memory:
        memory.record_memory_use(event_ids=[hit["id"]], receipt_id="answer-1")
        memory.pin_event(hit["id"])
    code, out, _ = run(capsys, "search", "pnpm", *db, "--limit", "1")
    assert "weight 1.00 (pinned, used 1×)" in out


# -- verify ----------------------------------------------------------------------------------


def test_verify_names_the_first_bad_position(
    shared_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = copy_db(shared_db, tmp_path / "copy.db")
    code, out, _ = run(capsys, "verify", "--database", str(database))
    revision = db_rows(database, "SELECT count(*) FROM stratagate_events")[0][0]
    assert (code, out) == (0, f"ok ({revision} events, chain and replay verified)\n")

    [(position, payload)] = db_rows(
        database,
        "SELECT global_position, payload FROM stratagate_events "
        "WHERE event_type = 'TurnAppended' ORDER BY global_position LIMIT 1 OFFSET 2",
    )
    edited = payload.replace('"thread_turn":3', '"thread_turn":4')  # content is sealed; ids not
    assert edited != payload
    db_rows(
        database,
        "UPDATE stratagate_events SET payload = ? WHERE global_position = ?",
        edited,
        position,
    )
    code, out, _ = run(capsys, "verify", "--database", str(database))
    assert code == 1 and f"FAILED at global position {position}" in out
    report = unwrap(run(capsys, "verify", "--database", str(database), "--json")[1], "verify")
    assert (report["ok"], report["first_bad_position"]) == (False, position)


def test_verify_survives_an_unreadable_payload(
    shared_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = copy_db(shared_db, tmp_path / "garbled.db")
    last = db_rows(database, "SELECT max(global_position) FROM stratagate_events")[0][0]
    db_rows(database, "UPDATE stratagate_events SET payload = 'x' WHERE global_position = ?", last)
    db_rows(database, "DELETE FROM stratagate_snapshots")  # opening must replay the bad row
    code, out, err = run(capsys, "verify", "--database", str(database))
    assert code == 1 and f"FAILED at global position {last}" in out and err == ""


# -- user errors -----------------------------------------------------------------------------


def error_cases(tmp: Path, database: Path) -> list[tuple[list[str], int, str]]:
    bad = tmp / "bad.jsonl"
    bad.write_text('{"user": "a", "assistant": "b"}\n\n{"user": "c", "assistant": \n')
    typo = tmp / "typo.jsonl"
    typo.write_text('{"user": "a", "asistant": "b"}\n')
    db = ["--database", str(database)]
    return [
        (
            [
                "ingest",
                "--models",
                "offline",
                str(tmp / "missing.jsonl"),
                "--database",
                str(tmp / "x.db"),
            ],
            2,
            "cannot read",
        ),
        (
            ["ingest", "--models", "offline", str(bad), "--database", str(tmp / "x.db")],
            2,
            "bad.jsonl line 3: not valid JSON",
        ),
        (
            ["ingest", "--models", "offline", str(typo), "--database", str(tmp / "x.db")],
            2,
            "typo.jsonl line 1: unknown field",
        ),
        (["expand", "event", "evt_nope", *db], 3, "unknown event id 'evt_nope'"),
        (["expand", "element", "elem_nope", *db], 3, "unknown element id"),
        (["expand", "block", "blk_nope", *db], 3, "unknown block id"),
        (["expand", "event", "evt_nope", "--level", "2", *db], 2, "--level applies to blocks"),
        (["search", "x", *db, "--namespace", "nobody"], 3, "unknown namespace 'nobody'"),
        (["history", *db, "--namespace", "nobody"], 3, "stratagate namespaces"),
        (["stats", "--database", str(tmp / "absent.db")], 3, "no database at"),
        (["replay", "--until", "999999", *db], 2, "past the end of the log"),
        (["stats", "--database", "postgresql://postgres@127.0.0.1:1/test"], 4, "failed"),
        (["demo", "--database", "sqlite:///x.db", "--fresh"], 2, "--fresh deletes a SQLite file"),
    ]


def test_user_errors_are_one_line_with_their_exit_status(
    shared_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, status, message in error_cases(tmp_path, shared_db):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (status, ""), (argv, err)
        assert err.startswith("stratagate: error: ") and err.count("\n") == 1, (argv, err)
        assert message in err, (argv, err)
    assert not (tmp_path / "x.db").exists()  # a malformed file appends (and creates) nothing
    assert not (tmp_path / "absent.db").exists()  # looking never creates a database


def test_errors_in_a_real_process(shared_db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    ingest = cli_process("ingest", "--models", "offline", str(bad), cwd=tmp_path)
    assert ingest.returncode == 2 and "Traceback" not in ingest.stderr
    assert ingest.stderr == "stratagate: error: bad.jsonl line 1: missing user and assistant\n"
    unknown = cli_process("expand", "event", "evt_x", "--database", str(shared_db), cwd=tmp_path)
    assert (unknown.returncode, unknown.stdout) == (3, "")
    usage = cli_process("search", cwd=tmp_path)
    assert usage.returncode == 2 and "usage: stratagate search" in usage.stderr
    helped = cli_process("--help", cwd=tmp_path)
    assert helped.returncode == 0 and "5  model error" in helped.stdout


# -- demo ------------------------------------------------------------------------------------


def check_demo_output(out: str) -> None:
    """What every demo run shows, within 100 columns."""
    for heading in (
        "== Ingest ==",
        "== 1. Blocks at their decayed levels ==",
        "== 2. Events: when it happened, when it was said, where it came from ==",
        "== 3. Elements: current state and fact history ==",
        "== 4. One retrieval, end to end ==",
    ):
        assert heading in out
    assert "thread field-notes: 7 block(s)" in out and "thread hiring: 1 block(s)" in out
    waiting = [line for line in out.splitlines() if line.endswith("  not extracted yet")]
    assert len(waiting) == 2  # each thread's last block
    assert "happened 2026-03-09 → 2026-03-15 (range, relative" in out
    superseded = [line for line in out.splitlines() if line.strip().startswith("superseded  20")]
    assert superseded and all("→" in line for line in superseded)
    elements = out.split("== 3.")[1].split("== 4.")[0]
    assert "Lin Wei (person)" in elements and "package_manager: pnpm" in elements
    assert "user (person)" not in elements and "assistant (person)" not in elements
    links = [line for line in elements.splitlines() if "participated_in" in line]
    assert links and not any("evt_" in line for line in links)  # events shown by their titles
    retrieval = out.split("== 4.")[1]
    assert "pnpm" in retrieval and "source messages (1):" in retrieval
    assert "chain and replay verified" in retrieval
    assert all(len(line) <= 100 for line in out.splitlines())


@pytest.mark.slow
def test_demo_end_to_end_then_again_in_a_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "stratagate-demo.db"
    database.write_text("not a database")  # --fresh must delete it (and its WAL) first
    Path(f"{database}-wal").write_text("junk")
    stale = tmp_path / "stratagate-demo.db.snapshots" / "stale"  # and its snapshot files
    stale.parent.mkdir()
    stale.write_text("an earlier database's snapshot")
    monkeypatch.chdir(tmp_path)
    code, first, _ = run(capsys, "demo", "--fresh")
    assert code == 0 and "96 appended, 0 skipped" in first
    assert not stale.exists()
    check_demo_output(first)
    count_turns = "SELECT count(*) FROM stratagate_events WHERE event_type = 'TurnAppended'"
    assert db_rows(database, count_turns) == [(96,)]

    again = cli_process("demo", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 appended, 96 skipped (already in)" in again.stdout
    check_demo_output(again.stdout)
    assert db_rows(database, count_turns) == [(96,)]


def test_looking_during_an_ingest_leaves_it_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Commands run while an ingest's seal waits for the model (its claim in the log): every
    command answers — those that append (a search logs its batch) write beside the ingest —
    and none marks the running seal interrupted."""
    from stratagate import StrataGate

    database = str(tmp_path / "busy.db")
    db = ["--database", database]
    outcomes: dict[str, tuple[int, str, str]] = {}

    def summarizer(messages: list[Any]) -> dict[str, Any]:
        if not outcomes:
            turns = run_json(capsys, "history", *db, "--type", "TurnAppended")
            for name, argv in (
                ("stats", ["stats", *db, "--json"]),
                ("history", ["history", *db]),
                ("replay", ["replay", "--until", str(turns[0]["position"]), *db]),
                ("verify", ["verify", *db]),
                ("expand", ["expand", "element", "elem_nope", *db]),
                ("search", ["search", "note", *db, "--kind", "raw"]),
                ("context", ["context", "note", *db]),
                ("lift", ["expand", "block", "blk_nope", *db]),
            ):
                outcomes[name] = run(capsys, *argv)
        return {"l0_title": "notes", "l1_summary": "notes", "should_extract": False}

    with StrataGate.open(database, "default", block_turn_size=2, summarizer=summarizer) as memory:
        memory.append_turn("note one", "ok")
        result = memory.append_turn("note two", "ok")
    assert result.sealed_block is not None and result.sealed_block.l0_title == "notes"
    codes = {name: outcome[0] for name, outcome in outcomes.items()}
    assert codes == {
        "stats": 0,
        "history": 0,
        "replay": 0,
        "verify": 0,
        "expand": 3,  # the element is unknown
        "search": 0,
        "context": 0,
        "lift": 3,  # the block is unknown
    }
    assert unwrap(outcomes["stats"][1], "stats")["turns"] == 2
    assert "SealStarted" in outcomes["history"][1]
    assert outcomes["verify"][1].startswith("ok (")
    assert "note one" in outcomes["search"][1]
    assert "unknown block id 'blk_nope'" in outcomes["lift"][2]
    types = [record["type"] for record in run_json(capsys, "history", *db)]
    assert "SealFailed" not in types and types.count("BlockSealed") == 1
    assert types.count("RetrievalBatchRecorded") == 2  # the search's and the context's


def test_a_turn_rejected_by_the_memory_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = tmp_path / "dates.jsonl"
    good = {"user": "a", "assistant": "b"}
    turns.write_bytes(jsonl_lines(good, {**good, "created_at": "yesterday-ish"}))
    database = ["--database", str(tmp_path / "d.db")]
    code, _, err = run(capsys, "ingest", "--models", "offline", str(turns), *database)
    assert code == 2 and err.startswith("stratagate: error: dates.jsonl line 2: created_at")
    assert run_json(capsys, "stats", *database)["turns"] == 1  # the line before it stays in
