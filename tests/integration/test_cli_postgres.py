"""The command line on a PostgreSQL URL: ingest, look, verify and list namespaces."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stratagate.cli.app import main
from tests.support.cli import unwrap

pytestmark = pytest.mark.postgres


def test_cli_on_a_postgres_url(
    postgres_schema_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = tmp_path / "t.jsonl"
    lines = [
        {"user": f"note {i}: we use pnpm", "assistant": "ok", "thread_id": "pg"} for i in range(5)
    ]
    turns.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    database = ["--database", postgres_schema_url, "--namespace", "pg"]

    assert main(["ingest", str(turns), *database, "--block-turn-size", "2", "--json"]) == 0
    report = unwrap(capsys.readouterr().out)
    assert report["turns"] == {"total": 5, "appended": 5, "skipped": 0}
    assert main(["ingest", str(turns), *database, "--json"]) == 0
    assert unwrap(capsys.readouterr().out)["turns"]["skipped"] == 5

    assert main(["search", "pnpm", *database, "--kind", "raw", "--json"]) == 0
    assert unwrap(capsys.readouterr().out)["hits"]
    assert main(["verify", *database]) == 0
    assert capsys.readouterr().out.startswith("ok (")
    assert main(["namespaces", "--database", postgres_schema_url, "--json"]) == 0
    assert [n["namespace"] for n in unwrap(capsys.readouterr().out)] == ["pg"]
