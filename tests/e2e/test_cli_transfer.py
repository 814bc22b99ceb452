"""``stratagate export`` and ``stratagate import-log``: the migration path a shell user takes,
SQLite to SQLite and SQLite to PostgreSQL, with a forged line refused by number."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support.cli import cli_process, run, run_json, write_turns


@pytest.fixture
def ingested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    database = tmp_path / "source.db"
    turns = write_turns(tmp_path / "turns.jsonl")
    code, _, err = run(
        capsys, "ingest", "--models", "offline", str(turns), "--database", str(database), "--namespace", "work",
        "--block-turn-size", "4",
    )  # fmt: skip
    assert code == 0, err
    return database


def searches(capsys: pytest.CaptureFixture[str], database: str, namespace: str) -> list[object]:
    found = []
    for query, kind in (("pnpm", "events"), ("pnpm", "elements"), ("Heroku", "raw")):
        hits = run_json(
            capsys, "search", query, "--kind", kind, "--database", database,
            "--namespace", namespace,
        )  # fmt: skip
        found.append(hits)
    return found


def test_export_then_import_into_sqlite(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "work.jsonl"
    code, text, err = run(
        capsys, "export", "--database", str(ingested), "--namespace", "work", "--output", str(out)
    )
    assert code == 0 and "exported" in text and "in clear" in text
    assert "warning" in err and "STRATAGATE_MASTER_KEY" in err  # loud about bare keys
    copy = tmp_path / "copy.db"
    code, text, err = run(capsys, "import-log", str(out), "--database", str(copy))
    assert code == 0, err
    assert "exact: positions and hashes kept" in text and "verify    ok" in text
    before = searches(capsys, str(ingested), "work")
    after = searches(capsys, str(copy), "work")
    assert [_ids(hits) for hits in after] == [_ids(hits) for hits in before]
    report = run_json(capsys, "import-log", str(out), "--database", str(tmp_path / "renamed.db"),
                      "--namespace", "moved")  # fmt: skip
    assert report["import"]["positions_kept"] is False and report["verify"]["ok"] is True


def _ids(found: object) -> list[tuple[object, object]]:
    """The hits of a ``search --json`` document (its batch id is new on every search)."""
    assert isinstance(found, dict) and found["hits"]
    return [(hit["id"], hit["score"]) for hit in found["hits"]]


def test_a_forged_line_is_refused_by_the_command(ingested: Path, tmp_path: Path) -> None:
    out = tmp_path / "work.jsonl"
    assert cli_process(
        "export", "--database", str(ingested), "--namespace", "work", "--output", str(out),
        cwd=tmp_path,
    ).returncode == 0  # fmt: skip
    lines = out.read_bytes().splitlines()
    number = len(lines) - 3
    row = orjson.loads(lines[number - 1])
    row["event_type"] = "TurnAppended" if row["event_type"] != "TurnAppended" else "BlockSealed"
    lines[number - 1] = orjson.dumps(row)
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(b"\n".join(lines) + b"\n")
    target = tmp_path / "target.db"
    done = cli_process("import-log", str(forged), "--database", str(target), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"line {number} of" in done.stderr and "nothing was imported" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert (
        cli_process("namespaces", "--database", str(target), "--json", cwd=tmp_path).stdout.count(
            "work"
        )
        == 0
    )


@pytest.mark.postgres
def test_export_then_import_into_postgres(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_schema_url: str
) -> None:
    out = tmp_path / "work.jsonl"
    code, _, err = run(
        capsys, "export", "--database", str(ingested), "--namespace", "work", "--output", str(out)
    )
    assert code == 0, err
    report = run_json(capsys, "import-log", str(out), "--database", postgres_schema_url)
    assert report["import"]["positions_kept"] is True and report["verify"]["ok"] is True
    before = searches(capsys, str(ingested), "work")
    after = searches(capsys, postgres_schema_url, "work")
    assert [_ids(hits) for hits in after] == [_ids(hits) for hits in before]
    code, text, _ = run(capsys, "verify", "--database", postgres_schema_url, "--namespace", "work")
    assert code == 0 and text.startswith("ok")
