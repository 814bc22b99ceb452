"""What a new user meets first: the bundled sample as a file, and one default for models in the
library and the command line (none), said aloud where it matters."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stratagate import StrataGate
from stratagate.cli.app import build_parser, subcommand
from stratagate.cli.sample import sample_bytes
from tests.support.cli import cli_process, run, run_json

NOTICE = "models: none (the default, as in the library)"


def test_sample_writes_the_bundled_conversation(tmp_path: Path) -> None:
    done = cli_process("sample", "--output", "conversation.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == ""
    assert "wrote 96 turns (threads field-notes, hiring) to conversation.jsonl" in done.stderr
    written = (tmp_path / "conversation.jsonl").read_bytes()
    assert written == sample_bytes() and len(written.splitlines()) == 96
    piped = cli_process("sample", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout.encode() == written
    ingest = cli_process(
        "ingest", "conversation.jsonl", "--models", "offline", "--database", "m.db", cwd=tmp_path
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "96 appended" in ingest.stdout


def test_the_library_and_the_cli_share_one_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser()
    for name in ("ingest", "serve"):
        assert subcommand(parser, name).get_default("models") == "none"
    turns = tmp_path / "turns.jsonl"
    turns.write_bytes(sample_bytes())
    database = tmp_path / "cli.db"
    code, out, err = run(capsys, "ingest", str(turns), "--database", str(database), "--limit", "30")
    assert code == 0 and "models    none" in out.splitlines()
    assert NOTICE in err and "--models offline" in err  # loud, on stderr
    [report] = run_json(
        capsys, "ingest", str(turns), "--database", str(tmp_path / "j.db"), "--limit", "30"
    )["files"]
    assert report["events"]["total"] == 0 and report["blocks"]["total"] > 0
    with StrataGate.open(tmp_path / "lib.db", "default") as memory:  # the library, no options
        for line in sample_bytes().splitlines()[:30]:
            turn = orjson.loads(line)
            memory.append_turn(turn["user"], turn["assistant"], thread_id=turn["thread_id"])
        library = memory.stats()
    with StrataGate.open(database, "default", read_only=True) as memory:
        cli = memory.stats()
    assert (library.blocks, library.events, library.elements) == (cli.blocks, 0, 0)
    assert library.blocks > 0


def test_a_directory_ingest_shows_each_file_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Long paths are clipped at their start, so every FILE cell still ends with its name."""
    folder = tmp_path / ("a-rather-long-directory-name-" * 3) / "conversations"
    folder.mkdir(parents=True)
    for name in ("alpha", "beta", "gamma"):
        (folder / f"{name}.jsonl").write_bytes(sample_bytes().splitlines(keepends=True)[0])
    code, out, err = run(capsys, "ingest", str(folder), "--database", str(tmp_path / "d.db"))
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith(("alpha", "beta", "gamma"))]
    cells = [row.split()[-1] for row in rows]
    assert [cell.rsplit("/", 1)[-1] for cell in cells] == [
        "alpha.jsonl",
        "beta.jsonl",
        "gamma.jsonl",
    ]
    assert all(len(row) <= 100 for row in rows)


def test_every_json_output_has_one_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each subcommand that takes --json prints one document: format, command, result."""
    turns = tmp_path / "turns.jsonl"
    turns.write_bytes(b"".join(sample_bytes().splitlines(keepends=True)[:30]))
    db = ["--database", str(tmp_path / "m.db"), "--namespace", "default"]
    ingested = run(capsys, "ingest", str(turns), "--models", "offline", *db, "--json")
    with StrataGate.open(tmp_path / "m.db", "default", read_only=True) as memory:
        event = memory.list_events()[0].id
    argv = {
        "ingest": None,
        "search": ["search", "pnpm", *db],
        "context": ["context", "pnpm", *db],
        "expand": ["expand", "event", event, *db],
        "history": ["history", *db, "--limit", "2"],
        "verify": ["verify", *db],
        "checkpoint": ["checkpoint", *db],
        "replay": ["replay", "--until", "5", *db],
        "export": ["export", *db, "--output", str(tmp_path / "log.jsonl")],
        "import-log": [
            "import-log",
            str(tmp_path / "log.jsonl"),
            "--database",
            str(tmp_path / "c.db"),
        ],
        "stats": ["stats", *db],
        "namespaces": ["namespaces", "--database", str(tmp_path / "m.db")],
        "erase": ["erase", "event", event, *db, "--yes"],
    }
    parser = build_parser()
    with_json = {
        name
        for name in parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        if any("--json" in a.option_strings for a in subcommand(parser, name)._actions)
    }
    assert with_json == set(argv)  # a new command with --json needs its line here
    outputs = {"ingest": ingested}
    for name, args in argv.items():
        if args is not None:
            outputs[name] = run(capsys, *args, "--json")
    for name, (code, out, err) in outputs.items():
        assert code == 0, (name, err)
        document = orjson.loads(out)
        assert list(document) == ["format", "command", "result"], name
        assert document["format"] == "stratagate.cli.v1" and document["command"] == name
    assert isinstance(orjson.loads(outputs["history"][1])["result"], list)  # lists too
